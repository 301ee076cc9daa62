"""What the generator scripts share: write a generated file, or with --check only compare it."""

import argparse
import pathlib
import sys


def write_or_check(path: pathlib.Path, text: str, description: str, argv=None) -> int:
    """Writes `text` to `path`; with --check on the command line, writes nothing and returns 1 (after saying
    so) if the file differs. The exit status for the script."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help=f"only check that {path.name} is up to date")
    if not parser.parse_args(argv).check:
        path.write_text(text)
        return 0
    if path.exists() and path.read_text() == text:
        return 0
    print(f"{path.name} is out of date: run python tools/{pathlib.Path(sys.argv[0]).name}", file=sys.stderr)
    return 1
