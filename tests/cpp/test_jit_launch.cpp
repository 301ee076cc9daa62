#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device.hpp"
#include "fgemm/error.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/launch.hpp"
#include "jit/process.hpp"
#include "test_jit_support.hpp"

namespace fgemm::jit {
namespace {

// Each block fills its dynamic shared memory, reads it back in reverse and adds its rank in the cluster.
KernelSpec cluster_kernel(int dynamic_smem_bytes) {
  return {"fgemm_test_cluster", R"(#include "fgemm/common.cuh"

extern "C" __global__ void fgemm_test_cluster(float* out, unsigned int smem_floats) {
  extern __shared__ float smem[];
  unsigned int rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  for (unsigned int i = threadIdx.x; i < smem_floats; i += blockDim.x) smem[i] = static_cast<float>(i);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = smem[smem_floats - 1 - threadIdx.x] + 1000000.0f * rank;
}
)",
          dynamic_smem_bytes};
}

TEST(JitLaunch, WithoutADeviceGetKernelFailsBeforeCompiling) {
  if (driver::device_count() > 0) GTEST_SKIP() << "a CUDA device is present; the launch test covers it";
  bool made = false;
  const Error error = test::thrown_error([&] {
    get_kernel(0, "fgemm_test_cluster", [&] {
      made = true;
      return cluster_kernel(0);
    });
  });
  EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  EXPECT_FALSE(made);
}

TEST(JitLaunch, ABadShapeIsRefusedBeforeTheDriver) {
  const Kernel kernel{"fgemm_test_cluster", nullptr, 0};
  LaunchShape shape;
  shape.grid = {3, 1, 1};
  shape.block = {128, 1, 1};
  shape.cluster = {2, 1, 1};
  const Error error = test::thrown_error([&] { launch(kernel, shape, nullptr, nullptr); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
  EXPECT_TRUE(test::contains(error.what(), "grid (3, 1, 1) and cluster (2, 1, 1)")) << error.what();
  shape.grid = {4, 0, 1};
  EXPECT_EQ(test::thrown_error([&] { launch(kernel, shape, nullptr, nullptr); }).kind(),
            ErrorKind::InvalidValue);
}

TEST(JitLaunch, RunsAClusterKernelWithLargeSharedMemory) {
  if (driver::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const TemporaryDirectory cache;
  const test::ScopedEnvironment cache_dir("FGEMM_CACHE_DIR", cache.path().c_str());
  constexpr int kSmemBytes = 100 * 1024;  // above the 48 KiB that needs no opt-in
  constexpr unsigned int kSmemFloats = kSmemBytes / sizeof(float);
  constexpr unsigned int kBlocks = 8;
  constexpr unsigned int kThreads = 128;

  // Threads asking for one key at once get one kernel, built once.
  std::atomic<int> specs_made{0};
  std::vector<const Kernel*> kernels(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kernels.size(); ++i)
    threads.emplace_back([&, i] {
      kernels[i] = &get_kernel(0, "cluster test", [&] {
        ++specs_made;
        return cluster_kernel(kSmemBytes);
      });
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(specs_made.load(), 1);
  for (const Kernel* kernel : kernels) EXPECT_EQ(kernel, kernels[0]);
  const Kernel& kernel = *kernels[0];
  EXPECT_EQ(kernel.dynamic_smem_bytes, kSmemBytes);

  const driver::CudaDriver& cuda = driver::cuda();
  driver::ensure_context(0);
  driver::CUdeviceptr out = 0;
  driver::check(cuda.cuMemAlloc(&out, kBlocks * kThreads * sizeof(float)), "cuMemAlloc");
  unsigned int smem_floats = kSmemFloats;
  void* args[] = {&out, &smem_floats};
  LaunchShape shape;
  shape.grid = {kBlocks, 1, 1};
  shape.block = {kThreads, 1, 1};
  shape.cluster = {2, 1, 1};
  launch(kernel, shape, args, nullptr);
  std::vector<float> host(kBlocks * kThreads);
  driver::check(cuda.cuMemcpyDtoHAsync(host.data(), out, host.size() * sizeof(float), nullptr),
                "cuMemcpyDtoHAsync");
  driver::check(cuda.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  driver::check(cuda.cuMemFree(out), "cuMemFree");
  for (unsigned int block = 0; block < kBlocks; ++block)
    for (unsigned int thread = 0; thread < kThreads; ++thread)
      ASSERT_EQ(host[block * kThreads + thread],
                static_cast<float>(kSmemFloats - 1 - thread) + 1000000.0f * (block % 2))
          << "block " << block << ", thread " << thread;
}

}  // namespace
}  // namespace fgemm::jit
