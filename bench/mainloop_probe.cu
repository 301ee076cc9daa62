// The GEMM's main loop alone, to see what bounds it: two math warpgroups multiply each stage of a ring with
// wgmma and promote the partial sums (one FMA per accumulator, as the kernel does), while one thread refills
// the stages with bulk copies of the bytes real TMA loads would bring, from a buffer that stays in L2. No
// tiles, no epilogue, no scale loads: cycles per K block against the tensor cores' ideal.
//
// Built and run by bench/mainloop_probe.py, which writes the wgmma wrappers (probe_wgmma.cuh) it includes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fgemm/ptx.cuh"

using fgemm::uint32_t;
using fgemm::uint64_t;
using fgemm::uint8_t;
namespace ptx = fgemm::ptx;
namespace wgmma {
#include "probe_wgmma.cuh"
}

constexpr int kNumSms = 132;
constexpr uint32_t kChunkBytes = 16384;  // bytes per bulk copy

__device__ __forceinline__ void bulk_copy(uint8_t* dst, const uint8_t* src, uint32_t bytes, uint64_t* barrier,
                                          bool multicast) {
  for (uint32_t c = 0; c < bytes; c += kChunkBytes) {
    const uint32_t n = min(kChunkBytes, bytes - c);
    if (multicast)
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], "
          "%4;" ::"r"(ptx::smem_address(dst + c)),
          "l"(src + c), "r"(n), "r"(ptx::smem_address(barrier)), "h"(static_cast<unsigned short>(3))
          : "memory");
    else
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                       ptx::smem_address(dst + c)),
                   "l"(src + c), "r"(n), "r"(ptx::smem_address(barrier))
                   : "memory");
  }
}

