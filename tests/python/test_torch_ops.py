"""torch.ops.fgemm: the ops' schemas and fake versions (opcheck), FakeTensor and meta shapes, the version
counter of d, and the public functions under torch.compile(fullgraph=True) on CPU tensors."""

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import fgemm
from operands import activations, weights

FP8 = torch.float8_e4m3fn
M, N, K, G = 5, 256, 384, 2
# opcheck's schema test compares tensors with arithmetic that torch lacks for float8 on the CPU; it stays on for
# the ops without FP8 inputs.
WITHOUT_SCHEMA = ("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


def gen():
    return torch.Generator().manual_seed(0)


def normal_operands(out_dtype=torch.bfloat16):
    g = gen()
    (a, sfa), (b, sfb) = activations(M, K, g), weights(N, K, g)
    return a, sfa, b, sfb, torch.zeros(M, N, dtype=out_dtype)


def contiguous_operands():
    g = gen()
    (a, sfa), (b, sfb) = activations(M, K, g), weights(N, K, g, groups=G)
    m_indices = torch.tensor([0, 1, -1, 1, 0], dtype=torch.int32)
    return a, sfa, b, sfb, torch.zeros(M, N, dtype=torch.bfloat16), m_indices


def masked_operands():
    g = gen()
    (a, sfa), (b, sfb) = activations(M, K, g, groups=G), weights(N, K, g, groups=G)
    return a, sfa, b, sfb, torch.zeros(G, M, N, dtype=torch.bfloat16), torch.tensor([3, 5], dtype=torch.int32)


# ---- opcheck --------------------------------------------------------------------------------------------

def test_opcheck_gemms():
    ops = torch.ops.fgemm
    torch.library.opcheck(ops.fp8_gemm_nt, (*normal_operands(), None), test_utils=WITHOUT_SCHEMA)
    torch.library.opcheck(ops.fp8_gemm_nt, (*normal_operands(torch.float32), torch.ones(M, N)),
                          test_utils=WITHOUT_SCHEMA)
    torch.library.opcheck(ops.m_grouped_fp8_gemm_nt_contiguous, contiguous_operands(), test_utils=WITHOUT_SCHEMA)
    torch.library.opcheck(ops.m_grouped_fp8_gemm_nt_masked, (*masked_operands(), 4), test_utils=WITHOUT_SCHEMA)


@pytest.mark.parametrize("mn_major_scales", [False, True])
def test_opcheck_quantizers_and_layout(mn_major_scales):
    x = torch.randn(M, K, generator=gen())
    torch.library.opcheck(torch.ops.fgemm.per_token_cast_to_fp8, (x, False, mn_major_scales))
    torch.library.opcheck(torch.ops.fgemm.per_block_cast_to_fp8, (x, True))
    torch.library.opcheck(torch.ops.fgemm.to_mn_major_tma_aligned, (torch.rand(G, M, 3),))


# ---- FakeTensor and meta --------------------------------------------------------------------------------

def expected_quantizer_outputs(x, mn_major_scales):
    """Shapes and strides of the eager outputs, to compare the shape-only ones with."""
    outputs = fgemm.per_token_cast_to_fp8(x, mn_major_scales=mn_major_scales) + fgemm.per_block_cast_to_fp8(x)
    return [(t.shape, t.stride(), t.dtype) for t in outputs]


@pytest.mark.parametrize("mn_major_scales", [False, True])
def test_quantizers_on_fake_and_meta_tensors_give_the_eager_shapes(mn_major_scales):
    x = torch.randn(G, M, K)
    expected = expected_quantizer_outputs(x, mn_major_scales)
    with FakeTensorMode() as mode:
        fake_x = mode.from_tensor(x)
        fake = fgemm.per_token_cast_to_fp8(fake_x, mn_major_scales=mn_major_scales) + fgemm.per_block_cast_to_fp8(fake_x)
    meta_x = x.to("meta")
    meta = fgemm.per_token_cast_to_fp8(meta_x, mn_major_scales=mn_major_scales) + fgemm.per_block_cast_to_fp8(meta_x)
    for outputs in (fake, meta):
        assert [(t.shape, t.stride(), t.dtype) for t in outputs] == expected
        assert all(t.device == outputs[0].device for t in outputs)
    assert meta[0].is_meta


def test_layout_helper_on_meta_tensors():
    sf = torch.rand(M, 3)
    aligned = fgemm.get_mn_major_tma_aligned_tensor(sf)
    meta = fgemm.get_mn_major_tma_aligned_tensor(sf.to("meta"))
    assert meta.is_meta and (meta.shape, meta.stride()) == (aligned.shape, aligned.stride())


def gemm_calls():
    """Each GEMM with its operands: (call, operands), the call taking the operands as positional tensors."""
    return [
        (lambda a, sfa, b, sfb, d: fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d), normal_operands()),
        (lambda a, sfa, b, sfb, d, m_indices: fgemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, m_indices),
         contiguous_operands()),
        (lambda a, sfa, b, sfb, d, masked_m: fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, 4),
         masked_operands()),
    ]


