from collections.abc import Sequence


def per_token_cast_to_fp8(x: object | None, x_fp8: object | None, sf: object | None, use_ue8m0: bool) -> None:
    """
    Quantizes x [M, K] (or [G, M, K]), bfloat16 or float32, into x_fp8 (float8_e4m3fn, the shape of x) and sf (float32 [M, ceil(K/128)], any strides): one scale per 1 x 128 block.
    """

def per_block_cast_to_fp8(w: object | None, w_fp8: object | None, sf: object | None, use_ue8m0: bool) -> None:
    """
    Quantizes w [N, K] (or [G, N, K]), bfloat16 or float32, into w_fp8 (float8_e4m3fn, the shape of w) and sf (float32 [ceil(N/128), ceil(K/128)], any strides): one scale per 128 x 128 block.
    """

def cast_transpose_to_fp8(x: object | None, x_fp8: object | None, sf: object | None, xt_fp8: object | None, sft: object | None, use_ue8m0: bool) -> None:
    """
    Quantizes x [M, K], bfloat16 or float32, read once, into x_fp8 (float8_e4m3fn [M, K]) and sf (float32 [M, ceil(K/128)]) as per_token_cast_to_fp8(x), and into xt_fp8 (float8_e4m3fn [K, M]) and sft (float32 [K, ceil(M/128)]) as per_token_cast_to_fp8(x.t()); sf and sft with any strides.
    """

def per_block_cast_transpose_to_fp8(x: object | None, x_fp8: object | None, sf: object | None, xt_fp8: object | None, sft: object | None, use_ue8m0: bool) -> None:
    """
    Quantizes x [N, K], bfloat16 or float32, read once, into x_fp8 (float8_e4m3fn [N, K]) and sf (float32 [ceil(N/128), ceil(K/128)]) as per_block_cast_to_fp8(x), and into xt_fp8 (float8_e4m3fn [K, N]) and sft (float32 [ceil(K/128), ceil(N/128)]) as per_block_cast_to_fp8(x.t()); or each matrix of a stack x [G, N, K] so, every output with a leading G.
    """

def grouped_cast_transpose_to_fp8(x: object | None, ks: object | None, x_fp8: object | None, sf: object | None, xt_fp8: object | None, sft: object | None, use_ue8m0: bool) -> None:
    """
    Quantizes x [sum(ks), H] as cast_transpose_to_fp8, expert g owning the ks[g] rows (possibly 0) after those of the experts before it, each expert's rows padded with zero rows to p_g, ks[g] rounded up to a multiple of 128, in the outputs (P rows in all): x_fp8 [P, H], sf [P, ceil(H/128)], xt_fp8 float8_e4m3fn [P * H], expert g's [H, p_g] block at element sum(p[:g]) * H, and sft float32 [H, P/128].
    """

def copy_scales(sf: object | None, out: object | None) -> None:
    """
    Copies float32 scales sf [M, KB] (or [G, M, KB]) into out, of the same shape and any layout.
    """

def per_token_cast_to_int8(x: object | None, x_int8: object | None, sf: object | None) -> None:
    """
    Quantizes x [M, K] (or [G, M, K]), bfloat16, float16 or float32, into x_int8 (int8, the shape of x) and sf (float32 [M], any strides): one scale per token (row).
    """

def per_channel_cast_to_int8(w: object | None, w_int8: object | None, sf: object | None) -> None:
    """
    Quantizes w [N, K] (or [G, N, K]), bfloat16, float16 or float32, into w_int8 (int8, the shape of w) and sf (float32 [N], any strides): one scale per output channel (row).
    """

def per_token_group_cast_to_int8(x: object | None, x_int8: object | None, sf: object | None, group_size: object | None) -> None:
    """
    Quantizes x [M, K] (or [G, M, K]), bfloat16, float16 or float32, into x_int8 (int8, the shape of x) and sf (float32 [M, ceil(K/group_size)], any strides): one scale per 1 x group_size block, group_size 32, 64 or 128.
    """

def per_block_cast_to_int8(w: object | None, w_int8: object | None, sf: object | None) -> None:
    """
    Quantizes w [N, K] (or [G, N, K]), bfloat16, float16 or float32, into w_int8 (int8, the shape of w) and sf (float32 [ceil(N/128), ceil(K/128)], any strides): one scale per 128 x 128 block.
    """

