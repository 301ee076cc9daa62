"""The fuzz runner's cases: the GEMMs it covers (LAYOUTS) and, from a seed and a case index alone, the parameters
of one case as plain Python values (printed with a failure, and enough to replay it).

Case index i belongs to LAYOUTS[i % len(LAYOUTS)], whatever subset of layouts a run selects, so that
`--replay SEED:I` draws the same case as the run that reported it. New layouts go at the end of LAYOUTS: the
existing ones keep their positions, and each its first case; its later ones (index j * len(LAYOUTS) + position)
move when layouts are added.

The GPU kernels are compiled for each N and K, so a run draws a few such "kernel shapes" (with a group count) per
layout (`shapes_per_layout`) and every case picks one of them; everything else (M, the experts' sizes and K,
padding, masks, the output type, C, strides; for INT8 the recipe, the scales' shapes and the bias) is drawn
afresh for each case.
"""

import dataclasses
import math
import random

import fgemm

# Row counts at the edges of the kernels' tiles (64 and 128 rows), drawn often.
EDGE_ROWS = (0, 1, 63, 64, 65, 127, 128, 129)
ALIGNMENT = fgemm.get_m_alignment_for_contiguous_layout()
# The types whose A and B come with scales (and K a multiple of 16).
QUANTIZED = ("fp8", "int8")


@dataclasses.dataclass(frozen=True)
class Layout:
    name: str  # the fgemm function, or where one function takes two FP8 recipes, the function and the recipe
    dtype: str  # of A and B: "fp8", "bf16", "fp16" or "int8"
    kind: str  # "dense", "contiguous", "masked" or "k_grouped"
    letters: str  # how A and B are stored: "nt", "nn", "tn" or "tt" (include/fgemm/gemm_16bit.hpp)
    # FP8: "1d1d" where B is scaled per 1 x 128 block along K like A (the weight gradients' recipe), else B is
    # scaled per 128 x 128 block.
    recipe: str = ""
    function: str = ""  # the fgemm function, where it is not the name

    @property
    def scales_b_per_row(self):
        return self.recipe == "1d1d"


def _layouts():
    layouts = [Layout("fp8_gemm_nt", "fp8", "dense", "nt"),
               Layout("m_grouped_fp8_gemm_nt_contiguous", "fp8", "contiguous", "nt"),
               Layout("m_grouped_fp8_gemm_nt_masked", "fp8", "masked", "nt")]
    for dtype in ("bf16", "fp16"):
        layouts += [Layout(f"{dtype}_gemm_{letters}", dtype, "dense", letters) for letters in ("nt", "nn", "tn", "tt")]
        layouts += [Layout(f"m_grouped_{dtype}_gemm_{letters}_contiguous", dtype, "contiguous", letters)
                    for letters in ("nt", "nn")]
        layouts += [Layout(f"m_grouped_{dtype}_gemm_nt_masked", dtype, "masked", "nt"),
                     Layout(f"k_grouped_{dtype}_gemm_tn_contiguous", dtype, "k_grouped", "tn")]
    layouts += [Layout("int8_gemm_nt", "int8", "dense", "nt"),
                Layout("m_grouped_int8_gemm_nt_contiguous", "int8", "contiguous", "nt"),
                Layout("m_grouped_int8_gemm_nt_masked", "int8", "masked", "nt")]
    layouts += [Layout("fp8_gemm_nt_1d1d", "fp8", "dense", "nt", recipe="1d1d", function="fp8_gemm_nt"),
                Layout("k_grouped_fp8_gemm_nt_contiguous", "fp8", "k_grouped", "nt", recipe="1d1d")]
    return tuple(layouts)


LAYOUTS = _layouts()
LAYOUT_NAMES = tuple(layout.name for layout in LAYOUTS)


@dataclasses.dataclass(frozen=True)
class Limits:
    """The largest sizes a case may have: M (rows of A and D; per expert in the grouped layouts), N, K (the sum
    of the experts' K for k-grouped) and the number of experts."""
    max_m: int
    max_n: int
    max_k: int
    max_groups: int


# On the GPU the sizes the issue asks for; on the CPU small enough for a smoke test in CI (every edge row count
# still occurs).
LIMITS = {"cuda": Limits(max_m=5000, max_n=6000, max_k=6000, max_groups=16),
          "cpu": Limits(max_m=300, max_n=300, max_k=384, max_groups=6)}


def layout_of(index):
    return LAYOUTS[index % len(LAYOUTS)]


