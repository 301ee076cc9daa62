"""Running one fuzz case: its tensors made from the case's parameters, the fgemm call, and what D must hold
afterwards, the FP64 reference of ARCHITECTURE.md, Semantics (gemm_16bit.hpp for the 16-bit GEMMs)."""

import dataclasses

import torch

import fgemm
from fuzz_cases import layout_of_name
from fuzz_tensors import (TORCH_DTYPES, fp8_activations, fp8_weights, index_tensor, poisoned_storage,
                          random_normal, sfa_as_given, stored)
from gpu_reference import dequantize_blocks, dequantize_rows


@dataclasses.dataclass
class Outcome:
    """D after the call (`d`, a view of `storage`), and what it must hold: `expected` (FP64, D's shape) on the
    rows that `kept` (bool, one per row of D seen as [rows, N]) does not mark; the marked rows must still hold
    NaN, as must every element of storage outside d. `magnitude` is the sum of the absolute values of the
    terms each element of `expected` adds up (|C| + |A| |B|), the scale of its rounding errors."""
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
        """(storage, d): D inside a NaN-filled storage."""
        return poisoned_storage(shape, TORCH_DTYPES[self.params["out"]], self.device, self.padding["d"])

    def accumulator(self, d, expected, magnitude):
        """C as the case asks for it, added to `expected` (and |C| to `magnitude`): None, a tensor of its own, or
        D itself."""
        if self.params["c"] == "none":
            return None
        values = torch.randn(d.shape, generator=self.generator, device=self.device)
        expected += values.double()
        magnitude += values.double().abs()
        if self.params["c"] == "in_place":
            d.copy_(values)
            return d
        return stored(values, torch.float32, self.padding["c"])

    def function(self):
        return getattr(fgemm, self.layout.name)


def dense(case):
    p, layout = case.params, case.layout
    m, n, k = p["m"], p["n"], p["k"]
    storage, d = case.output((m, n))
    if layout.dtype == "fp8":
        (a, sfa), (b, sfb) = fp8_activations((m, k), case.generator, case.device), \
            fp8_weights((n, k), case.generator, case.device)
        expected, magnitude = products(dequantize_rows(a, sfa), dequantize_blocks(b, sfb).T)
        c = case.accumulator(d, expected, magnitude)
        case.function()((case.operand("a", a), sfa_as_given(sfa, p["sfa"])), (case.operand("b", b), sfb), d, c)
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
    if layout.dtype == "fp8":
        (a, sfa), (b, sfb) = fp8_activations((m_sum, k), case.generator, case.device), \
            fp8_weights((groups, n, k), case.generator, case.device)
        a_mk, b_kn = dequantize_rows(a, sfa), dequantize_blocks(b, sfb).transpose(1, 2)
        case.function()((case.operand("a", a), sfa_as_given(sfa, p["sfa"])), (case.operand("b", b), sfb), d,
                        layout_tensor, **psum)
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
    if layout.dtype == "fp8":
        (a, sfa), (b, sfb) = fp8_activations((groups, m_max, k), case.generator, case.device), \
            fp8_weights((groups, n, k), case.generator, case.device)
        expected, magnitude = products(dequantize_rows(a, sfa), dequantize_blocks(b, sfb).transpose(1, 2))
        case.function()((case.operand("a", a), sfa_as_given(sfa, p["sfa"])), (case.operand("b", b), sfb), d,
                        masked_m, p["expected_m"])
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
    a = random_normal((sum(ks), m), TORCH_DTYPES[layout.dtype], case.generator, case.device)
    b = random_normal((sum(ks), n), TORCH_DTYPES[layout.dtype], case.generator, case.device)
    expected = torch.zeros(groups, m, n, dtype=torch.float64, device=case.device)
    magnitude = torch.zeros_like(expected)
    first = 0
    for g, k in enumerate(ks):
        expected[g], magnitude[g] = products(a[first:first + k].double().T, b[first:first + k].double())
        first += k
    c = case.accumulator(d, expected, magnitude)
    case.function()(case.operand("a", a), case.operand("b", b), d, ks, index_tensor(ks, case.device), c)
    return Outcome(storage, d, expected, magnitude, torch.zeros(groups * m, dtype=torch.bool, device=case.device))


RUN = {"dense": dense, "contiguous": contiguous, "masked": masked, "k_grouped": k_grouped}


def run_case(params, device):
    """Runs the case on `device` ("cuda" or "cpu") and returns its Outcome once the device has finished."""
    case = Case(params, device)
    outcome = RUN[case.layout.kind](case)
    if device == "cuda":
        torch.cuda.synchronize()
    return outcome