def warmup(shapes: Sequence[tuple[int, int, int, int, str, bool, bool, bool, bool]], m_min: int, m_max: int, device: int | None, threads: int, on_kernel: object | None) -> list[tuple[str, bool, float]]:
    """
    Compiles (and loads on `device`, unless None) every kernel the heuristics choose for the shapes, given as (GemmOperation code, n, k, num_groups, D's dtype name, with_c, sfa MN-major, psum layout, packed D) tuples, with M in [m_min, m_max], on `threads` threads (0: one per core); returns (kernel name, compiled now, seconds) tuples. on_kernel(name, compiled, seconds, done, total), if given, follows each kernel.
    """

def _set_log_handler(handler: object | None) -> None:
    """
    Sends the library's diagnostics to handler(level, message), level 0 debug, 1 info, 2 warning; None sends them to standard error again.
    """

def bf16_gemm_nt(a: object | None, b: object | None, d: object | None, c: object | None = None, compiled_dims: object | None = 'nk') -> None:
    """
    D = a @ b^T (+ C), written into d: a [M, K] and b [N, K] bfloat16, d [M, N] bfloat16 or float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension.
    """

def bf16_gemm_nn(a: object | None, b: object | None, d: object | None, c: object | None = None, compiled_dims: object | None = 'nk') -> None:
    """
    D = a @ b (+ C), written into d: a [M, K] and b [K, N] bfloat16, d [M, N] bfloat16 or float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension.
    """

def bf16_gemm_tn(a: object | None, b: object | None, d: object | None, c: object | None = None, compiled_dims: object | None = 'mn') -> None:
    """
    D = a^T @ b (+ C), written into d: a [K, M] and b [K, N] bfloat16, d [M, N] bfloat16 or float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension.
    """

def bf16_gemm_tt(a: object | None, b: object | None, d: object | None, c: object | None = None, compiled_dims: object | None = 'mn') -> None:
    """
    D = a^T @ b^T (+ C), written into d: a [K, M] and b [N, K] bfloat16, d [M, N] bfloat16 or float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension.
    """

def fp16_gemm_nt(a: object | None, b: object | None, d: object | None, c: object | None = None, compiled_dims: object | None = 'nk') -> None:
    """
    D = a @ b^T (+ C), written into d: a [M, K] and b [N, K] float16, d [M, N] float16 or float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension.
    """

def fp16_gemm_nn(a: object | None, b: object | None, d: object | None, c: object | None = None, compiled_dims: object | None = 'nk') -> None:
    """
    D = a @ b (+ C), written into d: a [M, K] and b [K, N] float16, d [M, N] float16 or float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension.
    """

def fp16_gemm_tn(a: object | None, b: object | None, d: object | None, c: object | None = None, compiled_dims: object | None = 'mn') -> None:
    """
    D = a^T @ b (+ C), written into d: a [K, M] and b [K, N] float16, d [M, N] float16 or float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension.
    """

def fp16_gemm_tt(a: object | None, b: object | None, d: object | None, c: object | None = None, compiled_dims: object | None = 'mn') -> None:
    """
    D = a^T @ b^T (+ C), written into d: a [K, M] and b [N, K] float16, d [M, N] float16 or float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension.
    """

def m_grouped_bf16_gemm_nt_contiguous(a: object | None, b: object | None, d: object | None, grouped_layout: object | None, compiled_dims: object | None = 'nk', use_psum_layout: object | None = False) -> None:
    """
    Grouped GEMM, contiguous layout (MoE): a [M_sum, K] and b [G, N, K] bfloat16, d [M_sum, N] bfloat16 or float32. grouped_layout int32 gives the groups: [M_sum], the group of each row, -1 for a padding row; or, with use_psum_layout=True, [G], the prefix sums of the groups' rows (group g's rows run from grouped_layout[g - 1] rounded up to a multiple of 128, 0 for g = 0, to grouped_layout[g]). Rows in no group keep what d held. compiled_dims may be any str.
    """

def m_grouped_bf16_gemm_nn_contiguous(a: object | None, b: object | None, d: object | None, grouped_layout: object | None, compiled_dims: object | None = 'nk', use_psum_layout: object | None = False) -> None:
    """
    Grouped GEMM, contiguous layout (MoE): a [M_sum, K] and b [G, K, N] bfloat16, d [M_sum, N] bfloat16 or float32. grouped_layout int32 gives the groups: [M_sum], the group of each row, -1 for a padding row; or, with use_psum_layout=True, [G], the prefix sums of the groups' rows (group g's rows run from grouped_layout[g - 1] rounded up to a multiple of 128, 0 for g = 0, to grouped_layout[g]). Rows in no group keep what d held. compiled_dims may be any str.
    """