@pytest.mark.parametrize("index", range(3))
def test_gemms_run_shape_only_on_fake_and_meta_tensors(index):
    call, operands = gemm_calls()[index]
    call(*(t.to("meta") for t in operands))
    with FakeTensorMode() as mode:
        call(*(mode.from_tensor(t) for t in operands))
    assert (operands[4] == 0).all()  # the real d was never written


# ---- checks on the traced path ---------------------------------------------------------------------------

@pytest.mark.parametrize("options,error", [({"recipe": (1, 128, 64)}, ValueError), ({"recipe_b": (1, 128)}, ValueError),
                                           ({"compiled_dims": 3}, TypeError),
                                           ({"disable_ue8m0_cast": 1}, TypeError)])
def test_options_are_checked_with_the_same_words_when_traced(options, error):
    a, sfa, b, sfb, d = normal_operands()
    with pytest.raises(error) as eager:
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d, **options)
    with pytest.raises(error) as traced:
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d.to("meta"), **options)
    assert str(traced.value) == str(eager.value)


def test_pairs_and_expected_m_are_checked_when_traced():
    a, sfa, b, sfb, d, masked_m = [t.to("meta") for t in masked_operands()]
    with pytest.raises(TypeError, match="argument 'a'"):
        fgemm.m_grouped_fp8_gemm_nt_masked(a, (b, sfb), d, masked_m, 4)
    with pytest.raises(TypeError, match="argument 'expected_m'"):
        fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, 4.0)
    with pytest.raises(TypeError, match="argument 'masked_m'"):
        fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, [3, 5], 4)


# ---- which calls go through the dispatcher ---------------------------------------------------------------

class RecordOps(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the ops that reach the dispatcher while it is active."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def test_an_active_dispatch_mode_sees_the_fgemm_ops():
    a, sfa, b, sfb, d = normal_operands()
    x = torch.randn(M, K)
    with RecordOps() as mode:
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        fgemm.per_token_cast_to_fp8(x)
        fgemm.per_block_cast_to_fp8(x)
        fgemm.get_mn_major_tma_aligned_tensor(torch.rand(M, 3))
    for op in ("fp8_gemm_nt", "per_token_cast_to_fp8", "per_block_cast_to_fp8", "to_mn_major_tma_aligned"):
        assert f"fgemm.{op}.default" in mode.ops
    expected = torch.zeros_like(d)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), expected)
    assert torch.equal(d, expected)  # the op computed what the direct call does


def test_only_plain_eager_tensors_skip_the_dispatcher():
    from fgemm.eager import runs_eagerly
    x = torch.zeros(2)
    assert runs_eagerly(x) and runs_eagerly(torch.nn.Parameter(x)) and runs_eagerly("not a tensor")
    assert not runs_eagerly(x.to("meta"))
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(x)
    assert not runs_eagerly(fake)  # a tensor subclass, even outside its mode
    with RecordOps():
        assert not runs_eagerly(x)


