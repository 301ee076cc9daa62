#include "cpu/cpu_gemm.hpp"

#include "cpu/bf16.hpp"
#include "cpu/blocked_gemm.hpp"
#include "cpu/dequantize_row_blocks.hpp"
#include "cpu/direct_gemm.hpp"
#include "cpu/f16.hpp"
#include "cpu/int8_gemm.hpp"
#include "cpu/operand_packing.hpp"
#include "cpu/packed_a.hpp"
#include "cpu/row_blocks.hpp"
#include "cpu/scratch_buffer.hpp"

namespace fgemm::cpu {
namespace {

using detail::GemmLayout;
using detail::GemmProblem;

// The scale of every K block of a 16-bit problem: multiplying by 1 changes no sum.
constexpr float kUnitScale = 1.0f;

// What the drivers run for a 16-bit problem: the FP8 recipe's shape with every scale kUnitScale (sfa and sfb
// point at it with zero strides) and K rounded up to kPadK (the packers fill the values past K with zeros).
GemmProblem with_unit_scales(const GemmProblem& problem) {
  GemmProblem run = problem;
  run.k = (problem.k + kPadK - 1) / kPadK * kPadK;
  run.sfa = run.sfb = &kUnitScale;
  run.sfa_m_stride = run.sfa_k_stride = run.sfa_group_stride = 0;
  run.sfb_n_stride = run.sfb_k_stride = run.sfb_group_stride = 0;
  return run;
}

// The normal, contiguous and masked layouts.
void gemm_m_layouts(const GemmProblem& problem) {
  const KernelSet& kernels = kernels_for(selected_isa(), problem.ab_dtype);
  const GemmProblem run = problem.ab_dtype == DType::E4M3 ? problem : with_unit_scales(problem);
  const OperandPacking operands(problem, kernels);
  std::vector<RowBlock> few_rows, many_rows;
  for (const RowBlock& block : make_row_blocks(run))
    (block.rows <= kernels.max_direct_rows ? few_rows : many_rows).push_back(block);
  // The packed A of the calling thread's last call is kept, so that calls of similar sizes allocate nothing.
  thread_local ScratchBuffer few_rows_a, many_rows_a;
  if (!few_rows.empty())
    direct_gemm(run, few_rows, PackedA(run, few_rows, kernels, operands, few_rows_a), kernels, operands);
  if (!many_rows.empty())
    blocked_gemm(run, many_rows, PackedA(run, many_rows, kernels, operands, many_rows_a), kernels, operands);
}

// Element `offset` of D, whose elements are FP32 or BF16.
void* d_element(const GemmProblem& p, std::int64_t offset) {
  return static_cast<std::uint8_t*>(p.d) + offset * static_cast<std::int64_t>(dtype_size(p.d_dtype));
}

// Element `offset` of C, as FP32 (exactly: a 16-bit C is of D's type).
float c_element(const GemmProblem& p, std::int64_t offset) {
  if (p.c_dtype == DType::F32) return static_cast<const float*>(p.c)[offset];
  const std::uint16_t bits = static_cast<const std::uint16_t*>(p.c)[offset];
  return p.c_dtype == DType::BF16 ? float_from_bf16(bits) : float_from_f16(bits);
}

// D[g] = C[g] (rounded to D's type), or zeros without C: an expert of the k-grouped layout with no rows of K.
void write_empty_expert(const GemmProblem& p, std::int64_t group) {
  for (std::int64_t row = 0; row < p.m; ++row) {
    const std::int64_t d_offset = group * p.d_group_stride + row * p.d_row_stride;
    const std::int64_t c_offset = group * p.c_group_stride + row * p.c_row_stride;
    for (std::int64_t col = 0; col < p.n; ++col) {
      const float value = p.c == nullptr ? 0.0f : c_element(p, c_offset + col);
      switch (p.d_dtype) {
        case DType::F32: static_cast<float*>(p.d)[d_offset + col] = value; break;
        case DType::F16: static_cast<std::uint16_t*>(p.d)[d_offset + col] = f16_from_float(value); break;
        default: static_cast<std::uint16_t*>(p.d)[d_offset + col] = bf16_from_float(value); break;
      }
    }
  }
}

// The k-grouped layout, expert by expert: expert g is a normal problem over its own ks[g] values of K of A and B
// (the rows of MN-major operands, the columns of K-major ones), into D[g] with C[g].
void gemm_k_grouped(const GemmProblem& p) {
  std::int64_t k_start = 0;
  for (std::int64_t group = 0; group < p.num_groups; ++group) {
    const std::int64_t k = p.ks[group];
    if (k == 0) {
      write_empty_expert(p, group);
      continue;
    }
    GemmProblem expert = p;
    expert.layout = GemmLayout::Normal;
    expert.k = k;
    expert.num_groups = 1;
    expert.a = p.a + k_start * (p.a_mn_major ? p.a_row_stride : 1) * 2;  // 16-bit elements
    expert.b = p.b + k_start * (p.b_mn_major ? p.b_row_stride : 1) * 2;
    expert.d = d_element(p, group * p.d_group_stride);
    const std::int64_t c_offset = group * p.c_group_stride * static_cast<std::int64_t>(dtype_size(p.c_dtype));
    expert.c = p.c ? static_cast<const std::uint8_t*>(p.c) + c_offset : nullptr;
    expert.d_group_stride = expert.c_group_stride = 0;
    expert.ks.clear();
    gemm_m_layouts(expert);
    k_start += k;
  }
}

}  // namespace

const KernelSet& kernels_for(Isa isa) {
  switch (isa) {
    case Isa::AmxBf16: return kAmxBf16Kernels;
    case Isa::Avx512Bf16: return kAvx512Bf16Kernels;
    case Isa::Avx512: return kAvx512Kernels;
    case Isa::Avx2: return kAvx2Kernels;
    case Isa::Scalar: break;
  }
  return kScalarKernels;
}

const KernelSet& kernels_for(Isa isa, DType input) {
  const KernelSet& kernels = kernels_for(isa);
  // The BF16 sets have no FP16 packers; their CPUs have AVX-512, whose FP32 set multiplies FP16 exactly.
  if (input == DType::F16 && kernels.f16_packers.pack_a == nullptr) return kAvx512Kernels;
  return kernels;
}

void gemm(const GemmProblem& problem) {
  if (problem.ab_dtype == DType::I8) return int8_gemm(problem);
  if (problem.scaling == detail::Scaling::RowBlocks) {
    // The calling thread's operands of its last such call are kept, so that calls of similar sizes allocate nothing.
    thread_local ScratchBuffer a16, b16;
    return gemm(dequantize_row_blocks(problem, a16, b16));
  }
  if (problem.layout == GemmLayout::KGrouped)
    gemm_k_grouped(problem);
  else
    gemm_m_layouts(problem);
}

}  // namespace fgemm::cpu
