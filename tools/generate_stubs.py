"""Writes python/fgemm/_C.pyi, the type stub of the extension fgemm._C, with nanobind's stub generator run on
the installed extension. With --check, writes nothing and exits with status 1 if the file differs from what it
would write (CI runs this through tests/python/test_generated_files.py).

    python tools/generate_stubs.py [--check]
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

STUB = pathlib.Path(__file__).resolve().parents[1] / "python" / "fgemm" / "_C.pyi"


def generated_stub() -> str:
    """The stub nanobind generates for fgemm._C, private functions included (the benchmarks use one)."""
    with tempfile.TemporaryDirectory() as directory:
        output = pathlib.Path(directory) / "_C.pyi"
        subprocess.run([sys.executable, "-m", "nanobind.stubgen", "--include-private", "--quiet", "-m", "fgemm._C",
                        "-o", str(output)], check=True)
        return output.read_text()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the stub is up to date")
    args = parser.parse_args(argv)
    stub = generated_stub()
    if args.check:
        if not STUB.exists() or STUB.read_text() != stub:
            print(f"{STUB.name} is out of date: run python tools/generate_stubs.py", file=sys.stderr)
            return 1
        return 0
    STUB.write_text(stub)
    return 0


if __name__ == "__main__":
    sys.exit(main())
