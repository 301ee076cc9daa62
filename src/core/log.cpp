#include "core/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace fgemm::detail {
namespace {

std::atomic<LogSink> g_sink{nullptr};
std::mutex g_stderr_mutex;  // one message at a time, so lines of two threads do not interleave

}  // namespace

void log(LogLevel level, const std::string& message) {
  if (const LogSink sink = g_sink.load(std::memory_order_acquire)) {
    sink(level, message);
    return;
  }
  std::lock_guard<std::mutex> lock(g_stderr_mutex);
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
}

void set_log_sink(LogSink sink) { g_sink.store(sink, std::memory_order_release); }

}  // namespace fgemm::detail
