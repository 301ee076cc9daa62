// The few-row kernel: D = C + A·Bᵀ for 16-bit A [M, K] and B [N, K], both K-major, where M is at most eight
// (decode: one token, or a few). Such a GEMM is a read of B and little else. The skeleton's tiles read B through the
// TMA in boxes of one K block; here every lane reads it with 16-byte vector loads, several in flight, which on an
// H200 ran the decode rows of up to 75 MB of B 1.04-1.33x as fast without C (docs/PERFORMANCE.md, "The few-row
// kernel"). The tensor cores' mma.sync does the arithmetic: a CTA's 8 rows of B are the n8 of an m16n8k16 and A's
// rows its upper eight (the lower eight are zeros), so that a lane needs no data from another.
//
// K is split three ways: between the lanes of a row of B (four lanes, eight elements each: a chunk of 32), between
// the warps of the CTA (chunks taken in turn), and between the CTAs of a cluster (kSplits ranges of
// Params::k_per_split), whose sums CTA 0 adds through distributed shared memory before it writes D.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/few_rows_params.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::few_rows {

enum class Output { Bf16, F16, F32 };
enum class AddC { None, F32, OfD };  // no C, an FP32 C, or a C of D's 16-bit type (either may be D itself)

template <bool kF16Inputs_, Output kOutput_, AddC kAddC_, uint32_t kWarps_, uint32_t kUnroll_, uint32_t kSplits_>
struct Config {
  static constexpr bool kF16Inputs = kF16Inputs_;
  static constexpr Output kOutput = kOutput_;
  static constexpr AddC kAddC = kAddC_;
  static constexpr uint32_t kWarps = kWarps_;
  static constexpr uint32_t kUnroll = kUnroll_;  // chunks each lane has in flight
  static constexpr uint32_t kSplits = kSplits_;  // CTAs of a cluster, along K
};

__device__ __forceinline__ float value_of_16bit(uint16_t bits, bool f16) {
  if (!f16) return __uint_as_float(static_cast<uint32_t>(bits) << 16);
  float value;
  asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(bits));
  return value;
}

template <Output kOutput>
__device__ __forceinline__ void store_output(void* d, float value) {
  if constexpr (kOutput == Output::F32) {
    *static_cast<float*>(d) = value;
  } else {
    const uint32_t packed = kOutput == Output::F16 ? ptx::pack_f16x2(value, 0.0f) : ptx::pack_bf16x2(value, 0.0f);
    *static_cast<uint16_t*>(d) = static_cast<uint16_t>(packed);
  }
}

