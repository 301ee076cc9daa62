"""Writes python/fgemm/_C.pyi, the type stub of the extension fgemm._C, with nanobind's stub generator run on
the installed extension. With --check, writes nothing and exits with status 1 if the file differs from what it
would write (CI runs this through tests/python/test_generated_files.py).

    python tools/generate_stubs.py [--check]
"""

import pathlib
import subprocess
import sys
import tempfile

from generated_file import write_or_check

STUB = pathlib.Path(__file__).resolve().parents[1] / "python" / "fgemm" / "_C.pyi"


def generated_stub() -> str:
    """The stub nanobind generates for fgemm._C, private functions included (the benchmarks use one)."""
    with tempfile.TemporaryDirectory() as directory:
        output = pathlib.Path(directory) / "_C.pyi"
        subprocess.run([sys.executable, "-m", "nanobind.stubgen", "--include-private", "--quiet", "-m", "fgemm._C",
                        "-o", str(output)], check=True)
        return output.read_text()


def main(argv=None) -> int:
    return write_or_check(STUB, generated_stub(), __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
