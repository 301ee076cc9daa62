"""The C++ side's diagnostics reach Python's logging: the "fgemm" logger gets FGEMM_JIT_DEBUG's messages (here
from a warm-up's compiling threads, which hold no GIL), and with no logging configured they still show on
standard error."""

import os
import subprocess
import sys

import fgemm


def test_jit_debug_messages_reach_the_fgemm_logger(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FGEMM_JIT_DEBUG", "1")
    with caplog.at_level("DEBUG", logger="fgemm"):
        kernels = fgemm.warmup([("fp8_gemm_nt", 256, 128)], (1, 64), load=False, threads=2)
    jit = [record.getMessage() for record in caplog.records if record.getMessage().startswith("fgemm jit: ")]
    # The JIT names each GEMM kernel by its entry point, one message of each kind per kernel compiled.
    assert sum("fgemm jit: cache miss for fgemm_sm90_fp8_gemm: " in message for message in jit) == len(kernels)
    assert sum(message.startswith("fgemm jit: compiled fgemm_sm90_fp8_gemm with ") for message in jit) == len(kernels)
    assert all(record.levelname == "DEBUG" and record.name == "fgemm" for record in caplog.records
               if record.getMessage().startswith("fgemm jit: "))


def test_a_handler_that_raises_does_not_stop_the_library(tmp_path, monkeypatch):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FGEMM_JIT_DEBUG", "1")

    def failing(level, message):
        raise RuntimeError("a broken handler")

    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    fgemm._C._set_log_handler(failing)
    try:
        kernels = fgemm.warmup([("fp8_gemm_nt", 256, 128)], (1, 8), load=False)
    finally:
        fgemm._logging.route_native_logs()
    assert kernels and all(kernel.compiled for kernel in kernels)
    # Each failure is reported as an exception Python could not raise, none escapes.
    assert unraisable and all(str(report.exc_value) == "a broken handler" for report in unraisable)


def test_with_no_logging_configured_the_messages_show_on_stderr(tmp_path):
    program = "import fgemm\nfgemm.warmup([('fp8_gemm_nt', 256, 128)], (1, 8), load=False)\n"
    env = dict(os.environ, FGEMM_CACHE_DIR=str(tmp_path), FGEMM_JIT_DEBUG="1")
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
    assert "fgemm jit: cache miss for fgemm_sm90_fp8_gemm: " in done.stderr
    quiet = subprocess.run([sys.executable, "-c", program], env=dict(env, FGEMM_JIT_DEBUG="0"),
                           capture_output=True, text=True, check=True)
    assert "fgemm jit:" not in quiet.stderr