template <class Cfg>
__device__ __forceinline__ void few_rows_gemm(const Params& p) {
  constexpr uint32_t kWarps = Cfg::kWarps, kUnroll = Cfg::kUnroll, kSplits = Cfg::kSplits;
  constexpr uint32_t kCtaStep = kWarps * kChunkK;  // the K a CTA's warps cover in one turn
  constexpr uint32_t kSums = kMaxRows * kColumnsPerCta;
  __shared__ float warp_sums[kWarps][kSums];

  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t group = lane / 4, quad = lane % 4;  // the fragment layout's row (and column) and lane in it
  const uint32_t n0 = blockIdx.x * kColumnsPerCta;
  const uint32_t split = kSplits > 1 ? ptx::cluster_rank() : 0;
  const uint32_t k_begin = split * p.k_per_split;
  const uint32_t k_end = kSplits > 1 ? min_of(p.k, k_begin + p.k_per_split) : p.k;

  // This lane's row of B (D's column n0 + group; past N, the last row, whose sums are never stored) and of A (its
  // row `group`, or zeros past M), at the lane's eight elements of a chunk.
  const uint16_t* b_lane = static_cast<const uint16_t*>(p.b) +
                           int64_t(min_of(n0 + group, p.n - 1)) * p.b_row_stride + quad * kVectorElements;
  // Lanes past M load row 0 of A and clear it: a load on a condition would be a branch, and the warp's
  // reconvergence before each mma.sync (WARPSYNC) would keep ptxas from issuing the next loads ahead of it.
  const uint32_t a_mask = group < p.m ? 0xffffffffu : 0u;
  const uint16_t* a_lane = static_cast<const uint16_t*>(p.a) + int64_t(a_mask ? group : 0) * p.a_row_stride +
                           quad * kVectorElements;
  const auto load_a = [&](uint32_t k) {
    ptx::U32x4 a = ptx::load_readonly_u32x4<true>(a_lane + k);
#pragma unroll
    for (uint32_t i = 0; i < 4; ++i) a.word[i] &= a_mask;
    return a;
  };

  // Two accumulators, one per MMA of a chunk, so that consecutive MMAs do not wait for each other. A chunk's
  // 16-byte vectors hold eight consecutive K of a row; the MMA's k16 takes their first four (as its k pairs
  // 2q and 2q + 8) and the next MMA their last four: A and B agree on that order, so the products are the same.
  float sums0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, sums1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const auto multiply = [&](const ptx::U32x4& a, const ptx::U32x4& b) {
    ptx::mma_m16n8k16<Cfg::kF16Inputs>(sums0, a.word[0], 0u, a.word[1], 0u, b.word[0], b.word[1]);
    ptx::mma_m16n8k16<Cfg::kF16Inputs>(sums1, a.word[2], 0u, a.word[3], 0u, b.word[2], b.word[3]);
  };
  const ptx::U32x4 zeros{{0u, 0u, 0u, 0u}};

  uint32_t kc = k_begin + warp * kChunkK;
  // Whole turns: every lane's kUnroll vectors lie inside K.
  for (; kc + (kUnroll - 1) * kCtaStep + kChunkK <= k_end; kc += kUnroll * kCtaStep) {
    ptx::U32x4 b[kUnroll], a[kUnroll];
#pragma unroll
    for (uint32_t u = 0; u < kUnroll; ++u) b[u] = ptx::load_readonly_u32x4<false>(b_lane + kc + u * kCtaStep);
#pragma unroll
    for (uint32_t u = 0; u < kUnroll; ++u) a[u] = load_a(kc + u * kCtaStep);
#pragma unroll
    for (uint32_t u = 0; u < kUnroll; ++u) multiply(a[u], b[u]);
  }
  // The rest, a chunk at a time. K is a multiple of 8 (the host's condition), so a lane's vector lies wholly inside
  // or wholly past the end of its range; past it, the lane multiplies zeros.
  for (; kc < k_end; kc += kCtaStep) {
    const bool inside = kc + quad * kVectorElements < k_end;
    const ptx::U32x4 b = inside ? ptx::load_readonly_u32x4<false>(b_lane + kc) : zeros;
    const ptx::U32x4 a = inside ? load_a(kc) : zeros;
    multiply(a, b);
  }

  // The warps' sums of D's 8 x 8 block (row `group`, columns 2 quad and 2 quad + 1 of the fragment), added.
  warp_sums[warp][group * kColumnsPerCta + 2 * quad] = sums0[0] + sums1[0];
  warp_sums[warp][group * kColumnsPerCta + 2 * quad + 1] = sums0[1] + sums1[1];
  __syncthreads();
  // Thread i < 64 owns element (i / 8, i % 8) of the block: it adds the warps' sums of it, and then its peers'.
  const bool owns_sum = threadIdx.x < kSums;
  float total = 0.0f;
  if (owns_sum) {
#pragma unroll
    for (uint32_t w = 0; w < kWarps; ++w) total += warp_sums[w][threadIdx.x];
  }
  if constexpr (kSplits > 1) {
    // Each CTA leaves its totals in its first warp's slots (each read above by the thread that now writes it), and
    // CTA 0 adds its peers' through distributed shared memory; the second barrier keeps every CTA's shared memory
    // until CTA 0 has read it.
    if (owns_sum) warp_sums[0][threadIdx.x] = total;
    ptx::cluster_sync();
    if (owns_sum && split == 0) {
      const uint32_t address = ptx::smem_address(&warp_sums[0][threadIdx.x]);
#pragma unroll
      for (uint32_t peer = 1; peer < kSplits; ++peer)
        total += ptx::load_shared_cluster_f32(ptx::map_shared_to_cta(address, peer));
    }
    ptx::cluster_sync();
  }
  if (!owns_sum || split != 0) return;

  const uint32_t row = threadIdx.x / kColumnsPerCta, col = n0 + threadIdx.x % kColumnsPerCta;
  if (row >= p.m || col >= p.n) return;
  if constexpr (Cfg::kAddC == AddC::F32) {
    total += static_cast<const float*>(p.c)[int64_t(row) * p.c_row_stride + col];
  } else if constexpr (Cfg::kAddC == AddC::OfD) {
    total += value_of_16bit(static_cast<const uint16_t*>(p.c)[int64_t(row) * p.c_row_stride + col],
                            Cfg::kOutput == Output::F16);
  }
  const uint32_t bytes = Cfg::kOutput == Output::F32 ? 4 : 2;
  store_output<Cfg::kOutput>(static_cast<uint8_t*>(p.d) + (int64_t(row) * p.d_row_stride + col) * bytes, total);
}

}  // namespace fgemm::few_rows
