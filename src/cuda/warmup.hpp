// The GPU side of fgemm::warmup: the configurations of an M range, compiled on a thread pool.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "cuda/heuristics.hpp"
#include "fgemm/warmup.hpp"

namespace fgemm::cuda {

// `problems` give each shape with M open (ProblemSize::m is ignored). See fgemm::warmup.
std::vector<WarmedKernel> warmup(
    const std::vector<ProblemSize>& problems, std::int64_t m_min, std::int64_t m_max, std::optional<int> device,
    int threads, const std::function<void(const WarmedKernel&, std::size_t, std::size_t)>& on_kernel);

}  // namespace fgemm::cuda