# ---- the version counter of d ---------------------------------------------------------------------------

@pytest.mark.parametrize("requires_grad", [False, True])
def test_each_gemm_bumps_the_version_of_d(requires_grad):
    a, sfa, b, sfb, d = normal_operands(torch.float32)
    d.requires_grad_(requires_grad)
    with torch.no_grad():
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    assert d._version == 2
    a, sfa, b, sfb, d, m_indices = contiguous_operands()
    fgemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, m_indices)
    assert d._version == 1
    a, sfa, b, sfb, d, masked_m = masked_operands()
    fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, 4)
    assert d._version == 1


def test_a_write_into_a_saved_d_is_detected_by_autograd():
    a, sfa, b, sfb, _ = normal_operands(torch.float32)
    d = torch.zeros(M, N)
    x = torch.ones(M, N, requires_grad=True)
    y = (x * d).sum()  # saves d for the backward pass
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# ---- torch.compile --------------------------------------------------------------------------------------

def quantize_and_multiply(x, w):
    """What a linear layer with fgemm does: quantize both operands (the activation scales made MN-major), then
    one GEMM into a new d."""
    x_fp8, x_scales = fgemm.per_token_cast_to_fp8(x)
    a = (x_fp8, fgemm.get_mn_major_tma_aligned_tensor(x_scales))
    b = fgemm.per_block_cast_to_fp8(w)
    d = torch.empty(x.shape[0], w.shape[0], dtype=torch.bfloat16, device=x.device)
    fgemm.fp8_gemm_nt(a, b, d)
    return d


def test_compiled_quantize_and_gemm_is_bit_identical_to_eager():
    torch._dynamo.reset()
    x, w = torch.randn(M, K, generator=gen()), torch.randn(N, K, generator=gen())
    compiled = torch.compile(quantize_and_multiply, fullgraph=True)
    assert torch.equal(compiled(x, w), quantize_and_multiply(x, w))
    x2 = torch.randn(M + 3, K, generator=gen())  # another M: recompiled or dynamic, still exact
    assert torch.equal(compiled(x2, w), quantize_and_multiply(x2, w))


def test_quantized_activations_are_constants_to_autograd_eager_and_compiled():
    x = torch.randn(M, K, generator=gen(), requires_grad=True)
    w = torch.randn(M, K, generator=gen())

    def loss(x, w):  # the quantized copy is a constant; the gradient flows through x * w alone
        x_fp8, x_scales = fgemm.per_token_cast_to_fp8(x)
        w_fp8, w_scales = fgemm.per_block_cast_to_fp8(x)
        assert not (x_fp8.requires_grad or x_scales.requires_grad or w_fp8.requires_grad or w_scales.requires_grad)
        return x_scales.sum() + w_scales.sum() + (x * w).sum()

    torch._dynamo.reset()
    for function in (loss, torch.compile(loss, fullgraph=True)):
        x.grad = None
        function(x, w).backward()
        assert torch.equal(x.grad, w)


def test_compiled_grouped_gemms_write_d_as_eager():
    torch._dynamo.reset()

    def grouped(a, sfa, b, sfb, d_contiguous, m_indices, d_masked, masked_m):
        fgemm.m_grouped_fp8_gemm_nt_contiguous((a[0], sfa[0]), (b, sfb), d_contiguous, m_indices)
        fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d_masked, masked_m, expected_m=4)
        return d_contiguous.float().sum() + d_masked.float().sum()

    a, sfa, b, sfb, d_masked, masked_m = masked_operands()
    m_indices = torch.tensor([0, 1, -1, 1, 0], dtype=torch.int32)
    eager_args = (a, sfa, b, sfb, torch.zeros(M, N, dtype=torch.bfloat16), m_indices, d_masked, masked_m)
    compiled_args = [t.clone() for t in eager_args]
    expected = grouped(*eager_args)
    assert torch.equal(torch.compile(grouped, fullgraph=True)(*compiled_args), expected)
    for compiled_d, eager_d in ((compiled_args[4], eager_args[4]), (compiled_args[6], eager_args[6])):
        assert torch.equal(compiled_d, eager_d)


