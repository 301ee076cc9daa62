// The CPU backend's persistent thread pool.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/thread_pool.hpp"

namespace fgemm::cpu {
namespace {

// Runs a loop of `count` tasks that count their calls; true when each index ran exactly once.
bool runs_each_index_once(ThreadPool& pool, std::int64_t count) {
  std::vector<std::atomic<int>> calls(static_cast<std::size_t>(count));
  pool.run(count, [&](std::int64_t i) { calls[static_cast<std::size_t>(i)].fetch_add(1); });
  for (const auto& c : calls)
    if (c.load() != 1) return false;
  return true;
}

class PoolOfSize : public testing::TestWithParam<int> {};

TEST_P(PoolOfSize, RunsEveryIndexExactlyOnce) {
  ThreadPool pool(GetParam());
  EXPECT_EQ(pool.num_threads(), GetParam());
  for (std::int64_t count : {0, 1, 2, 7, 1000}) EXPECT_TRUE(runs_each_index_once(pool, count)) << count;
}

TEST_P(PoolOfSize, SpreadsTasksOverItsThreads) {
  ThreadPool pool(GetParam());
  std::atomic<int> waiting{0};
  std::vector<std::thread::id> ids(GetParam());
  // Each task waits until all have started, which only finishes if every thread runs one.
  pool.run(GetParam(), [&](std::int64_t i) {
    ids[i] = std::this_thread::get_id();
    waiting.fetch_add(1);
    while (waiting.load() < GetParam()) std::this_thread::yield();
  });
  for (int i = 0; i < GetParam(); ++i)
    for (int j = 0; j < i; ++j) EXPECT_NE(ids[i], ids[j]);
}

TEST_P(PoolOfSize, RethrowsTheExceptionOfATaskAndStaysUsable) {
  ThreadPool pool(GetParam());
  const auto throw_at_7 = [](std::int64_t i) {
    if (i == 7) throw std::runtime_error("task 7");
  };
  EXPECT_THROW(pool.run(100, throw_at_7), std::runtime_error);
  EXPECT_TRUE(runs_each_index_once(pool, 100));
}

TEST_P(PoolOfSize, ServesCallersOfSeveralThreads) {
  ThreadPool pool(GetParam());
  std::vector<std::thread> callers;
  std::atomic<int> correct{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int repeat = 0; repeat < 20; ++repeat) correct += runs_each_index_once(pool, 50);
    });
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(correct.load(), 4 * 20);
}

// A process forked after the pool started has none of its workers; the pool must still finish loops there.
TEST_P(PoolOfSize, RunsInAForkedChild) {
  ThreadPool pool(GetParam());
  ASSERT_TRUE(runs_each_index_once(pool, 10));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a hang ends the child by a signal, which the parent reports
    _exit(runs_each_index_once(pool, 100) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

INSTANTIATE_TEST_SUITE_P(cpu, PoolOfSize, testing::Values(1, 2, 3, 8), [](const testing::TestParamInfo<int>& info) {
  return std::to_string(info.param) + "_threads";
});

}  // namespace
}  // namespace fgemm::cpu
