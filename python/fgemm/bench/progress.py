"""A progress bar over the shapes being timed: tqdm's where it is installed, else one line rewritten in place."""

import sys


def progress(items, description):
    """Yields `items`, showing how many are done on stderr."""
    try:
        from tqdm import tqdm
    except ImportError:
        yield from plain_progress(list(items), description, sys.stderr)
        return
    yield from tqdm(items, desc=description, unit="shape", file=sys.stderr)


def plain_progress(items, description, stream):
    for done, item in enumerate(items):
        stream.write(f"\r{description}: {done}/{len(items)}")
        stream.flush()
        yield item
    stream.write(f"\r{description}: {len(items)}/{len(items)}\n")
    stream.flush()
