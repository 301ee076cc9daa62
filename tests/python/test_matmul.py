"""fgemm.matmul on the CPU: a @ b for torch tensors and NumPy arrays of any shape, FP8 against FP64, the kind
and dtype of what it returns, BF16 and FP16 against the product of the rounded operands, the precision "auto"
picks, and the precisions not built."""

import logging

import numpy as np
import pytest
import torch

import fgemm

# calc_diff of the FP8 GEMM against FP64 on random normal data: the FP8 rounding of both operands (3 mantissa
# bits, relative error up to 2^-4 per element) dominates: about 7e-4 on normal data (README, Accuracy).
FP8_CALC_DIFF_BOUND = 3e-3


def random(shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("m,k,n", [(1, 128, 128), (7, 100, 30), (130, 300, 257), (3, 1, 5), (64, 16, 1)])
def test_tensors_multiply_as_torch_matmul_within_fp8_error(m, k, n):
    a, b = random((m, k)), random((k, n), seed=1)
    result = fgemm.matmul(a, b, precision="fp8")
    assert result.shape == (m, n) and result.dtype == torch.float32 and result.is_contiguous()
    assert fgemm.calc_diff(result, a.double() @ b.double()) < FP8_CALC_DIFF_BOUND


def test_the_result_is_the_fp8_gemm_of_the_quantized_operands_exactly():
    a, b = random((33, 256), dtype=torch.bfloat16), random((256, 64), dtype=torch.bfloat16, seed=1)
    result = fgemm.matmul(a, b)
    d = torch.empty(33, 64, dtype=torch.bfloat16)
    fgemm.fp8_gemm_nt(fgemm.per_token_cast_to_fp8(a), fgemm.per_block_cast_to_fp8(b.T), d)
    assert result.dtype == torch.bfloat16 and torch.equal(result, d)


def test_numpy_in_numpy_out():
    a, b = random((20, 200)).double().numpy(), random((200, 24), seed=1).double().numpy()
    result = fgemm.matmul(a, b)
    assert isinstance(result, np.ndarray) and result.dtype == np.float64 and result.shape == (20, 24)
    assert fgemm.calc_diff(torch.from_numpy(result), torch.from_numpy(a @ b)) < FP8_CALC_DIFF_BOUND
    assert fgemm.matmul(a.astype(np.float32), b.astype(np.float32), out_dtype=np.float16).dtype == np.float16


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_out_dtype(out_dtype):
    assert fgemm.matmul(random((4, 32)), random((32, 8)), out_dtype=out_dtype).dtype == out_dtype


def test_empty_dimensions():
    assert fgemm.matmul(random((0, 32)), random((32, 8))).shape == (0, 8)
    assert fgemm.matmul(random((4, 32)), random((32, 0))).shape == (4, 0)
    assert torch.equal(fgemm.matmul(random((4, 0)), random((0, 8))), torch.zeros(4, 8))


def test_auto_picks_fp8_on_the_cpu_and_says_so(caplog):
    assert fgemm.auto_precision() == fgemm.auto_precision("cpu") == "fp8"
    a, b = random((4, 32)), random((32, 8))
    with caplog.at_level(logging.INFO, logger="fgemm"):
        auto = fgemm.matmul(a, b, precision="auto")
    assert "precision='auto' chose 'fp8' on cpu" in caplog.text
    assert torch.equal(auto, fgemm.matmul(a, b, precision="fp8"))


def test_precisions_not_built_say_so():
    with pytest.raises(NotImplementedError, match="INT8 GEMMs are not available in this build"):
        fgemm.matmul(random((4, 32)), random((32, 8)), precision="int8")


@pytest.mark.parametrize("precision,dtype", [("bf16", torch.bfloat16), ("fp16", torch.float16)])
@pytest.mark.parametrize("m,k,n", [(7, 100, 30), (130, 300, 257), (3, 1, 5), (0, 16, 8), (4, 32, 0)])
def test_16bit_precisions_are_the_product_of_the_rounded_operands(precision, dtype, m, k, n):
    a, b = random((m, k)), random((k, n), seed=1)
    result = fgemm.matmul(a, b, precision=precision)
    assert result.shape == (m, n) and result.dtype == torch.float32
    # The rounding of the operands is the whole error: FP32 accumulation is exact far below it.
    assert fgemm.calc_diff(result, a.to(dtype).double() @ b.to(dtype).double()) < 1e-6
    assert fgemm.matmul(a, b, precision=precision, out_dtype=dtype).dtype == dtype


@pytest.mark.parametrize(
    "a,b,kwargs,error,argument",
    [
        ([[1.0]], random((1, 1)), {}, TypeError, "a"),
        (random((4, 32)), random((32, 8)).numpy(), {}, TypeError, "b"),
        (torch.ones(4, 32, dtype=torch.int32), random((32, 8)), {}, TypeError, "a"),
        (random((2, 4, 32)), random((32, 8)), {}, ValueError, "a"),
        (random((4, 32)), random((31, 8)), {}, ValueError, "b"),
        (random((4, 32)), random((32, 8)), {"precision": "fp4"}, ValueError, "precision"),
        (random((4, 32)), random((32, 8)), {"out_dtype": torch.int32}, TypeError, "out_dtype"),
        (random((4, 32)).numpy(), random((32, 8)).numpy(), {"out_dtype": torch.bfloat16}, TypeError, "out_dtype"),
    ],
)
def test_bad_arguments_name_themselves(a, b, kwargs, error, argument):
    with pytest.raises(error, match=f"argument '{argument}'"):
        fgemm.matmul(a, b, **kwargs)


@pytest.mark.gpu
def test_matmul_on_the_gpu():
    a, b = random((300, 512)), random((512, 1000), seed=1)
    result = fgemm.matmul(a, b, device="cuda")
    assert result.device.type == "cpu"
    assert fgemm.calc_diff(result, a.double() @ b.double()) < FP8_CALC_DIFF_BOUND
    on_gpu = fgemm.matmul(a.cuda(), b.cuda(), out_dtype=torch.bfloat16)
    assert on_gpu.is_cuda and fgemm.calc_diff(on_gpu.cpu(), a.double() @ b.double()) < FP8_CALC_DIFF_BOUND
    assert fgemm.auto_precision("cuda") == "fp8"
    for precision, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        on_gpu = fgemm.matmul(a.cuda(), b.cuda(), precision=precision)
        assert fgemm.calc_diff(on_gpu.cpu(), a.to(dtype).double() @ b.to(dtype).double()) < 1e-6
