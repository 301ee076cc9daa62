"""Bad input of the BF16 and FP16 GEMMs, passed through Python, raises ValueError or TypeError naming the argument
(and, for a transposed view, the function that takes it). Nothing here reaches a backend."""

import pytest
import torch

import fgemm

BF16, FP16 = torch.bfloat16, torch.float16
M, N, K, G = 4, 24, 64, 2


def expect(error, argument, call, *args, match="", **kwargs):
    with pytest.raises(error, match=f"argument '{argument}'{match}"):
        call(*args, **kwargs)


def dense_args(dtype=BF16):
    return torch.zeros(M, K, dtype=dtype), torch.zeros(N, K, dtype=dtype), torch.empty(M, N, dtype=dtype)


def k_grouped_args(ks=(128, 0)):
    a, b = torch.zeros(sum(ks), M * 2, dtype=BF16), torch.zeros(sum(ks), N, dtype=BF16)
    return a, b, torch.empty(len(ks), M * 2, N), list(ks), torch.tensor(ks, dtype=torch.int32)


# ---- dtypes ---------------------------------------------------------------------------------------------

def test_fp16_a_with_bf16_b():
    a, b, d = dense_args(FP16)
    expect(TypeError, "b", fgemm.fp16_gemm_nt, a, b.to(BF16), d)


def test_a_of_the_other_16_bit_type():
    a, b, d = dense_args()
    expect(TypeError, "a", fgemm.bf16_gemm_nt, a.to(FP16), b, d)


@pytest.mark.parametrize("dtype", [FP16, torch.int32, torch.float8_e4m3fn])
def test_d_neither_the_inputs_dtype_nor_float32(dtype):
    a, b, d = dense_args()
    expect(TypeError, "d", fgemm.bf16_gemm_nt, a, b, d.to(dtype))


def test_c_neither_float32_nor_ds_dtype():
    a, b, d = dense_args()
    expect(TypeError, "c", fgemm.bf16_gemm_nt, a, b, d, torch.zeros(M, N, dtype=FP16),
           match=" expected dtype float32 or d's bfloat16, got float16")
    expect(TypeError, "c", fgemm.bf16_gemm_nt, a, b, d.float(), torch.zeros(M, N, dtype=BF16),
           match=" expected dtype float32, got bfloat16")


def test_k_grouped_d_not_float32():
    a, b, d, ks, ks_tensor = k_grouped_args()
    expect(TypeError, "d", fgemm.k_grouped_bf16_gemm_tn_contiguous, a, b, d.to(BF16), ks, ks_tensor)


def test_float16_is_still_refused_by_the_fp8_gemm():
    a, b, d = dense_args(FP16)
    expect(TypeError, "a", fgemm.fp8_gemm_nt, (a, torch.ones(M, 1)), (b, torch.ones(1, 1)), d)


# ---- storage orders -------------------------------------------------------------------------------------

@pytest.mark.parametrize("letters,argument,other", [("nt", "a", "tt"), ("nt", "b", "nn"), ("tn", "a", "nn"),
                                                    ("tn", "b", "tt")])
def test_a_transposed_view_names_the_function_that_takes_it(letters, argument, other):
    a, b, d = dense_args()
    if letters == "tn":
        a, b = torch.zeros(K, M, dtype=BF16), torch.zeros(K, N, dtype=BF16)
    transposed = {"a": a.T.contiguous().T, "b": b.T.contiguous().T}  # the same shape, the other storage order
    args = (transposed["a"], b) if argument == "a" else (a, transposed["b"])
    expect(ValueError, argument, getattr(fgemm, f"bf16_gemm_{letters}"), *args, d,
           match=f".*call fgemm.bf16_gemm_{other}")


def test_contiguous_b_transposed_names_the_nn_function():
    a = torch.zeros(M, K, dtype=BF16)
    b = torch.zeros(G, K, N, dtype=BF16).transpose(1, 2)  # [G, N, K] with N contiguous
    expect(ValueError, "b", fgemm.m_grouped_bf16_gemm_nt_contiguous, a, b, torch.empty(M, N),
           torch.zeros(M, dtype=torch.int32), match=".*call fgemm.m_grouped_bf16_gemm_nn_contiguous")


# ---- shapes ---------------------------------------------------------------------------------------------

def test_mismatched_k():
    a, _, d = dense_args()
    expect(ValueError, "b", fgemm.bf16_gemm_nt, a, torch.zeros(N, K + 8, dtype=BF16), d)


def test_mismatched_k_in_the_nn_layout():
    a, _, d = dense_args()
    expect(ValueError, "b", fgemm.bf16_gemm_nn, a, torch.zeros(K + 8, N, dtype=BF16), d)


@pytest.mark.parametrize("shape", [(M + 1, N), (N, M)])
def test_wrong_d_shape(shape):
    a, b, _ = dense_args()
    expect(ValueError, "d", fgemm.bf16_gemm_nt, a, b, torch.empty(shape, dtype=BF16))


def test_wrong_c_shape():
    a, b, d = dense_args()
    expect(ValueError, "c", fgemm.bf16_gemm_nt, a, b, d.float(), torch.zeros(M, N + 4))


def test_row_stride_not_a_multiple_of_16_bytes():
    a = torch.zeros(M, K + 4, dtype=BF16)[:, :K]
    _, b, d = dense_args()
    expect(ValueError, "a", fgemm.bf16_gemm_nt, a, b, d, match=".*16 bytes")


