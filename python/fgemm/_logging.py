"""The library's diagnostics on Python's logging: the "fgemm" logger receives what the C++ side reports
(FGEMM_JIT_DEBUG and FGEMM_PTXAS_VERBOSE at DEBUG, FGEMM_PRINT_CONFIGS at INFO, warnings at WARNING)."""

import atexit
import logging
import os

from . import _C

_logger = logging.getLogger("fgemm")
_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING)
# Asking for a diagnostic through one of these shows it, as before they went through logging.
_DIAGNOSTIC_FLAGS = ("FGEMM_JIT_DEBUG", "FGEMM_PRINT_CONFIGS", "FGEMM_PTXAS_VERBOSE", "FGEMM_DUMP_SASS")


def _handle(level: int, message: str) -> None:
    _logger.log(_LEVELS[level], message)


def _flag_set(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def route_native_logs() -> None:
    """Routes the C++ diagnostics to the "fgemm" logger. Where a diagnostic variable is set and the logger has
    no handler, one that writes the messages to standard error is added, so that they still show with no
    logging configured."""
    _C._set_log_handler(_handle)
    # Before the interpreter goes: the library must not call into Python afterwards.
    atexit.register(_C._set_log_handler, None)
    if any(_flag_set(name) for name in _DIAGNOSTIC_FLAGS) and not _logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        _logger.addHandler(handler)
        _logger.setLevel(logging.DEBUG)
