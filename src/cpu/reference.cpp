#include "cpu/reference.hpp"

#include <algorithm>

#include "cpu/bf16.hpp"
#include "cpu/e4m3.hpp"
#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {
namespace {

using detail::GemmLayout;
using detail::GemmProblem;

// Row `row` of D in group `group` (of A, sfa, C and D; 0 unless masked), with the weights of `expert`.
void compute_row(const GemmProblem& p, std::int64_t group, std::int64_t expert, std::int64_t row) {
  const std::uint8_t* a = p.a + group * p.a_group_stride + row * p.a_row_stride;
  const float* sfa = p.sfa + group * p.sfa_group_stride + row * p.sfa_m_stride;
  const std::int64_t d_index = group * p.d_group_stride + row * p.d_row_stride;
  for (std::int64_t n = 0; n < p.n; ++n) {
    const std::uint8_t* b = p.b + expert * p.b_group_stride + n * p.b_row_stride;
    const float* sfb = p.sfb + expert * p.sfb_group_stride + (n / 128) * p.sfb_n_stride;
    float acc = 0.0f;
    for (std::int64_t kb = 0; kb < p.k_blocks(); ++kb) {
      float partial = 0.0f;
      for (std::int64_t k = kb * 128; k < std::min(p.k, kb * 128 + 128); ++k)
        partial += kE4m3.value[a[k]] * kE4m3.value[b[k]];
      acc += sfa[kb * p.sfa_k_stride] * sfb[kb * p.sfb_k_stride] * partial;
    }
    if (p.c) acc += p.c[group * p.c_group_stride + row * p.c_row_stride + n];
    if (p.d_dtype == DType::F32)
      static_cast<float*>(p.d)[d_index + n] = acc;
    else
      static_cast<std::uint16_t*>(p.d)[d_index + n] = bf16_from_float(acc);
  }
}

}  // namespace

void reference_gemm(const GemmProblem& p) {
  check_group_arrays(p);
  for (std::int64_t group = 0; group < (p.layout == GemmLayout::Masked ? p.num_groups : 1); ++group) {
    for (std::int64_t row = 0; row < p.m; ++row) {
      switch (p.layout) {
        case GemmLayout::Normal: compute_row(p, 0, 0, row); break;
        case GemmLayout::Contiguous:
          if (p.m_indices[row] >= 0) compute_row(p, 0, p.m_indices[row], row);
          break;
        case GemmLayout::Masked:
          if (row < p.masked_m[group]) compute_row(p, group, group, row);
          break;
      }
    }
  }
}

}  // namespace fgemm::cpu
