"""Stand-ins for DeepGEMM's functions that fgemm does not implement: each raises NotImplementedError naming
itself, so code written for DeepGEMM fails at the call with a clear message rather than at import."""


def not_implemented(name: str, what: str):
    """A function called `name` that raises NotImplementedError saying that fgemm lacks `what`."""

    def missing(*args, **kwargs):
        raise NotImplementedError(f"deep_gemm.{name} is not implemented by fgemm: fgemm has no {what}. fgemm "
                                  f"implements DeepGEMM's FP8 NT GEMMs (normal, m-grouped contiguous and masked) "
                                  f"with FP32 scales per 1x128 and 128x128 block, and its BF16 and FP16 GEMMs, on "
                                  f"Hopper and the CPU.")

    missing.__name__ = missing.__qualname__ = name
    missing.__doc__ = f"DeepGEMM's {name}: not implemented by fgemm (no {what}); raises NotImplementedError."
    return missing


def not_implemented_group(what: str, names: str) -> dict:
    """{name: stand-in} for each of the whitespace-separated `names`, all lacking `what`."""
    return {name: not_implemented(name, what) for name in names.split()}
