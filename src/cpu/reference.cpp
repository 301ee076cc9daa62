#include "cpu/reference.hpp"

#include <algorithm>

#include "cpu/bf16.hpp"
#include "cpu/e4m3.hpp"
#include "cpu/f16.hpp"
#include "cpu/row_blocks.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::cpu {
namespace {

using detail::GemmLayout;
using detail::GemmProblem;
using detail::Scaling;

// Where a row of D comes from: A's group (masked) or none, B's expert, D's (and C's) group, and the values
// of K it sums (all of K but in the k-grouped layout).
struct RowSource {
  std::int64_t a_group;
  std::int64_t b_group;
  std::int64_t d_group;
  std::int64_t k_begin;
  std::int64_t k_end;
};

// Element (i, k) of a stored operand, i a row of A or of B (a column of D), in elements.
std::int64_t offset(bool mn_major, std::int64_t row_stride, std::int64_t i, std::int64_t k) {
  return mn_major ? k * row_stride + i : i * row_stride + k;
}

double value_16bit(DType dtype, const std::uint8_t* base, std::int64_t index) {
  const std::uint16_t bits = reinterpret_cast<const std::uint16_t*>(base)[index];
  return dtype == DType::BF16 ? float_from_bf16(bits) : float_from_f16(bits);
}

// FP8: every K block of [k_begin, k_end) summed in FP32 and scaled, as ARCHITECTURE.md (Semantics) says. The
// k-grouped layout's expert blocks are K-major [M, ks[g]] and [N, ks[g]], one expert after another.
float fp8_sum(const GemmProblem& p, const RowSource& s, std::int64_t row, std::int64_t n) {
  const bool k_grouped = p.layout == GemmLayout::KGrouped;
  const std::int64_t k_len = s.k_end - s.k_begin;
  const std::uint8_t* a = k_grouped ? p.a + s.k_begin * p.m + row * k_len
                                    : p.a + s.a_group * p.a_group_stride + row * p.a_row_stride;
  const std::uint8_t* b = k_grouped ? p.b + s.k_begin * p.n + n * k_len
                                    : p.b + s.b_group * p.b_group_stride + n * p.b_row_stride;
  const float* sfa = p.sfa + s.a_group * p.sfa_group_stride + row * p.sfa_m_stride;
  const std::int64_t sfb_row = p.scaling == Scaling::RowBlocks ? n : n / 128;
  const float* sfb = p.sfb + s.b_group * p.sfb_group_stride + sfb_row * p.sfb_n_stride;
  float acc = 0.0f;
  for (std::int64_t k0 = 0; k0 < k_len; k0 += 128) {
    const std::int64_t kb = (s.k_begin + k0) / 128;
    float partial = 0.0f;
    for (std::int64_t k = k0; k < std::min(k_len, k0 + 128); ++k) partial += kE4m3.value[a[k]] * kE4m3.value[b[k]];
    acc += sfa[kb * p.sfa_k_stride] * sfb[kb * p.sfb_k_stride] * partial;
  }
  return acc;
}

// BF16 and FP16: the exact products summed in FP64.
double sum_16bit(const GemmProblem& p, const RowSource& s, std::int64_t row, std::int64_t n) {
  const std::uint8_t* a = p.a + s.a_group * p.a_group_stride * 2;
  const std::uint8_t* b = p.b + s.b_group * p.b_group_stride * 2;
  double acc = 0.0;
  for (std::int64_t k = s.k_begin; k < s.k_end; ++k)
    acc += value_16bit(p.ab_dtype, a, offset(p.a_mn_major, p.a_row_stride, row, k)) *
           value_16bit(p.ab_dtype, b, offset(p.b_mn_major, p.b_row_stride, n, k));
  return acc;
}

// INT8: the products of K values [k_begin, k_end) summed exactly.
std::int64_t int8_sum(const GemmProblem& p, const RowSource& s, std::int64_t row, std::int64_t n, std::int64_t k_begin,
                      std::int64_t k_end) {
  const auto* a = reinterpret_cast<const std::int8_t*>(p.a) + s.a_group * p.a_group_stride + row * p.a_row_stride;
  const auto* b = reinterpret_cast<const std::int8_t*>(p.b) + s.b_group * p.b_group_stride + n * p.b_row_stride;
  std::int64_t sum = 0;
  for (std::int64_t k = k_begin; k < k_end; ++k) sum += a[k] * b[k];
  return sum;
}

// The sum over all of K as INT32 arithmetic leaves it, modulo 2^32 (as torch._int_mm).
std::int32_t int8_sum_in_int32(const GemmProblem& p, const RowSource& s, std::int64_t row, std::int64_t n) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(int8_sum(p, s, row, n, 0, p.k)));
}

