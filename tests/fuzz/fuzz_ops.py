"""Running one fuzz case: its tensors made from the case's parameters, the fgemm call, and what D must hold
afterwards, the FP64 reference of ARCHITECTURE.md, Semantics (gemm_16bit.hpp for the 16-bit GEMMs,
gemm_int8.hpp for the INT8 GEMMs: the dequantized operands' product, or the exact INT32 product from int64
sums)."""

import dataclasses

import torch

import fgemm
from checks_int8 import BLOCK, exact_product
from fuzz_cases import QUANTIZED, layout_of_name
from fuzz_tensors import (TORCH_DTYPES, fp8_activations, fp8_weights, index_tensor, int8_row_scales, int8_scales,
                          int8_values, poisoned_storage, random_normal, sfa_as_given, stored)
from gpu_reference import dequantize_blocks, dequantize_rows


@dataclasses.dataclass
class Outcome:
    """D after the call (`d`, a view of `storage`), and what it must hold: `expected` (FP64, D's shape) on the
    rows that `kept` (bool, one per row of D seen as [rows, N]) does not mark; the marked rows must still hold
    the poison (fuzz_tensors), as must every element of storage outside d. `magnitude` is the sum of the
    absolute values of the terms each element of `expected` adds up (|C| + |bias| + |A| |B|), the scale of its
    rounding errors (0 for the exact INT32 product, which has none)."""
    storage: torch.Tensor
    d: torch.Tensor
    expected: torch.Tensor
    magnitude: torch.Tensor
    kept: torch.Tensor


def products(a, b):
    """(a @ b, |a| @ |b|) of FP64 matrices (or stacks of them)."""
    return a @ b, a.abs() @ b.abs()


