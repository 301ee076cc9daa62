#include "cpu/row_blocks.hpp"

#include <algorithm>
#include <string>

#include "fgemm/error.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::cpu {
namespace {

using detail::GemmLayout;
using detail::GemmProblem;

// The public operation that made a grouped problem, for messages: its input type and B's storage order say it.
std::string operation_name(const GemmProblem& p) {
  const char* type = p.ab_dtype == DType::E4M3   ? "fp8"
                     : p.ab_dtype == DType::BF16 ? "bf16"
                     : p.ab_dtype == DType::F16  ? "fp16"
                                                 : "int8";
  const char* letters = p.b_mn_major ? "nn" : "nt";
  const char* layout = p.layout == GemmLayout::Masked ? "masked" : "contiguous";
  return std::string("m_grouped_") + type + "_gemm_" + letters + "_" + layout;
}

// The contiguous layout's argument as the operation names it (the FP8 one calls it m_indices in either form).
const char* grouped_layout_name(const GemmProblem& p) {
  return p.ab_dtype == DType::E4M3 ? "m_indices" : "grouped_layout";
}

// `where` names the position, e.g. "row 3".
[[noreturn]] void fail(const GemmProblem& p, const char* arg, const std::string& where, std::int32_t value,
                       const std::string& expected) {
  throw Error(ErrorKind::InvalidValue, "fgemm." + operation_name(p) + ": argument '" + arg + "' holds " +
                                           std::to_string(value) + " for " + where + "; expected " + expected);
}

std::int64_t element_bytes(DType dtype) { return static_cast<std::int64_t>(dtype_size(dtype)); }

// Rows [row, row + rows) of group `group`, whose rows of D start at `d_row` (`row` itself but in a packed D).
// A, sfa, C and D have group strides only in the masked layout, so in the contiguous layout `group` picks the
// expert's B and sfb alone. An MN-major A's rows are its columns.
RowBlock block_at(const GemmProblem& p, std::int64_t group, std::int64_t row, std::int64_t rows,
                  std::int64_t d_row) {
  const std::int64_t a_offset = group * p.a_group_stride + row * (p.a_mn_major ? 1 : p.a_row_stride);
  const std::int64_t d_offset = group * p.d_group_stride + d_row * p.d_row_stride;
  RowBlock block;
  block.a = p.a + a_offset * element_bytes(p.ab_dtype);
  // INT8 without scales (Scaling::None) has neither sfa nor sfb.
  block.sfa = p.sfa ? p.sfa + group * p.sfa_group_stride + row * p.sfa_m_stride : nullptr;
  block.b = p.b + group * p.b_group_stride * element_bytes(p.ab_dtype);
  block.sfb = p.sfb ? p.sfb + group * p.sfb_group_stride : nullptr;
  block.d = static_cast<char*>(p.d) + d_offset * element_bytes(p.d_dtype);
  const std::int64_t c_offset = group * p.c_group_stride + row * p.c_row_stride;
  block.c = p.c ? static_cast<const char*>(p.c) + c_offset * element_bytes(p.c_dtype) : nullptr;
  block.rows = rows;
  return block;
}

// Where expert g's rows start in the prefix-sum form: psum[g - 1] rounded up to the alignment.
std::int64_t psum_start(const GemmProblem& p, std::int64_t group) {
  if (group == 0) return 0;
  constexpr std::int64_t kAlignment = kMAlignmentForContiguousLayout;
  return (p.psum[group - 1] + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

void check_group_arrays(const GemmProblem& p) {
  if (p.layout == GemmLayout::Contiguous && p.m_indices != nullptr) {
    for (std::int64_t row = 0; row < p.m; ++row) {
      const std::int32_t expert = p.m_indices[row];
      if (expert < -1 || expert >= p.num_groups)
        fail(p, grouped_layout_name(p), "row " + std::to_string(row), expert,
             "an expert in [0, " + std::to_string(p.num_groups) + ") or -1 for a padding row");
    }
  }
  if (p.layout == GemmLayout::Contiguous && p.psum != nullptr) {
    for (std::int64_t group = 0; group < p.num_groups; ++group) {
      const std::int32_t end = p.psum[group];
      const std::int64_t least = group == 0 ? 0 : p.psum[group - 1];
      if (end < least || end > p.m)
        fail(p, grouped_layout_name(p), "expert " + std::to_string(group), end,
             "a prefix sum of rows in [" + std::to_string(least) + ", " + std::to_string(p.m) +
                 "]: not below the expert before it and at most M_sum");
    }
  }
  if (p.d_row_starts != nullptr) {
    for (std::int64_t group = 0; group < p.num_groups; ++group) {
      const std::int32_t start = p.d_row_starts[group];
      const std::int64_t rows = p.psum[group] - psum_start(p, group);
      if (start < 0 || start + std::max<std::int64_t>(rows, 0) > p.d_rows)
        fail(p, "d_row_starts", "expert " + std::to_string(group), start,
             "a first row of d from which the expert's " + std::to_string(std::max<std::int64_t>(rows, 0)) +
                 " rows fit in its " + std::to_string(p.d_rows));
    }
  }
  if (p.layout == GemmLayout::Masked) {
    for (std::int64_t group = 0; group < p.num_groups; ++group) {
      const std::int32_t rows = p.masked_m[group];
      if (rows < 0 || rows > p.m)
        fail(p, "masked_m", "group " + std::to_string(group), rows,
             "a row count in [0, " + std::to_string(p.m) + "] (M_max)");
    }
  }
}

std::vector<RowBlock> make_row_blocks(const GemmProblem& p) {
  check_group_arrays(p);
  std::vector<RowBlock> blocks;
  switch (p.layout) {
    case GemmLayout::Normal: blocks.push_back(block_at(p, 0, 0, p.m, 0)); break;
    case GemmLayout::Contiguous:
      if (p.psum != nullptr) {
        for (std::int64_t group = 0; group < p.num_groups; ++group) {
          const std::int64_t begin = psum_start(p, group), end = p.psum[group];
          const std::int64_t d_row = p.d_row_starts != nullptr ? p.d_row_starts[group] : begin;
          if (begin < end) blocks.push_back(block_at(p, group, begin, end - begin, d_row));
        }
        break;
      }
      for (std::int64_t begin = 0; begin < p.m;) {
        const std::int32_t expert = p.m_indices[begin];
        std::int64_t end = begin + 1;
        while (end < p.m && p.m_indices[end] == expert) ++end;
        if (expert >= 0) blocks.push_back(block_at(p, expert, begin, end - begin, begin));
        begin = end;
      }
      break;
    case GemmLayout::Masked:
      for (std::int64_t group = 0; group < p.num_groups; ++group)
        if (p.masked_m[group] > 0) blocks.push_back(block_at(p, group, 0, p.masked_m[group], 0));
      break;
    case GemmLayout::KGrouped: break;  // never here: cpu::gemm runs each expert as a normal problem
  }
  return blocks;
}

}  // namespace fgemm::cpu
