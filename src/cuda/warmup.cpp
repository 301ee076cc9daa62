#include "cuda/warmup.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "core/settings.hpp"
#include "cuda/few_rows.hpp"
#include "cuda/gemm_sm90.hpp"
#include "cuda/hopper_device.hpp"
#include "fgemm/few_rows_params.cuh"
#include "jit/kernel_cache.hpp"

namespace fgemm::cuda {
namespace {

// Runs work(i) for i in [0, count) on `threads` threads; the first exception is rethrown once all have
// stopped (the others stop taking work).
template <typename Work>
void parallel_for(std::size_t count, int threads, const Work& work) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < count && !failed; i = next++) {
      try {
        work(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!failed.exchange(true)) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const std::size_t size = std::min<std::size_t>(static_cast<std::size_t>(threads), count);
  for (std::size_t t = 1; t < size; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

// Without a device: an H100's limits, with set_num_sms's count of SMs where one is set.
DeviceLimits limits_for(std::optional<int> device) {
  if (device) return gemm_device_limits(*device);
  DeviceLimits limits;
  if (const int requested = detail::requested_num_sms(); requested > 0) limits.num_sms = requested;
  return limits;
}

// A kernel to compile: its cache key, and what the JIT compiles.
struct KernelToWarm {
  std::string name;
  jit::KernelSpec spec;
};

// The kernels a problem takes for M in [m_min, m_max]: the few-row kernel's where it takes the problem's M of up to
// eight rows (whose configuration does not depend on M), the skeleton's configurations for the other M.
std::vector<KernelToWarm> kernels_of(ProblemSize problem, std::int64_t m_min, std::int64_t m_max,
                                     const DeviceLimits& limits, const BlockShape& forced) {
  std::vector<KernelToWarm> kernels;
  problem.m = m_min;
  if (const std::optional<FewRowsConfig> decode = few_rows_config(problem, limits.num_sms, forced)) {
    kernels.push_back({decode->name(), few_rows_kernel_spec(*decode)});
    m_min = std::int64_t(few_rows::kMaxRows) + 1;
    if (m_min > m_max) return kernels;
  }
  for (const KernelConfig& config : configs_for_m_range(problem, m_min, m_max, limits, forced))
    kernels.push_back({config.name(), gemm_kernel_spec(config)});
  return kernels;
}

}  // namespace

std::vector<WarmedKernel> warmup(
    const std::vector<ProblemSize>& problems, std::int64_t m_min, std::int64_t m_max, std::optional<int> device,
    int threads, const std::function<void(const WarmedKernel&, std::size_t, std::size_t)>& on_kernel) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (device) use_hopper_device(*device);
  const DeviceLimits limits = limits_for(device);
  const BlockShape forced = forced_config();

  // Each shape's kernels, enumerated in parallel (a few hundred milliseconds each for 16384 values of M).
  std::vector<std::vector<KernelToWarm>> per_problem(problems.size());
  parallel_for(problems.size(), threads, [&](std::size_t i) {
    per_problem[i] = kernels_of(problems[i], m_min, m_max, limits, forced);
  });
  std::vector<KernelToWarm> kernels;
  std::unordered_set<std::string> names;
  for (auto& list : per_problem)
    for (KernelToWarm& kernel : list)
      if (names.insert(kernel.name).second) kernels.push_back(std::move(kernel));

  std::vector<WarmedKernel> warmed(kernels.size());
  std::mutex report_mutex;
  std::size_t done = 0;
  parallel_for(kernels.size(), threads, [&](std::size_t i) {
    const auto start = std::chrono::steady_clock::now();
    WarmedKernel& kernel = warmed[i];
    const jit::KernelSpec& spec = kernels[i].spec;
    kernel.name = kernels[i].name;
    if (!(device && jit::is_loaded(*device, kernel.name))) {
      kernel.compiled = jit::compile_into_disk_cache(spec);
      if (device) jit::get_kernel(*device, kernel.name, [&spec] { return spec; });
    }
    kernel.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(report_mutex);
    ++done;
    if (on_kernel) on_kernel(kernel, done, kernels.size());
  });
  return warmed;
}

}  // namespace fgemm::cuda