def layout_of_name(name):
    return LAYOUTS[LAYOUT_NAMES.index(name)]


def case_indices(layouts, cases_per_layout):
    """The indices of the first `cases_per_layout` cases of each of `layouts`."""
    return [j * len(LAYOUTS) + LAYOUTS.index(layout) for j in range(cases_per_layout) for layout in layouts]


def spread(rng, cap):
    """An integer in [1, cap], uniform or log-uniform with equal odds: large values (many tiles, many K
    blocks) as often as small ones."""
    if rng.random() < 0.5:
        return rng.randint(1, cap)
    return min(cap, int(math.exp(rng.uniform(0.0, math.log(cap + 1)))))


def draw_rows(rng, cap):
    """A row count in [0, cap]: often a tile edge."""
    edges = [rows for rows in EDGE_ROWS if rows <= cap]
    return rng.choice(edges) if rng.random() < 0.4 else spread(rng, cap)


def draw_extent(rng, cap, multiple=1):
    """N or K in [multiple, cap], a multiple of `multiple`: mostly arbitrary (so rarely a multiple of 64 and the
    partial tiles at the edge are exercised), sometimes a power of two as models have."""
    if rng.random() < 0.15:
        value = rng.choice([size for size in (128, 256, 512, 1024, 2048, 4096) if size <= cap] or [cap])
    else:
        value = spread(rng, cap)
    return max(multiple, min(cap, value) // multiple * multiple)


def draw_groups(rng, limits):
    return rng.choice([g for g in (1, 2, 3, 4, 5, 8, 16) if g <= limits.max_groups])


def kernel_shape(seed, layout, slot, limits):
    """The dimensions the layout's kernels are compiled for, shared by the cases that pick this slot."""
    rng = random.Random(f"{seed}:{layout.name}:shape{slot}")
    shape = dict(n=draw_extent(rng, limits.max_n))
    if layout.kind == "k_grouped":
        shape["groups"] = draw_groups(rng, limits)  # K varies per expert at run time; N is compiled in
    else:
        shape["k"] = draw_extent(rng, limits.max_k, 16 if layout.dtype in QUANTIZED else 1)
        if layout.kind != "dense":
            shape["groups"] = draw_groups(rng, limits)
    return shape


def rows_per_expert_cap(groups, limits):
    """Each expert's rows stay below this, so that the total stays near max_m but every tile edge can occur."""
    return max(EDGE_ROWS[-1] + 1, limits.max_m // groups)


def draw_contiguous(rng, groups, limits):
    """The experts' rows and how grouped_layout names them: m_indices (each expert's rows from an aligned row,
    then -1 padding, sometimes whole padding tiles between experts and a ragged tail) or the prefix sums
    (use_psum_layout: each expert from the aligned end of the one before, ends unaligned)."""
    cap = rows_per_expert_cap(groups, limits)
    sizes = [0 if rng.random() < 0.2 else draw_rows(rng, cap) for _ in range(groups)]
    form = rng.choice(["m_indices", "psum"])
    starts, row = [], 0
    for size in sizes:
        row = -(-row // ALIGNMENT) * ALIGNMENT
        if form == "m_indices" and rng.random() < 0.15:
            row += ALIGNMENT * rng.randint(1, 2)  # padding tiles no expert owns
        starts.append(row)
        row += size
    tail = rng.choice([0, 0, rng.randint(1, 300)])
    case = dict(sizes=sizes, starts=starts, m_sum=row + tail, form=form)
    if form == "psum":
        # An empty expert's prefix sum is the aligned start of its range or the unaligned end of the expert before
        # it: either leaves it no rows.
        case["psum"], previous = [], 0
        for start, size in zip(starts, sizes):
            previous = start + size if size or rng.random() < 0.5 else previous
            case["psum"].append(previous)
    return case


def draw_masked(rng, groups, limits):
    m_max = draw_rows(rng, rows_per_expert_cap(groups, limits))
    masked_m = [rng.choice([0, m_max, rng.randint(0, m_max), rng.choice([r for r in EDGE_ROWS if r <= m_max])])
                for _ in range(groups)]
    expected_m = rng.choice([max(1, m_max), max(1, sum(masked_m) // groups), rng.randint(1, max(1, m_max))])
    return dict(m_max=m_max, masked_m=masked_m, expected_m=expected_m)


def draw_ks(rng, groups, limits):
    """Each expert's K, a multiple of the alignment, often 0, the sum at most max_k."""
    blocks_left = limits.max_k // ALIGNMENT
    ks = []
    for _ in range(groups):
        blocks = 0 if rng.random() < 0.3 or blocks_left == 0 else rng.randint(1, max(1, blocks_left // 2))
        blocks_left -= blocks
        ks.append(blocks * ALIGNMENT)
    rng.shuffle(ks)
    return ks


# The shapes of the INT8 GEMMs' per-row scales (fuzz_tensors.int8_row_scales) per layout kind: sa per token, sb
# per channel or per expert.
TOKEN_SCALES = {"dense": ("vector", "column", "one"), "contiguous": ("vector", "column", "one"),
                "masked": ("vector", "column")}
CHANNEL_SCALES = {"dense": ("vector", "row", "one"), "contiguous": ("vector", "one"), "masked": ("vector", "one")}


def draw_int8(rng, layout):
    """The INT8 recipe: "exact" (int8_gemm_nt only: the INT32 product, no scales), "token" (per token and per
    channel, with the shapes of sa and sb) or "block" (DeepSeek's 1 x 128 and 128 x 128 blocks); and whether the
    values are only the extremes -128 and 127."""
    case = dict(recipe=rng.choice(["exact", "token", "block"] if layout.kind == "dense" else ["token", "block"]))
    if case["recipe"] == "token":
        case.update(sa=rng.choice(TOKEN_SCALES[layout.kind]), sb=rng.choice(CHANNEL_SCALES[layout.kind]))
    case["extremes"] = rng.random() < 0.2
    return case


def draw_output(rng, layout, recipe):
    """The output type, and C: none, an FP32 tensor of its own, one of D's 16-bit type, or D itself (accumulation
    in place); for int8_gemm_nt the bias too: none, FP32 or D's 16-bit type. The exact INT8 product writes an int32
    D alone."""
    if recipe == "exact":
        return dict(out="int32", c="none", bias="none")
    if layout.kind == "k_grouped":
        # The 16-bit weight gradients accumulate in FP32; FP8's also writes the BF16 gradient itself.
        out = rng.choice(["fp32", "bf16"]) if layout.dtype == "fp8" else "fp32"
    else:
        out = rng.choice(["bf16", "fp16", "fp32"] if layout.dtype == "int8" else
                         [{"fp8": "bf16"}.get(layout.dtype, layout.dtype), "fp32"])
    c = "none"
    if layout.kind == "k_grouped" and layout.dtype == "fp8" and out == "fp32":
        c = rng.choice(["separate", "in_place"])  # a weight gradient accumulating in FP32: C is required
    elif layout.kind in ("dense", "k_grouped"):
        # Beside a 16-bit D, C is FP32 or of D's type ("own_type"), apart from D or D itself.
        c = rng.choice(["none", "separate", "in_place"] if out == "fp32" else
                       ["none", "separate", "own_type", "in_place"])
    output = dict(out=out, c=c)
    if layout.dtype == "int8" and layout.kind == "dense":
        output["bias"] = rng.choice(["none", "fp32"] if out == "fp32" else ["none", "fp32", out])
    return output


def draw_case(seed, index, limits, shapes_per_layout):
    """The parameters of case `index` of the run with this seed (a dict of plain values)."""
    layout = layout_of(index)
    rng = random.Random(f"{seed}:{index}")
    slot = rng.randrange(shapes_per_layout)
    case = dict(index=index, layout=layout.name, slot=slot, **kernel_shape(seed, layout, slot, limits))
    case["tensor_seed"] = rng.getrandbits(62)
    if layout.kind == "dense":
        case["m"] = draw_rows(rng, limits.max_m)
    elif layout.kind == "contiguous":
        case.update(draw_contiguous(rng, case["groups"], limits))
    elif layout.kind == "masked":
        case.update(draw_masked(rng, case["groups"], limits))
    else:
        case.update(m=draw_rows(rng, limits.max_m), ks=draw_ks(rng, case["groups"], limits))
    if layout.dtype == "int8":
        case.update(draw_int8(rng, layout))
    case.update(draw_output(rng, layout, case.get("recipe")))
    if layout.dtype == "fp8":
        case["sfa"] = rng.choice(["mn-major", "row-major"])
    if layout.scales_b_per_row:
        case["sfb"] = rng.choice(["mn-major", "row-major"])
    # Extra 16-byte units in each row of the operands' and D's storage, beyond the least the TMA allows.
    case["row_padding"] = {operand: rng.choice([0, 0, 1, 3]) for operand in ("a", "b", "c", "d")}
    return case
