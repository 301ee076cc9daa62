#include "cuda/few_rows.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "core/settings.hpp"
#include "cuda/stream_order.hpp"
#include "fgemm/few_rows_params.cuh"
#include "jit/kernel_cache.hpp"
#include "jit/launch.hpp"

namespace fgemm::cuda {
namespace {

// Beyond this many bytes of B, the skeleton's decode tiles were as fast or faster on an H200 (7168 x 16384 and
// 129280 x 7168, docs/PERFORMANCE.md, "The few-row kernel"): their TMA ring streams long reads as well as the
// vector loads, and the few-row kernel's cost is then all in the read.
constexpr std::int64_t kMaxBBytes = std::int64_t(128) << 20;

// A CTA's warps cover warps x unroll chunks of K per turn. Eight warps of two loads each came within 3% of the
// fastest on every shape of an H200's sweep but N = 2112 (below), of 4, 8 or 16 warps of 1, 2 or 4 loads and K split
// in 1 to 8 (docs/PERFORMANCE.md, "The few-row kernel").
constexpr int kWarps = 8;
constexpr int kUnroll = 2;
constexpr int kMaxSplits = 8;  // the largest portable cluster
// CTAs the grid aims for per SM, so that enough loads are in flight. A grid of fewer gets twice the warps per CTA
// where it has at least kWideCtasPerSm (N = 2112 on 132 SMs: 11.3 us against 12.1 split in two), else splits K
// between the CTAs of a cluster (N = 576: 6.0 us split in eight, 6.6 with 16 warps split in two).
constexpr std::int64_t kCtasPerSm = 3;
constexpr double kWideCtasPerSm = 1.5;

}  // namespace

std::string FewRowsConfig::name() const {
  std::ostringstream out;
  out << "fgemm_sm90_few_rows_" << dtype_name(f16_inputs ? DType::F16 : DType::BF16) << "_d" << dtype_name(d_dtype)
      << (has_c ? (c_of_d_type ? "_c16" : "_c32") : "") << "_w" << warps << "u" << unroll << "s" << splits;
  return out.str();
}

// The few-row kernel runs the normal layout's 16-bit GEMMs of at most eight rows of A with both operands K-major and
// K a multiple of 8 (its lanes load 16 bytes at a time and never a part of a vector), and B of at most kMaxBBytes.
// Validation has made A and B start 16-byte aligned with rows of whole 16 bytes (the TMA's rule, on every backend),
// so that every lane's vector is aligned. Not where anything of the configuration is forced (force_config: the tests and measurements of
// the tiles), nor where set_num_sms limits the SMs: its grid is not persistent.
std::optional<FewRowsConfig> few_rows_config(const ProblemSize& size, int num_sms, const BlockShape& forced) {
  const KernelShape& shape = size.shape;
  const bool sixteen_bit = shape.ab_dtype == DType::BF16 || shape.ab_dtype == DType::F16;
  if (shape.layout != detail::GemmLayout::Normal || !sixteen_bit || shape.scaling != detail::Scaling::None ||
      shape.a_mn_major || shape.b_mn_major)
    return std::nullopt;
  if (size.m < 1 || size.m > std::int64_t(few_rows::kMaxRows) || shape.k % few_rows::kVectorElements != 0)
    return std::nullopt;
  if (shape.n * shape.k * 2 > kMaxBBytes) return std::nullopt;
  if (!forced.forces_nothing() || detail::requested_num_sms() > 0) return std::nullopt;

  FewRowsConfig config;
  config.f16_inputs = shape.ab_dtype == DType::F16;
  config.d_dtype = shape.output_f32 ? DType::F32 : shape.output_f16 ? DType::F16 : DType::BF16;
  // C of its own, or D itself (FP32 in place, which the heuristics see as the TMA's additions to D).
  config.has_c = shape.reads_c();
  config.c_of_d_type = shape.c_of_d_type;
  config.warps = kWarps;
  config.unroll = kUnroll;
  const std::int64_t ctas = (shape.n + few_rows::kColumnsPerCta - 1) / few_rows::kColumnsPerCta;
  if (ctas < kCtasPerSm * num_sms && ctas >= kWideCtasPerSm * num_sms) config.warps = 2 * kWarps;
  // Each split keeps at least one turn of the CTA's warps.
  const std::int64_t turn = std::int64_t(config.warps) * kUnroll * few_rows::kChunkK;
  while (config.warps == kWarps && config.splits < kMaxSplits && ctas * config.splits < kCtasPerSm * num_sms &&
         shape.k >= 2 * config.splits * turn)
    config.splits *= 2;
  const std::int64_t chunks = (shape.k + few_rows::kChunkK - 1) / few_rows::kChunkK;
  config.k_per_split = (chunks + config.splits - 1) / config.splits * few_rows::kChunkK;
  return config;
}

jit::KernelSpec few_rows_kernel_spec(const FewRowsConfig& config) {
  const char* output = config.d_dtype == DType::F32 ? "F32" : config.d_dtype == DType::F16 ? "F16" : "Bf16";
  const char* add_c = !config.has_c ? "None" : config.c_of_d_type ? "OfD" : "F32";
  std::ostringstream source;
  source << "// " << config.name() << "\n"
         << "#include \"fgemm/sm90/few_rows_kernel.cuh\"\n\n"
         << "extern \"C\" __global__ void __launch_bounds__(" << config.warps * 32 << ")\n"
         << "fgemm_few_rows(const fgemm::few_rows::Params params) {\n"
         // Launched to overlap the previous kernel of the stream (fgemm::set_pdl), the kernel reads nothing before
         // that kernel completes; the next kernel may start its prologue on the SMs this one leaves.
         << "  fgemm::ptx::wait_for_previous_grid();\n"
         << "  fgemm::ptx::allow_next_grid();\n"
         << "  fgemm::few_rows::few_rows_gemm<fgemm::few_rows::Config<" << (config.f16_inputs ? "true" : "false")
         << ", fgemm::few_rows::Output::" << output << ", fgemm::few_rows::AddC::" << add_c << ", " << config.warps
         << ", " << config.unroll << ", " << config.splits << ">>(params);\n"
         << "}\n";
  return {"fgemm_few_rows", source.str(), 0};
}

namespace {

// The kernel's name, built once per configuration: a decode GEMM's call costs the host a few microseconds, to which
// a string stream each call would add.
const std::string& kernel_name(const FewRowsConfig& config) {
  using Key = std::tuple<bool, DType, bool, bool, int, int, int>;
  static std::mutex mutex;
  static std::map<Key, std::string> names;  // a map: references to its values stay valid
  const Key key{config.f16_inputs, config.d_dtype, config.has_c, config.c_of_d_type,
                config.warps,      config.unroll,  config.splits};
  std::lock_guard<std::mutex> lock(mutex);
  auto found = names.find(key);
  if (found == names.end()) found = names.emplace(key, config.name()).first;
  return found->second;
}

}  // namespace

void few_rows_gemm(const detail::GemmProblem& p, const FewRowsConfig& config, Stream stream) {
  const jit::Kernel& kernel =
      jit::get_kernel(p.device.index, kernel_name(config), [&config] { return few_rows_kernel_spec(config); });
  few_rows::Params params{p.a,
                          p.b,
                          p.c,
                          p.d,
                          static_cast<std::uint32_t>(p.m),
                          static_cast<std::uint32_t>(p.n),
                          static_cast<std::uint32_t>(p.k),
                          p.a_row_stride,
                          p.b_row_stride,
                          p.c_row_stride,
                          p.d_row_stride,
                          static_cast<std::uint32_t>(config.k_per_split)};
  void* args[] = {&params};
  const auto ctas = static_cast<unsigned>((p.n + few_rows::kColumnsPerCta - 1) / few_rows::kColumnsPerCta);
  const auto splits = static_cast<unsigned>(config.splits);
  jit::launch(kernel,
              jit::LaunchShape{{ctas, splits, 1}, {static_cast<unsigned>(config.warps * 32), 1, 1}, {1, splits, 1}},
              args, static_cast<driver::CUstream>(stream), kernel_stream_order());
}

}  // namespace fgemm::cuda