# ---- the cast-transpose quantizers ----------------------------------------------------------------------

CAST_TRANSPOSE_KS = [128, 0, 256]


@pytest.mark.parametrize("mn_major_scales", [False, True])
def test_opcheck_cast_transpose(mn_major_scales):
    x = torch.randn(200, 300, generator=gen())
    torch.library.opcheck(torch.ops.fgemm.cast_transpose_to_fp8, (x, True, mn_major_scales),
                          test_utils=WITHOUT_SCHEMA)
    grouped_x = torch.randn(384, 100, generator=gen())
    torch.library.opcheck(torch.ops.fgemm.grouped_cast_transpose_to_fp8,
                          (grouped_x, CAST_TRANSPOSE_KS, False, mn_major_scales), test_utils=WITHOUT_SCHEMA)


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("shape", [(200, 300), (3, 200, 136)])
def test_opcheck_per_block_cast_transpose(shape, use_ue8m0):
    x = torch.randn(*shape, generator=gen())
    torch.library.opcheck(torch.ops.fgemm.per_block_cast_transpose_to_fp8, (x, use_ue8m0), test_utils=WITHOUT_SCHEMA)


@pytest.mark.parametrize("mn_major_scales", [False, True])
def test_cast_transpose_on_fake_and_meta_tensors_gives_the_eager_shapes(mn_major_scales):
    x = torch.randn(384, 100)

    def both(x):
        return (fgemm.cast_transpose_to_fp8(x, mn_major_scales=mn_major_scales)
                + fgemm.grouped_cast_transpose_to_fp8(x, CAST_TRANSPOSE_KS, mn_major_scales=mn_major_scales)
                + fgemm.grouped_cast_transpose_to_fp8(x, [100, 0, 284], mn_major_scales=mn_major_scales)
                + fgemm.per_block_cast_transpose_to_fp8(x))

    expected = [(t.shape, t.stride(), t.dtype) for t in both(x)]
    with FakeTensorMode() as mode:
        fake = both(mode.from_tensor(x))
    meta = both(x.to("meta"))
    stack = x.view(3, 128, 100)
    expected += [(t.shape, t.stride(), t.dtype) for t in fgemm.per_block_cast_transpose_to_fp8(stack)]
    with FakeTensorMode() as mode:
        fake += fgemm.per_block_cast_transpose_to_fp8(mode.from_tensor(stack))
    meta += fgemm.per_block_cast_transpose_to_fp8(stack.to("meta"))
    for outputs in (fake, meta):
        assert [(t.shape, t.stride(), t.dtype) for t in outputs] == expected
    assert all(t.is_meta for t in meta)


def test_compiled_cast_transpose_is_bit_identical_to_eager():
    torch._dynamo.reset()

    def quantize_both_ways(x):
        x_fp8, sf, xt_fp8, sft = fgemm.cast_transpose_to_fp8(x)
        _, _, flat, grouped_sft = fgemm.grouped_cast_transpose_to_fp8(x, [128, 256])
        weight_outputs = fgemm.per_block_cast_transpose_to_fp8(x)
        return [t.view(torch.uint8) if t.dtype == FP8 else t
                for t in (x_fp8, sf, xt_fp8, sft, flat, grouped_sft, *weight_outputs)]

    x = torch.randn(384, 200, generator=gen(), requires_grad=True)
    eager = quantize_both_ways(x)
    compiled = torch.compile(quantize_both_ways, fullgraph=True)(x)
    assert all(torch.equal(a, b) for a, b in zip(compiled, eager))
    assert not any(t.requires_grad for t in compiled)
