// fgemm: FP8 GEMMs with fine-grained scaling (activations per 1x128, weights per 128x128, FP32 promotion).
//
//   D[m, n] = C[m, n] + sum_kb sfa[m, kb] * sfb[n / 128, kb] * sum_{k in block kb} A[m, k] * B[n, k]
//
// A and B are FP8 E4M3 with K contiguous ("NT"), D is BF16 or FP32. Tensors on the CPU run the CPU
// backend; tensors on a CUDA device run the sm90 kernels on `stream`. Every argument is validated and a
// violation throws fgemm::Error naming the argument, what was expected and what was given.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fgemm/error.hpp"
#include "fgemm/tensor.hpp"

namespace fgemm {

// A cudaStream_t, kept opaque so that this header needs no CUDA header. nullptr is the default stream.
using Stream = void*;

// Rows of each expert's segment in the contiguous layout start at a multiple of this.
constexpr int kMAlignmentForContiguousLayout = 128;

// D = A * B^T (+ C). a [M, K], sfa [M, ceil(K/128)], b [N, K], d [M, N], c (optional, FP32 or D's type) [M, N],
// and sfb in either of DeepGEMM's recipes, named by its shape:
//   [ceil(N/128), ceil(K/128)]  1D2D, B scaled per 128 x 128 block (weights, the forward pass);
//   [N, ceil(K/128)]            1D1D, B scaled per 1 x 128 block like A (weight gradients, where both operands
//                               are activations or gradients): D[m, n] = C[m, n] + sum_kb sfa[m, kb] *
//                               sfb[n, kb] * sum_{k in block kb} A[m, k] * B[n, k].
// c may be d itself: D accumulates in place (DeepGEMM's c = d; an FP32 weight gradient's main_grad). D is rounded
// once, from C + A·B.
void fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const std::optional<TensorView>& c = std::nullopt,
                 Stream stream = nullptr);

// How the contiguous layout names each row's expert (`grouped_layout`, int32 on the device of the others):
//   MIndices: [M_sum], the expert of each row, -1 for padding; each expert's rows start at a multiple of
//             kMAlignmentForContiguousLayout.
//   Psum:     [G], the prefix sums of the experts' rows: expert g's rows run from psum[g - 1] rounded up to a
//             multiple of kMAlignmentForContiguousLayout (0 for g = 0) to psum[g] (DeepGEMM's
//             use_psum_layout). Rows in no expert's range are padding.
// Padding rows of D are left as they were.
enum class ContiguousLayout : std::uint8_t { MIndices, Psum };

// Mixture-of-experts, contiguous layout: a [M_sum, K], b [G, N, K], sfb [G, ceil(N/128), ceil(K/128)],
// grouped_layout as ContiguousLayout says, d [M_sum, N]. Or, in the Psum form, d packed: d_row_starts int32 [G] on
// the device of a, and d [T, N] (any T) holds each expert's rows without their padding, expert g's row
// psum_start(g) + i at row d_row_starts[g] + i (what a layer returns in its tokens' order, where the experts'
// tokens are sorted); rows that would fall at or past T are not written.
void m_grouped_fp8_gemm_nt_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                      ContiguousLayout layout = ContiguousLayout::MIndices,
                                      const std::optional<TensorView>& d_row_starts = std::nullopt,
                                      Stream stream = nullptr);

// Mixture-of-experts, masked layout: a [G, M_max, K], d [G, M_max, N], masked_m int32 [G] on the same
// device; only the first masked_m[g] rows of group g are computed and written. The host never reads
// masked_m. expected_m (> 0) is a hint of the typical rows per group, used to pick the configuration.
void m_grouped_fp8_gemm_nt_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                  const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                                  std::int64_t expected_m, Stream stream = nullptr);

// Mixture-of-experts weight gradients, K grouped (DeepGEMM's sm90 k_grouped_fp8_gemm_nt_contiguous, recipe
// 1D1D): expert g owns ks[g] values of K, a multiple of 128 and possibly 0, and
//   D[g] = C[g] + A_g * B_g^T     ([G, M, N])
// where A_g [M, ks[g]] and B_g [N, ks[g]] are K-major blocks stored one expert after another: a [sum(ks) * M]
// and b [sum(ks) * N] flat, expert g's block at element M * (ks[0] + ... + ks[g - 1]) (N * ... for b). Their
// scales are 1 x 128 blocks along K: sfa [M, sum(ks) / 128], sfb [N, sum(ks) / 128], expert g's K blocks in
// turn (typically MN-major, TMA-aligned). ks is read on the host, ks_tensor (int32 [G], the same counts) by the GPU. D
// is FP32, accumulating: c [G, M, N] FP32 is then required and may be d (DeepGEMM's semantics). Or D is BF16, the
// weight gradient itself, with an optional c: FP32 apart from d, or BF16 (possibly d itself). An expert with no K
// gets D[g] = C[g], or zeros without C.
void k_grouped_fp8_gemm_nt_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const std::vector<std::int64_t>& ks,
                                      const TensorView& ks_tensor, const std::optional<TensorView>& c,
                                      Stream stream = nullptr);

// The number of streaming multiprocessors the GPU kernels may use (0: all of the device's).
void set_num_sms(int num_sms);
int get_num_sms();

// Programmatic dependent launch (off by default, as in DeepGEMM): each GEMM and quantization kernel is launched
// so that it may start while the kernel before it in the stream is still running, and lets the kernel after it do
// the same. A GEMM's prologue (barrier set-up, tensor-map prefetch) then overlaps the previous kernel's last
// tiles, and a quantizer's launch the previous kernel's tail; neither reads or writes global memory before the
// previous kernel has completed and its writes are visible. Results are the same bits either way. It applies to
// every kernel launched after the call, from any thread, and inside CUDA-graph captures (the graph keeps the
// launch's dependency type).
void set_pdl(bool enable);
bool get_pdl();

}  // namespace fgemm
