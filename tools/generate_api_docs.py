"""Writes docs/API.md, the reference of fgemm's Python API, from the signatures and docstrings of the installed
package: fgemm, fgemm.deep_gemm, fgemm.moe, fgemm.nn and the torch.ops.fgemm ops. With --check, writes nothing
and exits with status 1 if the file differs from what it would write (CI runs this through
tests/python/test_generated_files.py).

    python tools/generate_api_docs.py [--check]
"""

import inspect
import pathlib
import sys

import torch

import fgemm
import fgemm.deep_gemm
import fgemm.moe
import fgemm.nn
import fgemm.quantize
from generated_file import write_or_check

API_MD = pathlib.Path(__file__).resolve().parents[1] / "docs" / "API.md"

HEADER = """# Python API reference

Generated from the docstrings by `python tools/generate_api_docs.py`; do not edit by hand. The README
describes the semantics, the layouts and the errors in prose.
"""


def function_entry(qualified_name: str, function) -> str:
    """A heading, the signature and the docstring of one function."""
    name = qualified_name.rsplit(".", 1)[1]
    doc = inspect.getdoc(function) or ""
    return f"### `{qualified_name}`\n\n```python\n{name}{inspect.signature(function)}\n```\n\n{doc}\n"


def module_section(title: str, module, names, intro: str) -> str:
    """One entry per name of `module`; a name bound to another's function (an alias) is listed as such."""
    entries, seen = [], {}
    for name in names:
        function = getattr(module, name)
        if id(function) in seen:
            entries.append(f"### `{module.__name__}.{name}`\n\nThe same function as `{seen[id(function)]}`.\n")
            continue
        seen[id(function)] = name
        entries.append(function_entry(f"{module.__name__}.{name}", function))
    return f"## {title}\n\n{intro}\n\n" + "\n".join(entries)


def ops_section() -> str:
    """The schema of each torch.ops.fgemm op."""
    names = sorted(name for name in dir(torch.ops.fgemm) if not name.startswith("_") and
                   isinstance(getattr(torch.ops.fgemm, name), torch._ops.OpOverloadPacket))
    schemas = "\n".join(str(getattr(torch.ops.fgemm, name).default._schema) for name in names)
    return ("## `torch.ops.fgemm`\n\nThe operations as registered with torch.library, which the functions above "
            "call under torch.compile and for fake or meta tensors. `Tensor(a…!)` marks the tensor an op writes.\n\n"
            f"```\n{schemas}\n```\n")


def missing_section() -> str:
    module = fgemm.deep_gemm
    missing = sorted(set(module.__all__) - set(module.IMPLEMENTED) - {"install", "utils", "testing"})
    listed = ", ".join(f"`{name}`" for name in missing)
    return ("### DeepGEMM's functions that fgemm lacks\n\nEach raises NotImplementedError naming itself: "
            f"{listed}.\n")


def api_reference() -> str:
    deep_gemm = fgemm.deep_gemm
    sections = [
        HEADER,
        module_section("`fgemm`", fgemm, fgemm.__all__, "The package's names: DeepGEMM's, then fgemm's own."),
        module_section("`fgemm.quantize`", fgemm.quantize, ["per_token_dequantize", "per_block_dequantize"],
                       "The quantizers' inverses, beyond the names above."),
        module_section("`fgemm.deep_gemm`", deep_gemm, deep_gemm.IMPLEMENTED + ["install"],
                       "fgemm under DeepGEMM's names and arguments (`deep_gemm.utils` and `deep_gemm.testing` "
                       "hold the helpers of the same names)."),
        missing_section(),
        module_section("`fgemm.moe`", fgemm.moe, ["ExpertParallelMoE", "ReferenceMoE", "disable_multicast"],
                       "A mixture-of-experts layer with its experts sharded over a torch.distributed group "
                       "(docs/EXPERT_PARALLEL.md)."),
        module_section("`fgemm.nn`", fgemm.nn, fgemm.nn.__all__,
                       "FP8 training layers with autograd (docs/ARCHITECTURE.md, \"Training layers\")."),
        ops_section(),
    ]
    return "\n".join(sections)


def main(argv=None) -> int:
    return write_or_check(API_MD, api_reference(), __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
