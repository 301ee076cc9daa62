// A fixed set of worker threads, started once and reused by every call, that run one parallel loop at a
// time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fgemm::cpu {

class ThreadPool {
 public:
  // The process's pool: as many threads as cores this process may run on (the calling thread is one).
  static ThreadPool& instance();

  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls task(i) for every i in [0, count) on the workers and the calling thread, handing out indices one
  // at a time (so uneven tasks balance), and returns when all calls are done. If a task throws, the
  // indices not yet started are skipped and the first exception is rethrown here. Loops run one after
  // another when several threads call at once; a task must not call run() itself.
  void run(std::int64_t count, const std::function<void(std::int64_t)>& task);

 private:
  void worker_main();
  void take_tasks();

  std::vector<std::thread> workers_;
  int owner_pid_;

  std::mutex run_mutex_;  // one loop at a time
  std::mutex mutex_;      // guards everything below but next_
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::uint64_t generation_ = 0;  // counts loops, so a worker knows a new one has started
  int busy_workers_ = 0;
  bool stopping_ = false;
  const std::function<void(std::int64_t)>* task_ = nullptr;
  std::int64_t count_ = 0;
  std::exception_ptr error_;
  std::atomic<std::int64_t> next_{0};
};

}  // namespace fgemm::cpu