// A stage holds A (128 x 128) and B (kHalves x W::N rows). kLoadBytes of it are refilled per K block (0: the
// producer only arrives). With a cluster of two, the CTAs share B: each loads A and its half of B, multicast
// to both; every math warp arrives on both CTAs' empty barriers from kArrivalLanes lanes (1: one lane, one
// arrival after the other; 2: a lane per CTA). A stage's 132 scales (sfa of 128 rows, 4 of sfb) come with it
// as the kernel loads them (kScales 1: one warp's cp.async of 4 bytes each, arriving on the full barrier), or
// in one bulk copy of the producer thread (2), or not at all (0).
template <class W, int kHalves, int kStages, uint32_t kLoadBytes, int kClusterSize, int kArrivalLanes, int kScales>
__global__ void __launch_bounds__(384, 1) mainloop(const uint8_t* src, uint64_t src_bytes, int rounds,
                                                   unsigned long long* cycles, float* sink) {
  constexpr uint32_t kSmemA = 128 * 128, kSmemB = W::N * kHalves * 128, kStage = kSmemA + kSmemB;
  constexpr int kAccumulators = W::N / 2 * kHalves;
  constexpr uint32_t kScaleBytes = 132 * 4, kBarrierBytes = 1024;
  extern __shared__ __align__(1024) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * kStage);
  uint64_t* empty = full + kStages;
  float* scales = reinterpret_cast<float*>(smem + kStages * kStage + kBarrierBytes);
  if (threadIdx.x == 256) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(&full[s], kScales == 1 ? 1 + 32 : 1);
      ptx::mbarrier_init(&empty[s], 8 * kClusterSize);
    }
    ptx::fence_barrier_init();
  }
  for (uint32_t i = threadIdx.x * 16; i < kStages * kStage; i += blockDim.x * 16)  // operands to start with
    *reinterpret_cast<uint4*>(smem + i) = *reinterpret_cast<const uint4*>(src + i);
  if (kClusterSize > 1)
    ptx::cluster_sync();
  else
    __syncthreads();
  const uint32_t rank = kClusterSize > 1 ? ptx::cluster_rank() : 0;

  if (threadIdx.x >= 256) {
    ptx::setmaxnreg_decrease<40>();
    if (threadIdx.x == 256) {
      uint64_t offset = uint64_t(blockIdx.x / kClusterSize) * 7919 * kStage % (src_bytes - kStage) / 1024 * 1024;
      for (int round = 0; round < rounds; ++round)
        for (int s = 0; s < kStages; ++s) {
          ptx::mbarrier_wait(&empty[s], (round & 1) ^ 1);
          uint8_t* stage = smem + s * kStage;
          const uint8_t* from = src + offset;
          const uint32_t scale_bytes = kScales == 2 ? kScaleBytes : 0;
          const uint32_t stage_bytes = kLoadBytes == 0 ? 0 : kClusterSize == 1 ? kLoadBytes : kStage;
          if (stage_bytes + scale_bytes == 0)
            ptx::mbarrier_arrive(&full[s]);
          else
            ptx::mbarrier_arrive_expect_tx(&full[s], stage_bytes + scale_bytes);
          if (kLoadBytes != 0 && kClusterSize == 1) {
            bulk_copy(stage, from, kLoadBytes, &full[s], false);
          } else if (kLoadBytes != 0) {
            bulk_copy(stage, from, kSmemA, &full[s], false);
            const uint32_t slice = kSmemA + rank * (kSmemB / 2);
            bulk_copy(stage + slice, from + slice, kSmemB / 2, &full[s], true);
          }
          if (kScales == 2)
            bulk_copy(reinterpret_cast<uint8_t*>(scales + s * 132), src + offset / 2 / 16 * 16, kScaleBytes, &full[s],
                      false);
          offset = offset + 2 * kStage > src_bytes ? 0 : offset + kStage;
        }
    }
    if (kScales == 1 && threadIdx.x / 32 == 9) {  // the scale loader
      uint64_t offset = uint64_t(blockIdx.x / kClusterSize) * 7919 * 4096 % (src_bytes / 2) / 512 * 512;
      for (int round = 0; round < rounds; ++round)
        for (int s = 0; s < kStages; ++s) {
          ptx::mbarrier_wait(&empty[s], (round & 1) ^ 1);
          for (uint32_t i = threadIdx.x % 32; i < 132; i += 32)
            ptx::cp_async_4(scales + s * 132 + i, reinterpret_cast<const float*>(src + offset) + i);
          ptx::cp_async_mbarrier_arrive(&full[s]);
          offset = offset + 8192 > src_bytes / 2 ? 0 : offset + 4096;
        }
    }
  } else {
    ptx::setmaxnreg_increase<232>();
    const uint32_t warpgroup = threadIdx.x / 128, lane = threadIdx.x % 32;
    float acc[kAccumulators], partial[W::N / 2];
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) acc[i] = 0.0f;
    uint64_t desc_a = ptx::smem_descriptor_k_major_sw128(ptx::smem_address(smem) + warpgroup * 64 * 128);
    uint64_t desc_b = ptx::smem_descriptor_k_major_sw128(ptx::smem_address(smem) + kSmemA);
    auto release = [&](int s) {
      __syncwarp();
      if (kClusterSize == 1) {
        if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
      } else if (kArrivalLanes == 2) {
        if (lane < 2) ptx::mbarrier_arrive_cluster(&empty[s], lane);
      } else if (lane == 0) {
        ptx::mbarrier_arrive_cluster(&empty[s], 0);
        ptx::mbarrier_arrive_cluster(&empty[s], 1);
      }
    };
    unsigned long long start = 0;
    for (int round = 0; round < rounds; ++round) {
      if (round == 1) start = clock64();
      desc_a = __shfl_sync(0xffffffff, desc_a, 0);
      desc_b = __shfl_sync(0xffffffff, desc_b, 0);
#pragma unroll
      for (int s = 0; s < kStages; ++s) {
        ptx::mbarrier_wait(&full[s], round & 1);
        const float scale = ptx::load_shared_f32(ptx::smem_address(smem) + s * kStage + threadIdx.x % 64 * 4);
#pragma unroll
        for (int half = 0; half < kHalves; ++half) {
#pragma unroll
          for (int i = 0; i < W::N / 2; ++i) ptx::fence_operand(partial[i]);
          ptx::wgmma_fence();
          const uint64_t a = desc_a + s * (kStage / 16), b = desc_b + s * (kStage / 16) + half * (W::N * 8);
#pragma unroll
          for (int kk = 0; kk < 4; ++kk) W::mma(partial, a + kk * 2, b + kk * 2, kk > 0);
          ptx::wgmma_commit_group();
          ptx::wgmma_wait_group<0>();
#pragma unroll
          for (int i = 0; i < W::N / 2; ++i) ptx::fence_operand(partial[i]);
          if (half == kHalves - 1) release(s);
#pragma unroll
          for (int i = 0; i < W::N / 2; ++i)
            acc[half * W::N / 2 + i] = fmaf(partial[i], scale, acc[half * W::N / 2 + i]);
        }
      }
    }
    const unsigned long long stop = clock64();
    float total = 0.0f;
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total += acc[i];
    sink[blockIdx.x * 256 + threadIdx.x] = total;  // keeps the promotions
    if (threadIdx.x == 0) cycles[blockIdx.x] = stop - start;
  }
  if (kClusterSize > 1) ptx::cluster_sync();  // peers' multicasts and arrivals are done
}

struct Buffers {
  const uint8_t* src;
  uint64_t src_bytes;
  unsigned long long* cycles;
  float* sink;
};

template <class W, int kHalves, int kStages, uint32_t kLoadBytes, int kClusterSize = 1, int kArrivalLanes = 2,
          int kScales = 0>
