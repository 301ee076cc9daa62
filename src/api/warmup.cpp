// fgemm::warmup: checks the shapes, then hands them to the GPU side as the heuristics see problems.
#include "fgemm/warmup.hpp"

#include <string>

#include "cuda/warmup.hpp"
#include "fgemm/error.hpp"

namespace fgemm {
namespace {

[[noreturn]] void invalid(const std::string& argument, const std::string& what) {
  throw Error(ErrorKind::InvalidValue, "fgemm.warmup: argument '" + argument + "' " + what);
}

cuda::ProblemSize problem_of(const WarmupShape& shape, std::size_t index) {
  const std::string name = "shapes[" + std::to_string(index) + "]";
  if (shape.n < 1) invalid(name + ".n", "must be >= 1, got " + std::to_string(shape.n));
  // K contiguous E4M3: a row of A and B is K bytes, which the TMA wants a multiple of 16.
  if (shape.k < 1 || shape.k % 16 != 0)
    invalid(name + ".k", "must be a positive multiple of 16, got " + std::to_string(shape.k));
  if (shape.d_dtype != DType::BF16 && shape.d_dtype != DType::F32)
    invalid(name + ".d_dtype", "must be bfloat16 or float32");
  const bool masked = shape.operation == GemmOperation::MGroupedFp8GemmNtMasked;
  if (masked && shape.num_groups < 1)
    invalid(name + ".num_groups", "must be >= 1 for the masked layout, got " + std::to_string(shape.num_groups));
  if (shape.with_c && shape.operation != GemmOperation::Fp8GemmNt)
    invalid(name + ".with_c", "is for fp8_gemm_nt only: the grouped GEMMs take no C");
  cuda::ProblemSize problem;
  problem.num_groups = masked ? shape.num_groups : 1;
  problem.shape.layout = shape.operation == GemmOperation::Fp8GemmNt ? detail::GemmLayout::Normal
                         : masked                                    ? detail::GemmLayout::Masked
                                                                     : detail::GemmLayout::Contiguous;
  problem.shape.n = shape.n;
  problem.shape.k = shape.k;
  problem.shape.output_f32 = shape.d_dtype == DType::F32;
  problem.shape.has_c = shape.with_c;
  problem.shape.sfa_by_tma = shape.sfa_mn_major;
  return problem;
}

}  // namespace

std::vector<WarmedKernel> warmup(
    const std::vector<WarmupShape>& shapes, std::int64_t m_min, std::int64_t m_max, std::optional<int> device,
    int threads, const std::function<void(const WarmedKernel&, std::size_t, std::size_t)>& on_kernel) {
  constexpr std::int64_t kMaxM = 0x7fffffff;  // the GPU kernels' limit on M
  if (m_min < 1 || m_min > kMaxM) invalid("m_min", "must be in [1, 2^31 - 1], got " + std::to_string(m_min));
  if (m_max < m_min || m_max > kMaxM)
    invalid("m_max", "must be in [m_min, 2^31 - 1] = [" + std::to_string(m_min) + ", 2^31 - 1], got " +
                         std::to_string(m_max));
  if (threads < 0) invalid("threads", "must be >= 0 (0: one per core), got " + std::to_string(threads));
  std::vector<cuda::ProblemSize> problems;
  for (std::size_t i = 0; i < shapes.size(); ++i) problems.push_back(problem_of(shapes[i], i));
  return cuda::warmup(problems, m_min, m_max, device, threads, on_kernel);
}

}  // namespace fgemm
