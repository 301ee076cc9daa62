#include "cpu/thread_pool.hpp"

#include <sched.h>
#include <unistd.h>

#include <utility>

namespace fgemm::cpu {
namespace {

int available_cores() {
  cpu_set_t cores;
  if (sched_getaffinity(0, sizeof cores, &cores) == 0) return CPU_COUNT(&cores);
  const unsigned count = std::thread::hardware_concurrency();
  return count > 0 ? static_cast<int>(count) : 1;
}

}  // namespace

ThreadPool& ThreadPool::instance() {
  static ThreadPool pool(available_cores());
  return pool;
}

ThreadPool::ThreadPool(int num_threads) : owner_pid_(getpid()) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_main(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run(std::int64_t count, const std::function<void(std::int64_t)>& task) {
  // A child process forked after the pool started has none of its workers: run everything here rather
  // than wait for threads that do not exist.
  if (count <= 0) return;
  if (count == 1 || workers_.empty() || getpid() != owner_pid_) {
    for (std::int64_t i = 0; i < count; ++i) task(i);
    return;
  }
  std::lock_guard<std::mutex> one_loop(run_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    busy_workers_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  take_tasks();
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [this] { return busy_workers_ == 0; });
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::worker_main() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    take_tasks();
    std::lock_guard<std::mutex> lock(mutex_);
    if (--busy_workers_ == 0) finished_.notify_one();
  }
}

void ThreadPool::take_tasks() {
  for (std::int64_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < count_;) {
    try {
      (*task_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      next_.store(count_, std::memory_order_relaxed);
    }
  }
}

}  // namespace fgemm::cpu
