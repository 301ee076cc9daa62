#include "core/settings.hpp"

#include <atomic>

namespace fgemm::detail {
namespace {

std::atomic<int> g_requested_num_sms{0};
std::atomic<bool> g_programmatic_dependent_launch{false};

}  // namespace

int requested_num_sms() { return g_requested_num_sms.load(std::memory_order_relaxed); }

void request_num_sms(int num_sms) { g_requested_num_sms.store(num_sms, std::memory_order_relaxed); }

bool programmatic_dependent_launch() { return g_programmatic_dependent_launch.load(std::memory_order_relaxed); }

void request_programmatic_dependent_launch(bool enable) {
  g_programmatic_dependent_launch.store(enable, std::memory_order_relaxed);
}

}  // namespace fgemm::detail
