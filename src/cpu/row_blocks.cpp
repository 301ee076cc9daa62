#include "cpu/row_blocks.hpp"

#include <string>

#include "fgemm/error.hpp"

namespace fgemm::cpu {
namespace {

using detail::GemmLayout;
using detail::GemmProblem;

// `where` names the position, e.g. "row 3".
[[noreturn]] void fail(const char* op, const char* arg, const std::string& where, std::int32_t value,
                       const std::string& expected) {
  throw Error(ErrorKind::InvalidValue, std::string("fgemm.") + op + ": argument '" + arg + "' holds " +
                                           std::to_string(value) + " for " + where + "; expected " + expected);
}

// Rows [row, row + rows) of group `group`. A, sfa, C and D have group strides only in the masked layout, so
// in the contiguous layout `group` picks the expert's B and sfb alone.
RowBlock block_at(const GemmProblem& p, std::int64_t group, std::int64_t row, std::int64_t rows) {
  const std::int64_t d_bytes = p.d_dtype == DType::F32 ? 4 : 2;
  const std::int64_t d_offset = group * p.d_group_stride + row * p.d_row_stride;
  RowBlock block;
  block.a = p.a + group * p.a_group_stride + row * p.a_row_stride;
  block.sfa = p.sfa + group * p.sfa_group_stride + row * p.sfa_m_stride;
  block.b = p.b + group * p.b_group_stride;
  block.sfb = p.sfb + group * p.sfb_group_stride;
  block.d = static_cast<char*>(p.d) + d_offset * d_bytes;
  block.c = p.c ? p.c + group * p.c_group_stride + row * p.c_row_stride : nullptr;
  block.rows = rows;
  return block;
}

}  // namespace

void check_group_arrays(const GemmProblem& p) {
  if (p.layout == GemmLayout::Contiguous) {
    for (std::int64_t row = 0; row < p.m; ++row) {
      const std::int32_t expert = p.m_indices[row];
      if (expert < -1 || expert >= p.num_groups)
        fail("m_grouped_fp8_gemm_nt_contiguous", "m_indices", "row " + std::to_string(row), expert,
             "an expert in [0, " + std::to_string(p.num_groups) + ") or -1 for a padding row");
    }
  }
  if (p.layout == GemmLayout::Masked) {
    for (std::int64_t group = 0; group < p.num_groups; ++group) {
      const std::int32_t rows = p.masked_m[group];
      if (rows < 0 || rows > p.m)
        fail("m_grouped_fp8_gemm_nt_masked", "masked_m", "group " + std::to_string(group), rows,
             "a row count in [0, " + std::to_string(p.m) + "] (M_max)");
    }
  }
}

std::vector<RowBlock> make_row_blocks(const GemmProblem& p) {
  check_group_arrays(p);
  std::vector<RowBlock> blocks;
  switch (p.layout) {
    case GemmLayout::Normal: blocks.push_back(block_at(p, 0, 0, p.m)); break;
    case GemmLayout::Contiguous: {
      std::int64_t begin = 0;
      while (begin < p.m) {
        const std::int32_t expert = p.m_indices[begin];
        std::int64_t end = begin + 1;
        while (end < p.m && p.m_indices[end] == expert) ++end;
        if (expert >= 0) blocks.push_back(block_at(p, expert, begin, end - begin));
        begin = end;
      }
      break;
    }
    case GemmLayout::Masked:
      for (std::int64_t group = 0; group < p.num_groups; ++group)
        if (p.masked_m[group] > 0) blocks.push_back(block_at(p, group, 0, p.masked_m[group]));
      break;
  }
  return blocks;
}

}  // namespace fgemm::cpu