def m_grouped_fp16_gemm_nt_contiguous(a: object | None, b: object | None, d: object | None, grouped_layout: object | None, compiled_dims: object | None = 'nk', use_psum_layout: object | None = False) -> None:
    """
    Grouped GEMM, contiguous layout (MoE): a [M_sum, K] and b [G, N, K] float16, d [M_sum, N] float16 or float32. grouped_layout int32 gives the groups: [M_sum], the group of each row, -1 for a padding row; or, with use_psum_layout=True, [G], the prefix sums of the groups' rows (group g's rows run from grouped_layout[g - 1] rounded up to a multiple of 128, 0 for g = 0, to grouped_layout[g]). Rows in no group keep what d held. compiled_dims may be any str.
    """

def m_grouped_fp16_gemm_nn_contiguous(a: object | None, b: object | None, d: object | None, grouped_layout: object | None, compiled_dims: object | None = 'nk', use_psum_layout: object | None = False) -> None:
    """
    Grouped GEMM, contiguous layout (MoE): a [M_sum, K] and b [G, K, N] float16, d [M_sum, N] float16 or float32. grouped_layout int32 gives the groups: [M_sum], the group of each row, -1 for a padding row; or, with use_psum_layout=True, [G], the prefix sums of the groups' rows (group g's rows run from grouped_layout[g - 1] rounded up to a multiple of 128, 0 for g = 0, to grouped_layout[g]). Rows in no group keep what d held. compiled_dims may be any str.
    """

def m_grouped_bf16_gemm_nt_masked(a: object | None, b: object | None, d: object | None, masked_m: object | None, expected_m: object | None, compiled_dims: object | None = 'nk') -> None:
    """
    Grouped GEMM, masked layout (MoE): d[g, :masked_m[g]] = a[g, :masked_m[g]] @ b[g]^T, with a [G, M_max, K] and b [G, N, K] bfloat16, d [G, M_max, N] bfloat16 or float32, masked_m int32 [G] on the device of a (never read by the host; rows past it keep what d held), expected_m a positive hint of the typical masked_m. compiled_dims may be any str.
    """

def m_grouped_fp16_gemm_nt_masked(a: object | None, b: object | None, d: object | None, masked_m: object | None, expected_m: object | None, compiled_dims: object | None = 'nk') -> None:
    """
    Grouped GEMM, masked layout (MoE): d[g, :masked_m[g]] = a[g, :masked_m[g]] @ b[g]^T, with a [G, M_max, K] and b [G, N, K] float16, d [G, M_max, N] float16 or float32, masked_m int32 [G] on the device of a (never read by the host; rows past it keep what d held), expected_m a positive hint of the typical masked_m. compiled_dims may be any str.
    """

def k_grouped_bf16_gemm_tn_contiguous(a: object | None, b: object | None, d: object | None, ks: object | None, ks_tensor: object | None, c: object | None = None, compiled_dims: object | None = 'mn') -> None:
    """
    K-grouped GEMM (the experts' weight gradient): d[g] = c[g] + a_g^T @ b_g, with a [sum(ks), M] and b [sum(ks), N] bfloat16, expert g's rows the ks[g] after those of the experts before it; d and c (optional, possibly d itself) float32 [G, M, N]. ks (a list of ints, multiples of 128, possibly 0) and ks_tensor (int32 [G] on the device of a, what the GPU reads) hold the same counts; an empty expert's d[g] is c[g], or zeros without c. compiled_dims may be any str.
    """

def k_grouped_fp16_gemm_tn_contiguous(a: object | None, b: object | None, d: object | None, ks: object | None, ks_tensor: object | None, c: object | None = None, compiled_dims: object | None = 'mn') -> None:
    """
    K-grouped GEMM (the experts' weight gradient): d[g] = c[g] + a_g^T @ b_g, with a [sum(ks), M] and b [sum(ks), N] float16, expert g's rows the ks[g] after those of the experts before it; d and c (optional, possibly d itself) float32 [G, M, N]. ks (a list of ints, multiples of 128, possibly 0) and ks_tensor (int32 [G] on the device of a, what the GPU reads) hold the same counts; an empty expert's d[g] is c[g], or zeros without c. compiled_dims may be any str.
    """

