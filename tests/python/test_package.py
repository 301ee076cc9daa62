"""The installed package: its names and an extension that is not tied to one torch build."""

import pathlib

import fgemm

DEEPGEMM_NAMES = [
    "fp8_gemm_nt", "m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nt_masked",
    "k_grouped_fp8_gemm_nt_contiguous",
    "gemm_fp8_fp8_bf16_nt", "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous", "m_grouped_gemm_fp8_fp8_bf16_nt_masked",
    "set_num_sms", "get_num_sms", "set_pdl", "get_pdl", "get_tma_aligned_size", "get_mn_major_tma_aligned_tensor",
    "get_col_major_tma_aligned_tensor", "get_m_alignment_for_contiguous_layout", "get_mk_alignment_for_contiguous_layout",
    "transform_sf_into_required_layout", "ceil_div", "calc_diff", "per_token_cast_to_fp8", "per_block_cast_to_fp8",
    *(f"{dtype}_gemm_{letters}" for dtype in ("bf16", "fp16") for letters in ("nt", "nn", "tn", "tt")),
    *(f"m_grouped_{dtype}_gemm_{letters}_contiguous" for dtype in ("bf16", "fp16") for letters in ("nt", "nn")),
    "m_grouped_bf16_gemm_nt_masked", "m_grouped_fp16_gemm_nt_masked",
    "k_grouped_bf16_gemm_tn_contiguous", "k_grouped_fp16_gemm_tn_contiguous",
]


FGEMM_NAMES = ["matmul", "auto_precision", "is_supported", "warmup", "WarmedKernel", "int8_gemm_nt",
               "m_grouped_int8_gemm_nt_contiguous", "m_grouped_int8_gemm_nt_masked", "per_token_cast_to_int8",
               "per_channel_cast_to_int8", "per_token_group_cast_to_int8", "per_block_cast_to_int8",
               "cast_transpose_to_fp8", "grouped_cast_transpose_to_fp8", "per_block_cast_transpose_to_fp8"]


def test_deepgemm_names_and_fgemms_own_are_exported():
    assert sorted(fgemm.__all__) == sorted(DEEPGEMM_NAMES + FGEMM_NAMES)
    for name in DEEPGEMM_NAMES:
        assert callable(getattr(fgemm, name)), name


def test_legacy_names_are_the_same_operations():
    assert fgemm.gemm_fp8_fp8_bf16_nt is fgemm.fp8_gemm_nt
    assert fgemm.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous is fgemm.m_grouped_fp8_gemm_nt_contiguous
    assert fgemm.m_grouped_gemm_fp8_fp8_bf16_nt_masked is fgemm.m_grouped_fp8_gemm_nt_masked


def test_extension_links_no_part_of_torch():
    # A shared library names every library it needs in its dynamic string table: torch's are not there.
    extension = pathlib.Path(fgemm._C.__file__).read_bytes()
    for torch_library in (b"libtorch", b"libc10"):
        assert torch_library not in extension


def test_nvrtc_is_looked_for_in_the_lib_folders_of_nvidia_wheels(tmp_path):
    for folder, library in [("cu13/lib", "libnvrtc.so.13"), ("cuda_nvrtc/lib", "libnvrtc.so.12"),
                            ("cublas/lib", "libcublas.so.12"), ("cu13/include", "libnvrtc.so.13")]:
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / library).touch()
    found = fgemm._nvrtc.nvrtc_wheel_dirs([tmp_path])
    assert found == [str(tmp_path / "cu13" / "lib"), str(tmp_path / "cuda_nvrtc" / "lib")]
