// fgemm::warmup: checks the shapes, then hands them to the GPU side as the heuristics see problems.
#include "fgemm/warmup.hpp"

#include <optional>
#include <string>

#include "cuda/warmup.hpp"
#include "fgemm/error.hpp"

namespace fgemm {
namespace {

[[noreturn]] void invalid(const std::string& argument, const std::string& what) {
  throw Error(ErrorKind::InvalidValue, "fgemm.warmup: argument '" + argument + "' " + what);
}

// What a GemmOperation names: its input type, its layout and the storage of A and B (the letters of its name).
struct Operation {
  DType ab_dtype;
  detail::GemmLayout layout;
  bool a_mn_major, b_mn_major;
};

std::optional<Operation> operation_of(GemmOperation operation) {
  using L = detail::GemmLayout;
  switch (operation) {
    case GemmOperation::Fp8GemmNt: return Operation{DType::E4M3, L::Normal, false, false};
    case GemmOperation::MGroupedFp8GemmNtContiguous: return Operation{DType::E4M3, L::Contiguous, false, false};
    case GemmOperation::MGroupedFp8GemmNtMasked: return Operation{DType::E4M3, L::Masked, false, false};
    case GemmOperation::Bf16GemmNt: return Operation{DType::BF16, L::Normal, false, false};
    case GemmOperation::Bf16GemmNn: return Operation{DType::BF16, L::Normal, false, true};
    case GemmOperation::Bf16GemmTn: return Operation{DType::BF16, L::Normal, true, true};
    case GemmOperation::Bf16GemmTt: return Operation{DType::BF16, L::Normal, true, false};
    case GemmOperation::MGroupedBf16GemmNtContiguous: return Operation{DType::BF16, L::Contiguous, false, false};
    case GemmOperation::MGroupedBf16GemmNnContiguous: return Operation{DType::BF16, L::Contiguous, false, true};
    case GemmOperation::MGroupedBf16GemmNtMasked: return Operation{DType::BF16, L::Masked, false, false};
    case GemmOperation::Fp16GemmNt: return Operation{DType::F16, L::Normal, false, false};
    case GemmOperation::Fp16GemmNn: return Operation{DType::F16, L::Normal, false, true};
    case GemmOperation::Fp16GemmTn: return Operation{DType::F16, L::Normal, true, true};
    case GemmOperation::Fp16GemmTt: return Operation{DType::F16, L::Normal, true, false};
    case GemmOperation::MGroupedFp16GemmNtContiguous: return Operation{DType::F16, L::Contiguous, false, false};
    case GemmOperation::MGroupedFp16GemmNnContiguous: return Operation{DType::F16, L::Contiguous, false, true};
    case GemmOperation::MGroupedFp16GemmNtMasked: return Operation{DType::F16, L::Masked, false, false};
  }
  return std::nullopt;  // a value cast from outside the enumeration
}

// The shape as the GEMM's own call presents its problem to the heuristics (cuda::gemm's problem_size), so that the
// kernels compiled are those the calls will look up.
cuda::ProblemSize problem_of(const WarmupShape& shape, std::size_t index) {
  const std::string name = "shapes[" + std::to_string(index) + "]";
  const std::optional<Operation> named = operation_of(shape.operation);
  if (!named)
    invalid(name + ".operation", "is not a GemmOperation: got " + std::to_string(static_cast<int>(shape.operation)));
  const Operation operation = *named;
  const bool fp8 = operation.ab_dtype == DType::E4M3;
  if (shape.n < 1) invalid(name + ".n", "must be >= 1, got " + std::to_string(shape.n));
  // K contiguous E4M3: a row of A and B is K bytes, which the TMA wants a multiple of 16. The 16-bit GEMMs take
  // any K (their operands' rows may be padded).
  if (fp8 && (shape.k < 1 || shape.k % 16 != 0))
    invalid(name + ".k", "must be a positive multiple of 16, got " + std::to_string(shape.k));
  if (shape.k < 1) invalid(name + ".k", "must be >= 1, got " + std::to_string(shape.k));
  const DType d_16bit = operation.ab_dtype == DType::F16 ? DType::F16 : DType::BF16;
  if (shape.d_dtype != d_16bit && shape.d_dtype != DType::F32)
    invalid(name + ".d_dtype", std::string("must be ") + dtype_name(d_16bit) + " or float32 for this operation");
  const bool masked = operation.layout == detail::GemmLayout::Masked;
  if (masked && shape.num_groups < 1)
    invalid(name + ".num_groups", "must be >= 1 for the masked layout, got " + std::to_string(shape.num_groups));
  if (shape.with_c && operation.layout != detail::GemmLayout::Normal)
    invalid(name + ".with_c", "is for the GEMMs of the normal layout only: the grouped GEMMs take no C");
  if (shape.use_psum_layout && operation.layout != detail::GemmLayout::Contiguous)
    invalid(name + ".use_psum_layout", "is for the m-grouped contiguous GEMMs only");
  if (shape.packed_d && !shape.use_psum_layout)
    invalid(name + ".packed_d", "needs use_psum_layout: a packed D (d_row_starts) goes with the prefix sums");
  cuda::ProblemSize problem;
  problem.num_groups = masked ? shape.num_groups : 1;
  problem.shape.layout = operation.layout;
  problem.shape.n = shape.n;
  problem.shape.k = shape.k;
  problem.shape.ab_dtype = operation.ab_dtype;
  problem.shape.a_mn_major = operation.a_mn_major;
  problem.shape.b_mn_major = operation.b_mn_major;
  problem.shape.output_f32 = shape.d_dtype == DType::F32;
  problem.shape.output_f16 = shape.d_dtype == DType::F16;
  problem.shape.has_c = shape.with_c;
  problem.shape.psum = shape.use_psum_layout;
  problem.shape.packed_d = shape.packed_d;
  if (fp8) {
    problem.shape.sfa_by_tma = shape.sfa_mn_major;
  } else {
    problem.shape.scaling = detail::Scaling::None;
    problem.shape.c_of_d_type = shape.with_c && shape.d_dtype != DType::F32;
  }
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
