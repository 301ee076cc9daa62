"""fgemm: FP8 GEMMs with fine-grained scaling (DeepSeek-V3's recipe), BF16 and FP16 GEMMs with DeepGEMM's
Python names, and INT8 GEMMs (W8A8 per token and channel, or DeepSeek's blocks).

CUDA tensors run on a Hopper GPU on the current torch stream; CPU tensors run the CPU backend. Every argument
is checked: a wrong dtype, shape, stride, device or alignment raises ValueError or TypeError naming the
argument. The operations are also torch.ops.fgemm custom ops (torch.compile, FakeTensor and meta tensors work);
fgemm.matmul multiplies unquantized tensors or NumPy arrays; fgemm.deep_gemm stands in for DeepGEMM; fgemm.nn holds
FP8 training layers with autograd (Linear, GroupedLinear).
"""

# The version CMakeLists.txt's project() gives, compiled into the extension: right even where no package
# metadata is installed (a build tree).
from ._C import __version__
from .gemm import (fp8_gemm_nt, k_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_contiguous,
                   m_grouped_fp8_gemm_nt_masked)
from .gemm_16bit import (
    bf16_gemm_nn,
    bf16_gemm_nt,
    bf16_gemm_tn,
    bf16_gemm_tt,
    fp16_gemm_nn,
    fp16_gemm_nt,
    fp16_gemm_tn,
    fp16_gemm_tt,
    k_grouped_bf16_gemm_tn_contiguous,
    k_grouped_fp16_gemm_tn_contiguous,
    m_grouped_bf16_gemm_nn_contiguous,
    m_grouped_bf16_gemm_nt_contiguous,
    m_grouped_bf16_gemm_nt_masked,
    m_grouped_fp16_gemm_nn_contiguous,
    m_grouped_fp16_gemm_nt_contiguous,
    m_grouped_fp16_gemm_nt_masked,
)
from .gemm_int8 import int8_gemm_nt, m_grouped_int8_gemm_nt_contiguous, m_grouped_int8_gemm_nt_masked
from ._logging import route_native_logs as _route_native_logs
from ._nvrtc import add_nvrtc_wheel_dirs as _add_nvrtc_wheel_dirs
from .layout import (
    ceil_div,
    get_col_major_tma_aligned_tensor,
    get_m_alignment_for_contiguous_layout,
    get_mn_major_tma_aligned_tensor,
    get_tma_aligned_size,
    transform_sf_into_required_layout,
)
from .matmul import auto_precision, matmul
# The training layers: pure Python over fgemm's GEMMs and quantizers, a few milliseconds to import.
from . import nn
from .numeric import calc_diff
from .quantize import (
    cast_transpose_to_fp8,
    grouped_cast_transpose_to_fp8,
    per_block_cast_to_fp8,
    per_block_cast_transpose_to_fp8,
    per_token_cast_to_fp8,
)
from .quantize_int8 import (
    per_block_cast_to_int8,
    per_channel_cast_to_int8,
    per_token_cast_to_int8,
    per_token_group_cast_to_int8,
)
from .settings import get_num_sms, get_pdl, set_num_sms, set_pdl
from .support import is_supported
from .warmup import WarmedKernel, warmup

_add_nvrtc_wheel_dirs()
_route_native_logs()

# DeepGEMM's earlier names of the same operations.
gemm_fp8_fp8_bf16_nt = fp8_gemm_nt
m_grouped_gemm_fp8_fp8_bf16_nt_contiguous = m_grouped_fp8_gemm_nt_contiguous
m_grouped_gemm_fp8_fp8_bf16_nt_masked = m_grouped_fp8_gemm_nt_masked
# DeepGEMM's later name (its K-grouped layout shares the alignment; fgemm's grouped layouts group M only).
get_mk_alignment_for_contiguous_layout = get_m_alignment_for_contiguous_layout

__all__ = [
    "fp8_gemm_nt",
    "m_grouped_fp8_gemm_nt_contiguous",
    "m_grouped_fp8_gemm_nt_masked",
    "k_grouped_fp8_gemm_nt_contiguous",
    "gemm_fp8_fp8_bf16_nt",
    "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous",
    "m_grouped_gemm_fp8_fp8_bf16_nt_masked",
    "bf16_gemm_nt",
    "bf16_gemm_nn",
    "bf16_gemm_tn",
    "bf16_gemm_tt",
    "m_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nn_contiguous",
    "m_grouped_bf16_gemm_nt_masked",
    "k_grouped_bf16_gemm_tn_contiguous",
    "fp16_gemm_nt",
    "fp16_gemm_nn",
    "fp16_gemm_tn",
    "fp16_gemm_tt",
    "m_grouped_fp16_gemm_nt_contiguous",
    "m_grouped_fp16_gemm_nn_contiguous",
    "m_grouped_fp16_gemm_nt_masked",
    "k_grouped_fp16_gemm_tn_contiguous",
    "int8_gemm_nt",
    "m_grouped_int8_gemm_nt_contiguous",
    "m_grouped_int8_gemm_nt_masked",
    "set_num_sms",
    "get_num_sms",
    "set_pdl",
    "get_pdl",
    "get_m_alignment_for_contiguous_layout",
    "get_mk_alignment_for_contiguous_layout",
    "get_tma_aligned_size",
    "get_mn_major_tma_aligned_tensor",
    "get_col_major_tma_aligned_tensor",
    "transform_sf_into_required_layout",
    "ceil_div",
    "calc_diff",
    "per_token_cast_to_fp8",
    "per_block_cast_to_fp8",
    # fgemm's own, beyond DeepGEMM's names.
    "matmul",
    "auto_precision",
    "is_supported",
    "warmup",
    "WarmedKernel",
    "per_token_cast_to_int8",
    "per_channel_cast_to_int8",
    "per_token_group_cast_to_int8",
    "per_block_cast_to_int8",
    "cast_transpose_to_fp8",
    "grouped_cast_transpose_to_fp8",
    "per_block_cast_transpose_to_fp8",
]
