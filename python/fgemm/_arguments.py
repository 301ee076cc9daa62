"""Checks of the GEMMs' arguments on the way into torch.ops.fgemm, where the extension cannot see them first:
under torch.compile's tracing, and for fake or meta tensors. They mirror the extension's checks of the same
arguments (python/src/torch_tensor.cpp, python/src/deepgemm_options.cpp), whose errors an eager call gets;
the shapes, strides and dtypes are checked by the extension when the op runs.
"""

import torch

_INT64_RANGE = range(-(2**63), 2**63)
# DeepGEMM's recipe arguments: for each, its value naming the recipe 1D2D (A per 1x128, B per 128x128 block) and
# the one naming 1D1D (A and B per 1x128 block; None for recipe_a, which has one value), with B's scale
# granularity along N.
_RECIPES = {
    "recipe": ((1, 128, 128), (1, 1, 128)),
    "recipe_a": ((1, 128), None),
    "recipe_b": ((128, 128), (1, 128)),
}


def _fail(error, op: str, name: str, what: str):
    raise error(f"fgemm.{op}: argument '{name}' {what}")


def tensor(value, op: str, name: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        _fail(TypeError, op, name, f"expected a torch.Tensor, got {type(value).__name__}")
    return value


def optional_tensor(value, op: str, name: str):
    return None if value is None else tensor(value, op, name)


def tensor_pair(value, op: str, pair_name: str, scales_name: str):
    """(data, scales) from DeepGEMM's operand pair, a tuple or list of two tensors."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        _fail(TypeError, op, pair_name, f"expected a pair ({pair_name}, {scales_name}) of a tensor and its "
                                        f"FP32 scales, got {type(value).__name__}")
    return tensor(value[0], op, pair_name), tensor(value[1], op, scales_name)


def int_argument(value, op: str, name: str) -> int:
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        _fail(TypeError, op, name, f"expected an int, got {type(value).__name__}")
    if value.__index__() not in _INT64_RANGE:
        _fail(ValueError, op, name, f"does not fit in 64 bits: {value!r}")
    return value.__index__()


def _is_recipe(value, expected: tuple) -> bool:
    """A sequence of ints equal to `expected`, so that [1, 128, 128] is accepted as DeepGEMM does."""
    return isinstance(value, (tuple, list)) and tuple(value) == expected


def deepgemm_options(op: str, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast,
                     takes_1d1d: bool = False) -> int:
    """DeepGEMM's keyword arguments, accepted where they describe what fgemm does (1D1D only where the operation
    takes it). Returns B's scale granularity along N that the recipe names: 128 (1D2D), 1 (1D1D) or 0 (none
    named: the scales' shape decides)."""
    granularities = []
    for name, value in (("recipe", recipe), ("recipe_a", recipe_a), ("recipe_b", recipe_b)):
        one_d_two_d, one_d_one_d = _RECIPES[name]
        if value is None:
            continue
        if _is_recipe(value, one_d_two_d):
            granularities.append((name, 128))
        elif takes_1d1d and one_d_one_d is not None and _is_recipe(value, one_d_one_d):
            granularities.append((name, 1))
        else:
            accepted = f"{one_d_two_d!r}" + (f" or {one_d_one_d!r}" if takes_1d1d and one_d_one_d else "")
            _fail(ValueError, op, name, f"must be None or {accepted}, got {value!r}")
    granularities = [(name, g) for name, g in granularities if name != "recipe_a"]
    if len(granularities) == 2 and granularities[0][1] != granularities[1][1]:
        _fail(ValueError, op, "recipe_b", f"disagrees with recipe {recipe!r}: got {recipe_b!r}")
    check_compiled_dims(op, compiled_dims)
    if not isinstance(disable_ue8m0_cast, bool):
        _fail(TypeError, op, "disable_ue8m0_cast", f"expected a bool, got {type(disable_ue8m0_cast).__name__}")
    return granularities[0][1] if granularities else 0


def check_scales_of_recipe(op: str, granularity: int, b: torch.Tensor, sfb: torch.Tensor) -> None:
    """sfb's rows against the recipe's granularity (0: any), so that a recipe given never disagrees with the
    scales."""
    if granularity == 0 or b.dim() != 2 or sfb.dim() != 2:
        return
    rows = (b.size(0) + granularity - 1) // granularity
    if sfb.size(0) != rows:
        layout = "[N, ceil(K/128)]" if granularity == 1 else "[ceil(N/128), ceil(K/128)]"
        _fail(ValueError, op, "sfb", f"expected {layout} for the recipe given, {rows} rows, got shape "
                                     f"{list(sfb.shape)}")


def check_compiled_dims(op: str, compiled_dims) -> None:
    """DeepGEMM's compiled_dims: any str (fgemm specialises its kernels on every dimension anyway)."""
    if not isinstance(compiled_dims, str):
        _fail(TypeError, op, "compiled_dims", f"expected a str, got {type(compiled_dims).__name__}")


def bool_argument(value, op: str, name: str) -> bool:
    if not isinstance(value, bool):
        _fail(TypeError, op, name, f"expected a bool, got {type(value).__name__}")
    return value


def int_list(value, op: str, name: str) -> list:
    """A list (or tuple) of ints, such as the k-grouped GEMM's ks."""
    if not isinstance(value, (list, tuple)):
        _fail(TypeError, op, name, f"expected a list of ints, got {type(value).__name__}")
    return [int_argument(item, op, name) for item in value]


def gemm_operands(op: str, a, b, d, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast,
                  takes_1d1d: bool = False):
    """(a, sfa, b, sfb, d) of a GEMM, checked in the extension's order: DeepGEMM's options, then a, b and d."""
    granularity = deepgemm_options(op, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, takes_1d1d)
    a, sfa = tensor_pair(a, op, "a", "sfa")
    b, sfb = tensor_pair(b, op, "b", "sfb")
    check_scales_of_recipe(op, granularity, b, sfb)
    return a, sfa, b, sfb, tensor(d, op, "d")