# ---- grouped layouts ------------------------------------------------------------------------------------

def test_grouped_layout_of_the_wrong_length_for_each_form():
    a, b = torch.zeros(M, K, dtype=BF16), torch.zeros(G, N, K, dtype=BF16)
    gemm = fgemm.m_grouped_bf16_gemm_nt_contiguous
    expect(ValueError, "grouped_layout", gemm, a, b, torch.empty(M, N), torch.zeros(G, dtype=torch.int32))
    expect(ValueError, "grouped_layout", gemm, a, b, torch.empty(M, N), torch.zeros(M, dtype=torch.int32),
           use_psum_layout=True)


def test_use_psum_layout_not_a_bool():
    a, b = torch.zeros(M, K, dtype=BF16), torch.zeros(G, N, K, dtype=BF16)
    expect(TypeError, "use_psum_layout", fgemm.m_grouped_fp16_gemm_nt_contiguous, a.to(FP16), b.to(FP16),
           torch.empty(M, N), torch.zeros(G, dtype=torch.int32), use_psum_layout=1)


@pytest.mark.parametrize("expected_m", [0, -3])
def test_expected_m_not_positive(expected_m):
    a, b = torch.zeros(G, M, K, dtype=BF16), torch.zeros(G, N, K, dtype=BF16)
    expect(ValueError, "expected_m", fgemm.m_grouped_bf16_gemm_nt_masked, a, b, torch.empty(G, M, N),
           torch.zeros(G, dtype=torch.int32), expected_m)


def test_masked_m_of_the_wrong_length():
    a, b = torch.zeros(G, M, K, dtype=BF16), torch.zeros(G, N, K, dtype=BF16)
    expect(ValueError, "masked_m", fgemm.m_grouped_bf16_gemm_nt_masked, a, b, torch.empty(G, M, N),
           torch.zeros(G + 1, dtype=torch.int32), 1)


def test_ks_that_disagree_with_the_rows_of_a():
    a, b, d, _, ks_tensor = k_grouped_args()
    expect(ValueError, "ks", fgemm.k_grouped_bf16_gemm_tn_contiguous, a, b, d, [128, 128], ks_tensor,
           match=" sums to 256")


def test_ks_not_multiples_of_the_alignment():
    a, b, d, _, ks_tensor = k_grouped_args()
    expect(ValueError, "ks", fgemm.k_grouped_bf16_gemm_tn_contiguous, a, b, d, [64, 64], ks_tensor)


def test_ks_of_another_count_than_the_experts_of_d():
    a, b, d, _, _ = k_grouped_args()
    expect(ValueError, "ks", fgemm.k_grouped_bf16_gemm_tn_contiguous, a, b, d, [128], torch.tensor([128]).int())


@pytest.mark.parametrize("ks", [128, None, [128.0, 0]])
def test_ks_not_a_list_of_ints(ks):
    a, b, d, _, ks_tensor = k_grouped_args()
    expect(TypeError, "ks", fgemm.k_grouped_bf16_gemm_tn_contiguous, a, b, d, ks, ks_tensor)


def test_ks_tensor_of_the_wrong_length_or_dtype():
    a, b, d, ks, _ = k_grouped_args()
    gemm = fgemm.k_grouped_bf16_gemm_tn_contiguous
    expect(ValueError, "ks_tensor", gemm, a, b, d, ks, torch.zeros(3, dtype=torch.int32))
    expect(TypeError, "ks_tensor", gemm, a, b, d, ks, torch.zeros(2, dtype=torch.int64))


# ---- DeepGEMM's options and the traced path -------------------------------------------------------------

def test_compiled_dims_not_a_str():
    a, b, d = dense_args()
    expect(TypeError, "compiled_dims", fgemm.bf16_gemm_tt, a.T.contiguous(), b, d, compiled_dims=1)


def meta(*tensors):
    return [t.to("meta") if isinstance(t, torch.Tensor) else t for t in tensors]


@pytest.mark.parametrize("call,args,kwargs,error,argument", [
    (fgemm.bf16_gemm_nt, dense_args(), {"compiled_dims": 1}, TypeError, "compiled_dims"),
    (fgemm.m_grouped_bf16_gemm_nt_contiguous,
     (torch.zeros(M, K, dtype=BF16), torch.zeros(G, N, K, dtype=BF16), torch.empty(M, N),
      torch.zeros(G, dtype=torch.int32)), {"use_psum_layout": "yes"}, TypeError, "use_psum_layout"),
    (fgemm.m_grouped_bf16_gemm_nt_masked,
     (torch.zeros(G, M, K, dtype=BF16), torch.zeros(G, N, K, dtype=BF16), torch.empty(G, M, N),
      torch.zeros(G, dtype=torch.int32), 1.5), {}, TypeError, "expected_m"),
    (fgemm.k_grouped_bf16_gemm_tn_contiguous, k_grouped_args()[:3] + (128, k_grouped_args()[4]), {}, TypeError,
     "ks"),
    (fgemm.k_grouped_bf16_gemm_tn_contiguous, k_grouped_args()[:4] + ([128, 0],), {}, TypeError, "ks_tensor"),
])
def test_python_arguments_are_checked_with_the_same_words_when_traced(call, args, kwargs, error, argument):
    with pytest.raises(error, match=f"argument '{argument}'") as eager:
        call(*args, **kwargs)
    with pytest.raises(error) as traced:
        call(*meta(*args), **kwargs)
    assert str(traced.value) == str(eager.value)