void run(const char* name, const Buffers& buffers) {
  constexpr uint32_t kStage = 128 * 128 + W::N * kHalves * 128;
  const uint32_t smem = kStages * (kStage + 132 * 4) + 1024;
  auto kernel = mainloop<W, kHalves, kStages, kLoadBytes, kClusterSize, kArrivalLanes, kScales>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const int rounds = 2400 / kStages;
  cudaLaunchAttribute cluster;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim = {static_cast<unsigned>(kClusterSize), 1, 1};
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(kNumSms);
  config.blockDim = dim3(384);
  config.dynamicSmemBytes = smem;
  config.attrs = &cluster;
  config.numAttrs = 1;
  std::vector<double> per_block;
  for (int launch = 0; launch < 3; ++launch) {  // the first is a warm-up
    cudaLaunchKernelEx(&config, kernel, buffers.src, buffers.src_bytes, rounds, buffers.cycles, buffers.sink);
    if (cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess) {
      std::printf("%s: %s\n", name, cudaGetErrorString(error));
      std::exit(1);
    }
    std::vector<unsigned long long> cycles(kNumSms);
    cudaMemcpy(cycles.data(), buffers.cycles, sizeof(cycles[0]) * kNumSms, cudaMemcpyDeviceToHost);
    std::sort(cycles.begin(), cycles.end());
    if (launch > 0) per_block.push_back(double(cycles[kNumSms / 2]) / ((rounds - 1) * kStages));
  }
  const double cycles = *std::min_element(per_block.begin(), per_block.end());
  const double ideal = 2.0 * kHalves * 4 * W::N / 2;  // m64nNk32 takes N / 2 cycles of an SM's tensor cores
  std::printf("| %s | %u | %.0f | %.0f | %.1f%% |\n", name, kLoadBytes, cycles, ideal, 100 * ideal / cycles);
}

int main() {
  const uint64_t src_bytes = 24ull << 20;  // stays in L2
  std::vector<uint8_t> host(src_bytes);
  std::srand(1);
  for (auto& byte : host) byte = static_cast<uint8_t>(std::rand() % 0x78 | (std::rand() & 0x80));  // finite E4M3
  uint8_t* src;
  Buffers buffers;
  cudaMalloc(&src, src_bytes);
  cudaMemcpy(src, host.data(), src_bytes, cudaMemcpyHostToDevice);
  cudaMalloc(&buffers.cycles, sizeof(unsigned long long) * kNumSms);
  cudaMalloc(&buffers.sink, sizeof(float) * kNumSms * 256);
  buffers.src = src;
  buffers.src_bytes = src_bytes;
  std::printf("| main loop | bytes loaded per K block and SM | cycles per K block | ideal | of the ideal |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: |\n");
  using wgmma::W128;
  using wgmma::W192;
  run<W128, 2, 3, 0>("128 x 256, two column halves, no loads", buffers);
  run<W128, 2, 3, 24576>("128 x 256, two column halves", buffers);
  run<W128, 2, 3, 32768>("128 x 256, two column halves", buffers);
  run<W128, 2, 3, 49152>("128 x 256, two column halves", buffers);
  run<W128, 2, 3, 0, 2, 1>("128 x 256, 2 x 1 cluster, no loads, arrivals from one lane", buffers);
  run<W128, 2, 3, 0, 2, 2>("128 x 256, 2 x 1 cluster, no loads, a lane per CTA", buffers);
  run<W128, 2, 3, 49152, 2, 1>("128 x 256, 2 x 1 cluster, B multicast, arrivals from one lane", buffers);
  run<W128, 2, 3, 49152, 2, 2>("128 x 256, 2 x 1 cluster, B multicast, a lane per CTA", buffers);
  run<W192, 1, 4, 0>("128 x 192, no loads", buffers);
  run<W192, 1, 4, 40960>("128 x 192", buffers);
  run<W192, 1, 4, 40960, 2, 2>("128 x 192, 2 x 1 cluster, B multicast, a lane per CTA", buffers);
  run<W128, 2, 3, 0, 1, 2, 1>("128 x 256, no loads, scales by a cp.async warp", buffers);
  run<W128, 2, 3, 0, 1, 2, 2>("128 x 256, no loads, scales by a bulk copy", buffers);
  run<W128, 2, 3, 49152, 1, 2, 1>("128 x 256, scales by a cp.async warp", buffers);
  run<W128, 2, 3, 49152, 1, 2, 2>("128 x 256, scales by a bulk copy", buffers);
  run<W128, 2, 3, 49152, 2, 2, 1>("128 x 256, 2 x 1 cluster, B multicast, scales by a cp.async warp", buffers);
  run<W128, 2, 3, 49152, 2, 2, 2>("128 x 256, 2 x 1 cluster, B multicast, scales by a bulk copy", buffers);
  run<W192, 1, 4, 40960, 2, 2, 2>("128 x 192, 2 x 1 cluster, B multicast, scales by a bulk copy", buffers);
  return 0;
}
