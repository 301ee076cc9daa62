#include "cpu/dequantize_row_blocks.hpp"

#include <cstdint>

#include "cpu/bf16.hpp"
#include "cpu/e4m3.hpp"
#include "cpu/thread_pool.hpp"

namespace fgemm::cpu {
namespace {

using detail::GemmLayout;
using detail::GemmProblem;
using detail::kScaleBlock;

// Where an operand's codes and scales are: its rows (of A or of B), its row stride (0 for the k-grouped
// layout's per-expert blocks, whose row stride is the expert's K) and its scales' strides.
struct Fp8Operand {
  const std::uint8_t* codes;
  std::int64_t rows;
  std::int64_t row_stride;
  const float* scales;
  std::int64_t scale_row_stride;
  std::int64_t scale_k_stride;
};

// Row `row`'s values of K [k_begin, k_begin + k_len), whose codes start at `codes` (contiguous), into `out`.
void dequantize_run(const Fp8Operand& op, const std::uint8_t* codes, std::int64_t row, std::int64_t k_begin,
                    std::int64_t k_len, std::uint16_t* out) {
  const float* scales = op.scales + row * op.scale_row_stride;
  for (std::int64_t k = 0; k < k_len; ++k)
    out[k] = bf16_from_float(kE4m3.value[codes[k]] * scales[(k_begin + k) / kScaleBlock * op.scale_k_stride]);
}

// The operand as a BF16 matrix [rows, K] with K contiguous, row by row on the thread pool.
void dequantize(const GemmProblem& p, const Fp8Operand& op, std::uint16_t* out) {
  ThreadPool::instance().run(op.rows, [&](std::int64_t row) {
    std::uint16_t* out_row = out + row * p.k;
    if (p.layout != GemmLayout::KGrouped) {
      dequantize_run(op, op.codes + row * op.row_stride, row, 0, p.k, out_row);
      return;
    }
    std::int64_t k_begin = 0;
    for (const std::int64_t k : p.ks) {
      // Expert g's block [rows, ks[g]] starts after the blocks of the experts before it.
      const std::uint8_t* block = op.codes + k_begin * op.rows;
      dequantize_run(op, block + row * k, row, k_begin, k, out_row + k_begin);
      k_begin += k;
    }
  });
}

}  // namespace

GemmProblem dequantize_row_blocks(const GemmProblem& p, ScratchBuffer& a16, ScratchBuffer& b16) {
  auto* a = a16.get<std::uint16_t>(p.m * p.k);
  auto* b = b16.get<std::uint16_t>(p.n * p.k);
  dequantize(p, {p.a, p.m, p.a_row_stride, p.sfa, p.sfa_m_stride, p.sfa_k_stride}, a);
  dequantize(p, {p.b, p.n, p.b_row_stride, p.sfb, p.sfb_n_stride, p.sfb_k_stride}, b);
  GemmProblem run = p;
  run.ab_dtype = DType::BF16;
  run.scaling = detail::Scaling::None;
  run.a = reinterpret_cast<const std::uint8_t*>(a);
  run.b = reinterpret_cast<const std::uint8_t*>(b);
  run.a_mn_major = run.b_mn_major = false;
  run.a_row_stride = run.b_row_stride = p.k;
  run.a_group_stride = run.b_group_stride = 0;
  run.sfa = run.sfb = nullptr;
  return run;
}

}  // namespace fgemm::cpu