def int8_gemm_nt(a: object | None, b: object | None, d: object | None, c: object | None = None, bias: object | None = None) -> None:
    """
    D = C + bias + the scaled sums of A @ B^T, written into d. a = (a, sa), b = (b, sb): a [M, K] and b [N, K] int8, the scales float32 naming the recipe by their shapes: sa [M], [M, 1] or 0-d with sb [N], [1, N] or 0-d (per token and per channel, or per tensor), or sa [M, ceil(K/128)] with sb [ceil(N/128), ceil(K/128)] (DeepSeek's blocks, each 128-wide K block's exact INT32 sum scaled and promoted). d [M, N] bfloat16, float16 or float32; c (optional) [M, N] float32; bias (optional) [N] float32 or d's dtype. With a and b plain int8 tensors (no scales), d is int32 [M, N] and receives the exact INT32 sums, as torch._int_mm. CUDA tensors run on the current torch stream.
    """

def m_grouped_int8_gemm_nt_contiguous(a: object | None, b: object | None, d: object | None, grouped_layout: object | None, use_psum_layout: object | None = False) -> None:
    """
    Grouped INT8 GEMM, contiguous layout (MoE): a = (a [M_sum, K] int8, sa), b = (b [G, N, K] int8, sb), d [M_sum, N] bfloat16, float16 or float32. Scales per token and channel: sa [M_sum] (or [M_sum, 1], or 0-d) with sb [G, N] (or [G], one per expert); or DeepSeek's blocks: sa [M_sum, ceil(K/128)] with sb [G, ceil(N/128), ceil(K/128)]. grouped_layout int32: [M_sum], the group of each row, -1 for a padding row; or, with use_psum_layout=True, [G], the prefix sums of the groups' rows. Rows in no group keep what d held.
    """

def m_grouped_int8_gemm_nt_masked(a: object | None, b: object | None, d: object | None, masked_m: object | None, expected_m: object | None) -> None:
    """
    Grouped INT8 GEMM, masked layout (MoE): d[g, :masked_m[g]] = the scaled a[g, :masked_m[g]] @ b[g]^T. a = (a [G, M_max, K] int8, sa), b = (b [G, N, K] int8, sb), d [G, M_max, N] bfloat16, float16 or float32. Scales per token and channel: sa [G, M_max] (or [G, M_max, 1]) with sb [G, N] (or [G]); or DeepSeek's blocks: sa [G, M_max, ceil(K/128)] with sb [G, ceil(N/128), ceil(K/128)]. masked_m int32 [G] on the device of a (never read by the host; rows past it keep what d held), expected_m a positive hint of the typical masked_m.
    """

def fp8_gemm_nt(a: object | None, b: object | None, d: object | None, c: object | None = None, recipe: object | None = None, recipe_a: object | None = None, recipe_b: object | None = None, compiled_dims: object | None = 'nk', disable_ue8m0_cast: object | None = False) -> None:
    """
    D = A @ B^T (+ C) with A = (a, sfa), B = (b, sfb): a [M, K] and b [N, K] float8_e4m3fn, sfa [M, ceil(K/128)] float32, sfb float32 [ceil(N/128), ceil(K/128)] (recipe 1D2D) or [N, ceil(K/128)] (recipe (1, 1, 128), 1D1D: B per 1x128 block, for weight gradients), d [M, N] bfloat16 or float32, c (optional) [M, N] float32, which may be d itself. CUDA tensors run on the current torch stream.

    DeepGEMM's keyword arguments are accepted where they describe what fgemm does: recipe (1, 128, 128) (recipe_a (1, 128), recipe_b (128, 128)), (1, 1, 128) (recipe_b (1, 128)) where the operation takes recipe 1D1D, or None; compiled_dims any string (fgemm specialises its kernels on every dimension anyway); disable_ue8m0_cast True or False (on Hopper neither casts the FP32 scales). Any other value raises ValueError or TypeError.
    """