// The scaled INT8 recipes in FP64.
double int8_scaled_sum(const GemmProblem& p, const RowSource& s, std::int64_t row, std::int64_t n) {
  const float* sfa = p.sfa + s.a_group * p.sfa_group_stride + row * p.sfa_m_stride;
  if (p.scaling == Scaling::RowColumn)
    return double{*sfa} * p.sfb[s.b_group * p.sfb_group_stride + n * p.sfb_n_stride] * int8_sum_in_int32(p, s, row, n);
  const float* sfb = p.sfb + s.b_group * p.sfb_group_stride + (n / 128) * p.sfb_n_stride;
  double acc = 0.0;
  for (std::int64_t kb = 0; kb < p.k_blocks(); ++kb)
    acc += double{sfa[kb * p.sfa_k_stride]} * sfb[kb * p.sfb_k_stride] *
           static_cast<double>(int8_sum(p, s, row, n, kb * 128, std::min(p.k, kb * 128 + 128)));
  return acc;
}

// INT8's optional bias, of FP32 or D's 16-bit type.
double bias_value(const GemmProblem& p, std::int64_t n) {
  if (p.bias_dtype == DType::F32) return static_cast<const float*>(p.bias)[n];
  return value_16bit(p.bias_dtype, static_cast<const std::uint8_t*>(p.bias), n);
}

double c_value(const GemmProblem& p, std::int64_t index) {
  if (p.c_dtype == DType::F32) return static_cast<const float*>(p.c)[index];
  return value_16bit(p.c_dtype, static_cast<const std::uint8_t*>(p.c), index);
}

void compute_row(const GemmProblem& p, const RowSource& s, std::int64_t row) {
  const std::int64_t d_index = s.d_group * p.d_group_stride + row * p.d_row_stride;
  for (std::int64_t n = 0; n < p.n; ++n) {
    if (p.d_dtype == DType::I32) {
      static_cast<std::int32_t*>(p.d)[d_index + n] = int8_sum_in_int32(p, s, row, n);
      continue;
    }
    double acc = p.ab_dtype == DType::E4M3 ? fp8_sum(p, s, row, n)
                 : p.ab_dtype == DType::I8 ? int8_scaled_sum(p, s, row, n)
                                           : sum_16bit(p, s, row, n);
    if (p.c) acc += c_value(p, s.d_group * p.c_group_stride + row * p.c_row_stride + n);
    if (p.bias) acc += bias_value(p, n);
    const auto value = static_cast<float>(acc);
    switch (p.d_dtype) {
      case DType::F32: static_cast<float*>(p.d)[d_index + n] = value; break;
      case DType::F16: static_cast<std::uint16_t*>(p.d)[d_index + n] = f16_from_float(value); break;
      default: static_cast<std::uint16_t*>(p.d)[d_index + n] = bf16_from_float(value); break;
    }
  }
}

// The expert of row `row` in the contiguous layout, or -1.
std::int64_t contiguous_expert(const GemmProblem& p, std::int64_t row) {
  if (p.m_indices) return p.m_indices[row];
  for (std::int64_t g = 0; g < p.num_groups; ++g) {
    constexpr std::int64_t kAlignment = kMAlignmentForContiguousLayout;
    const std::int64_t begin = g == 0 ? 0 : (p.psum[g - 1] + kAlignment - 1) / kAlignment * kAlignment;
    if (row >= begin && row < p.psum[g]) return g;
  }
  return -1;
}

}  // namespace

void reference_gemm(const GemmProblem& p) {
  check_group_arrays(p);
  const bool grouped_d = p.layout == GemmLayout::Masked || p.layout == GemmLayout::KGrouped;
  std::int64_t k_begin = 0;
  for (std::int64_t group = 0; group < (grouped_d ? p.num_groups : 1); ++group) {
    for (std::int64_t row = 0; row < p.m; ++row) {
      switch (p.layout) {
        case GemmLayout::Normal: compute_row(p, {0, 0, 0, 0, p.k}, row); break;
        case GemmLayout::Contiguous: {
          const std::int64_t expert = contiguous_expert(p, row);
          if (expert >= 0) compute_row(p, {0, expert, 0, 0, p.k}, row);
          break;
        }
        case GemmLayout::Masked:
          if (row < p.masked_m[group]) compute_row(p, {group, group, group, 0, p.k}, row);
          break;
        case GemmLayout::KGrouped: compute_row(p, {0, 0, group, k_begin, k_begin + p.ks[group]}, row); break;
      }
    }
    if (p.layout == GemmLayout::KGrouped) k_begin += p.ks[group];
  }
}

}  // namespace fgemm::cpu