class Case:
    """One case's parameters with its random generator and device, and the helpers that make its tensors."""

    def __init__(self, params, device):
        self.params = params
        self.layout = layout_of_name(params["layout"])
        self.device = device
        self.generator = torch.Generator(device).manual_seed(params["tensor_seed"])
        self.padding = params["row_padding"]

    def operand(self, name, values):
        """The operand as fgemm is given it: the values inside a storage of their own (padded rows)."""
        return stored(values, values.dtype, self.padding[name])

    def output(self, shape):
        """(storage, d): D inside a poisoned storage."""
        return poisoned_storage(shape, TORCH_DTYPES[self.params["out"]], self.device, self.padding["d"])

    def accumulator(self, d, expected, magnitude):
        """C as the case asks for it, added to `expected` (and |C| to `magnitude`): None, an FP32 tensor of its
        own, one of D's type, or D itself."""
        kind = self.params["c"]
        if kind == "none":
            return None
        values = torch.randn(d.shape, generator=self.generator, device=self.device)
        if kind != "separate":  # of D's type: C's values are those rounded to it
            values = values.to(d.dtype)
        expected += values.double()
        magnitude += values.double().abs()
        if kind == "in_place":
            d.copy_(values)
            return d
        return stored(values, values.dtype, self.padding["c"])

    def bias(self, expected, magnitude):
        """The INT8 GEMM's bias as the case asks for it, added to `expected` (and |bias| to `magnitude`): {} or
        {"bias": [N] in FP32 or D's type}, the keyword arguments of the call."""
        if self.params["bias"] == "none":
            return {}
        values = torch.randn(expected.shape[-1], generator=self.generator, device=self.device)
        values = values.to(TORCH_DTYPES[self.params["bias"]])
        expected += values.double()
        magnitude += values.double().abs()
        return {"bias": values}

    def quantized(self, a_shape, b_shape):
        """(a, b, A, B): the operands as the FP8 and INT8 GEMMs take them, pairs (values in a padded storage,
        scales), and A [.., rows, K] and B [.., N, K] dequantized to FP64."""
        if self.layout.scales_b_per_row:
            (a, sa), (b, sb) = (fp8_activations(shape, self.generator, self.device) for shape in (a_shape, b_shape))
            a64, b64 = dequantize_rows(a, sa), dequantize_rows(b, sb)
            sa, sb = sfa_as_given(sa, self.params["sfa"]), sfa_as_given(sb, self.params["sfb"])
        elif self.layout.dtype == "fp8":
            (a, sa), (b, sb) = fp8_activations(a_shape, self.generator, self.device), \
                fp8_weights(b_shape, self.generator, self.device)
            a64, b64 = dequantize_rows(a, sa), dequantize_blocks(b, sb)
            sa = sfa_as_given(sa, self.params["sfa"])
        else:
            (a, sa, a64), (b, sb, b64) = self.int8_operand(a_shape, "sa", 1), self.int8_operand(b_shape, "sb", BLOCK)
        return (self.operand("a", a), sa), (self.operand("b", b), sb), a64, b64

    def int8_operand(self, shape, scales_name, rows_per_block):
        """(x, scales, x dequantized to FP64) of an INT8 operand [.., rows, K], scaled as the case's recipe says:
        per rows_per_block x 128 block (1 for A, 128 for B), or per row in the form params[scales_name] names."""
        p = self.params
        x = int8_values(shape, p["extremes"], self.generator, self.device)
        *lead, rows, k = shape
        if p["recipe"] == "block":
            scales = int8_scales((*lead, -(-rows // rows_per_block), -(-k // BLOCK)), self.generator, self.device)
            dequantize = dequantize_rows if rows_per_block == 1 else dequantize_blocks
            return x, scales, dequantize(x, scales)
        scales, per_row = int8_row_scales(p[scales_name], lead, rows, self.generator, self.device)
        return x, scales, x.double() * per_row.double().unsqueeze(-1)

    def function(self):
        return getattr(fgemm, self.layout.function or self.layout.name)

    def recipe(self):
        """The keyword argument that selects the case's FP8 recipe where the function takes two."""
        return {"recipe": (1, 1, 128)} if self.layout.scales_b_per_row and self.layout.kind == "dense" else {}

    def k_grouped_fp8(self, m, n, ks):
        """(a, b, [(A_g, B_g)]) of k_grouped_fp8_gemm_nt_contiguous: each expert's [M, ks[g]] and [N, ks[g]]
        blocks quantized per 1 x 128, laid one after another in a flat tensor, their scales side by side
        ([M, sum(ks) / 128] and [N, sum(ks) / 128]); and each expert's blocks dequantized to FP64."""
        codes, scales, experts = {"a": [], "b": []}, {"a": [], "b": []}, []
        for k in ks:
            dequantized = []
            for name, rows in (("a", m), ("b", n)):
                x = torch.empty(rows, 0, dtype=torch.float8_e4m3fn, device=self.device)
                s = torch.empty(rows, 0, dtype=torch.float32, device=self.device)
                if k:
                    x, s = fp8_activations((rows, k), self.generator, self.device)
                codes[name].append(x.flatten())
                scales[name].append(s)
                dequantized.append(dequantize_rows(x, s))
            experts.append(tuple(dequantized))
        a = (torch.cat(codes["a"]), sfa_as_given(torch.cat(scales["a"], dim=1), self.params["sfa"]))
        b = (torch.cat(codes["b"]), sfa_as_given(torch.cat(scales["b"], dim=1), self.params["sfb"]))
        return a, b, experts


def dense(case):
    p, layout = case.params, case.layout
    m, n, k = p["m"], p["n"], p["k"]
    storage, d = case.output((m, n))
    if p.get("recipe") == "exact":
        a, b = (int8_values(shape, p["extremes"], case.generator, case.device) for shape in ((m, k), (n, k)))
        expected = exact_product(a, b).double()
        magnitude = torch.zeros_like(expected)
        case.function()(case.operand("a", a), case.operand("b", b), d)
    elif layout.dtype in QUANTIZED:
        a, b, a64, b64 = case.quantized((m, k), (n, k))
        expected, magnitude = products(a64, b64.T)
        c = case.accumulator(d, expected, magnitude)
        bias = case.bias(expected, magnitude) if layout.dtype == "int8" else {}
        case.function()(a, b, d, c, **bias, **case.recipe())
    else:
        # The first letter: A stored [M, K] (n) or [K, M] (t); the second: B stored [N, K] (t) or [K, N] (n).
        a_stored = random_normal((m, k) if layout.letters[0] == "n" else (k, m), TORCH_DTYPES[layout.dtype],
                                 case.generator, case.device)
        b_stored = random_normal((n, k) if layout.letters[1] == "t" else (k, n), TORCH_DTYPES[layout.dtype],
                                 case.generator, case.device)
        a_mk = a_stored if layout.letters[0] == "n" else a_stored.T
        b_kn = b_stored.T if layout.letters[1] == "t" else b_stored
        expected, magnitude = products(a_mk.double(), b_kn.double())
        c = case.accumulator(d, expected, magnitude)
        case.function()(case.operand("a", a_stored), case.operand("b", b_stored), d, c)
    return Outcome(storage, d, expected, magnitude, torch.zeros(m, dtype=torch.bool, device=case.device))


def expert_rows(p):
    """(expert, first row, end row) of each expert with rows."""
    return [(g, start, start + size) for g, (start, size) in enumerate(zip(p["starts"], p["sizes"])) if size]


def grouped_layout(p, device):
    """m_indices [M_sum] (-1 for padding) or the prefix sums [G] of the case's experts."""
    if p["form"] == "psum":
        return index_tensor(p["psum"], device)
    m_indices = torch.full((p["m_sum"],), -1, dtype=torch.int32, device=device)
    for g, start, end in expert_rows(p):
        m_indices[start:end] = g
    return m_indices


def contiguous(case):
    p, layout = case.params, case.layout
    m_sum, n, k, groups = p["m_sum"], p["n"], p["k"], p["groups"]
    storage, d = case.output((m_sum, n))
    layout_tensor = grouped_layout(p, case.device)
    # DeepGEMM's keyword, given only where the case uses the prefix sums.
    psum = {"use_psum_layout": True} if p["form"] == "psum" else {}
    if layout.dtype in QUANTIZED:
        a, b, a_mk, b_nk = case.quantized((m_sum, k), (groups, n, k))
        b_kn = b_nk.transpose(1, 2)
        case.function()(a, b, d, layout_tensor, **psum)
    else:
        a = random_normal((m_sum, k), TORCH_DTYPES[layout.dtype], case.generator, case.device)
        b = random_normal((groups, n, k) if layout.letters == "nt" else (groups, k, n), TORCH_DTYPES[layout.dtype],
                          case.generator, case.device)
        a_mk, b_kn = a.double(), (b.transpose(1, 2) if layout.letters == "nt" else b).double()
        case.function()(case.operand("a", a), case.operand("b", b), d, layout_tensor, **psum)
    expected = torch.zeros(m_sum, n, dtype=torch.float64, device=case.device)
    magnitude = torch.zeros_like(expected)
    kept = torch.ones(m_sum, dtype=torch.bool, device=case.device)
    for g, start, end in expert_rows(p):
        expected[start:end], magnitude[start:end] = products(a_mk[start:end], b_kn[g])
        kept[start:end] = False
    return Outcome(storage, d, expected, magnitude, kept)


def masked(case):
    p, layout = case.params, case.layout
    groups, m_max, n, k = p["groups"], p["m_max"], p["n"], p["k"]
    storage, d = case.output((groups, m_max, n))
    masked_m = index_tensor(p["masked_m"], case.device)
    if layout.dtype in QUANTIZED:
        a, b, a64, b64 = case.quantized((groups, m_max, k), (groups, n, k))
        expected, magnitude = products(a64, b64.transpose(1, 2))
        case.function()(a, b, d, masked_m, p["expected_m"])
    else:
        a = random_normal((groups, m_max, k), TORCH_DTYPES[layout.dtype], case.generator, case.device)
        b = random_normal((groups, n, k), TORCH_DTYPES[layout.dtype], case.generator, case.device)
        expected, magnitude = products(a.double(), b.double().transpose(1, 2))
        case.function()(case.operand("a", a), case.operand("b", b), d, masked_m, p["expected_m"])
    rows = torch.arange(m_max, device=case.device)
    kept = rows[None, :] >= masked_m[:, None]
    return Outcome(storage, d, expected, magnitude, kept.reshape(-1))


def k_grouped(case):
    p, layout = case.params, case.layout
    groups, m, n, ks = p["groups"], p["m"], p["n"], p["ks"]
    storage, d = case.output((groups, m, n))
    expected = torch.zeros(groups, m, n, dtype=torch.float64, device=case.device)
    magnitude = torch.zeros_like(expected)
    if layout.dtype == "fp8":
        # The operands are flat: no rows to pad.
        a, b, experts = case.k_grouped_fp8(m, n, ks)
        for g, (a_g, b_g) in enumerate(experts):
            expected[g], magnitude[g] = products(a_g, b_g.T)
    else:
        a_values = random_normal((sum(ks), m), TORCH_DTYPES[layout.dtype], case.generator, case.device)
        b_values = random_normal((sum(ks), n), TORCH_DTYPES[layout.dtype], case.generator, case.device)
        first = 0
        for g, k in enumerate(ks):
            expected[g], magnitude[g] = products(a_values[first:first + k].double().T,
                                                 b_values[first:first + k].double())
            first += k
        a, b = case.operand("a", a_values), case.operand("b", b_values)
    c = case.accumulator(d, expected, magnitude)
    case.function()(a, b, d, ks, index_tensor(ks, case.device), c)
    return Outcome(storage, d, expected, magnitude, torch.zeros(groups * m, dtype=torch.bool, device=case.device))


RUN = {"dense": dense, "contiguous": contiguous, "masked": masked, "k_grouped": k_grouped}


def run_case(params, device):
    """Runs the case on `device` ("cuda" or "cpu") and returns its Outcome once the device has finished."""
    case = Case(params, device)
    outcome = RUN[case.layout.kind](case)
    if device == "cuda":
        torch.cuda.synchronize()
    return outcome