def m_grouped_fp8_gemm_nt_contiguous(a: object | None, b: object | None, d: object | None, m_indices: object | None, recipe: object | None = None, recipe_a: object | None = None, recipe_b: object | None = None, compiled_dims: object | None = 'nk', disable_ue8m0_cast: object | None = False, use_psum_layout: object | None = False, d_row_starts: object | None = None) -> None:
    """
    Grouped GEMM, contiguous layout: a [M_sum, K], b [G, N, K], sfb [G, ceil(N/128), ceil(K/128)], d [M_sum, N]; m_indices int32 [M_sum] gives the group of each row, -1 marks a padding row whose row of d is left as it was. With use_psum_layout=True, m_indices is instead int32 [G], the prefix sums of the groups' rows (DeepGEMM's psum layout): group g's rows run from m_indices[g - 1] rounded up to a multiple of 128 (0 for g = 0) to m_indices[g], and rows in no group's range are left as they were. d_row_starts (psum layout only): int32 [G] on the device, and d [T, N] holds the groups' rows without their padding, group g's i-th row at row d_row_starts[g] + i; rows at or past T are not written.

    DeepGEMM's keyword arguments are accepted where they describe what fgemm does: recipe (1, 128, 128) (recipe_a (1, 128), recipe_b (128, 128)), (1, 1, 128) (recipe_b (1, 128)) where the operation takes recipe 1D1D, or None; compiled_dims any string (fgemm specialises its kernels on every dimension anyway); disable_ue8m0_cast True or False (on Hopper neither casts the FP32 scales). Any other value raises ValueError or TypeError.
    """

def m_grouped_fp8_gemm_nt_masked(a: object | None, b: object | None, d: object | None, masked_m: object | None, expected_m: object | None, recipe: object | None = None, recipe_a: object | None = None, recipe_b: object | None = None, compiled_dims: object | None = 'nk', disable_ue8m0_cast: object | None = False) -> None:
    """
    Grouped GEMM, masked layout: a [G, M_max, K], b [G, N, K], d [G, M_max, N]; only the first masked_m[g] rows of group g are computed (masked_m int32 [G], on the device of a, never read by the host); expected_m is a positive hint of the typical masked_m.

    DeepGEMM's keyword arguments are accepted where they describe what fgemm does: recipe (1, 128, 128) (recipe_a (1, 128), recipe_b (128, 128)), (1, 1, 128) (recipe_b (1, 128)) where the operation takes recipe 1D1D, or None; compiled_dims any string (fgemm specialises its kernels on every dimension anyway); disable_ue8m0_cast True or False (on Hopper neither casts the FP32 scales). Any other value raises ValueError or TypeError.
    """

def k_grouped_fp8_gemm_nt_contiguous(a: object | None, b: object | None, d: object | None, ks: object | None, ks_tensor: object | None, c: object | None = None, recipe: object | None = (1, 1, 128), compiled_dims: object | None = 'mn', use_psum_layout: object | None = False) -> None:
    """
    Mixture-of-experts weight gradients, K grouped (recipe 1D1D): d[g] = c[g] + A_g @ B_g^T, d [G, M, N]. a = (a, sfa): a float8_e4m3fn [sum(ks) * M], expert g's [M, ks[g]] block (K-major) after the experts before it, sfa float32 [M, sum(ks) / 128]; b = (b, sfb) likewise with N. ks: each expert's K, a list of multiples of 128 (0 allowed); ks_tensor: the same as int32 [G] on the device of a. d float32 needs c (float32 [G, M, N], which may be d); d bfloat16 takes an optional float32 c apart from d. recipe (1, 1, 128) alone; compiled_dims any str; use_psum_layout False alone.
    """

def set_num_sms(num_sms: object | None) -> None:
    """
    Limits the GPU kernels to num_sms streaming multiprocessors (0: all of the device's).
    """

def get_num_sms() -> int:
    """
    The SMs the GPU kernels use: the value of set_num_sms, else the current device's count (0 without a usable GPU).
    """

def set_pdl(enable: object | None) -> None:
    """
    Programmatic dependent launch of the GEMM and quantization kernels (off by default): each may start while the previous kernel of its stream runs, its prologue overlapping that kernel's last tiles; the same bits either way.
    """

def get_pdl() -> bool:
    """Whether set_pdl(True) is in effect."""

def get_m_alignment_for_contiguous_layout() -> int:
    """
    Each group's rows in the contiguous layout start at a multiple of this (128).
    """

def add_nvrtc_search_dir(directory: str) -> None:
    """
    Adds a directory to search for libnvrtc; only directories added before NVRTC is first loaded count.
    """

def cpu_backend() -> tuple:
    """
    (instruction set, threads) the CPU backend runs with, e.g. ('avx2', 2).
    """

def _force_config(block_m: int, block_n: int, cluster_m: int = 0, cluster_n: int = 0, split_k: int = 0, c_slots: int = 0, num_stages: int = 0) -> None:
    """
    For tuning: run later GPU GEMMs with this tile, cluster shape, split-K, ring of C and stages (all 0: the heuristics' choice again; split_k 0 with a tile: no split; num_stages 0: the most that fit).
    """
