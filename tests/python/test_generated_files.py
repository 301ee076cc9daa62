"""The typed API: the extension's stub and docs/API.md are what their generators write from the installed
package, the package carries py.typed, and every public function has a signature inspect can read."""

import inspect
import pathlib
import re
import subprocess
import sys

import pytest

import fgemm
import fgemm.deep_gemm

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["generate_stubs.py", "generate_api_docs.py"])
def test_generated_file_is_up_to_date(script):
    result = subprocess.run([sys.executable, str(ROOT / "tools" / script), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_stub_covers_every_function_of_the_extension():
    stub = (ROOT / "python" / "fgemm" / "_C.pyi").read_text()
    functions = [name for name, value in vars(fgemm._C).items() if callable(value) and not name.startswith("__")]
    assert functions and all(f"def {name}(" in stub for name in functions)


def test_the_package_is_marked_as_typed():
    assert (pathlib.Path(fgemm.__file__).parent / "py.typed").exists()


@pytest.mark.parametrize("module", [fgemm, fgemm.deep_gemm, fgemm.deep_gemm.utils, fgemm.deep_gemm.testing])
def test_every_public_function_has_a_signature(module):
    for name in module.__all__:
        value = getattr(module, name)
        if callable(value) and not inspect.ismodule(value):
            inspect.signature(value)  # raises for a function it cannot read, such as an extension's


def test_the_stub_generator_is_the_builds_nanobind():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert len(set(re.findall(r'"nanobind==([0-9.]+)"', pyproject))) == 1
