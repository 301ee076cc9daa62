// Two CTAs of a cluster hand values to each other through distributed shared memory, round after round, as
// split-K's CTAs hand over their sums (kernels/fgemm/sm90/split_k_reduction.cuh): each writes its own shared
// memory, then reads the peer's, then tells the peer it is done reading before the next round overwrites.
// `mbarrier` orders this as split-K does: a named barrier among the CTA's threads, a cluster-scope fence and an
// arrival on the peer's barrier, which the peer waits for with cluster-scope acquire. `cluster_barrier` orders
// it with barrier.cluster, which every thread of both CTAs passes. Both orders are right by the PTX memory
// model; the program checks every value read and exits 0 if all are right.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fgemm/ptx.cuh"

namespace {

constexpr int kThreads = 128;
constexpr int kRounds = 4;

__global__ void __cluster_dims__(2, 1, 1) hand_over(float* read_sums, bool cluster_barrier) {
  using namespace fgemm;
  __shared__ __align__(16) float values[kThreads * 4];
  __shared__ uint64_t written, read;  // the peer has written its values / has read this CTA's
  const uint32_t rank = ptx::cluster_rank(), peer = rank ^ 1;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&written, 1);
    ptx::mbarrier_init(&read, 1);
    ptx::fence_barrier_init();
  }
  ptx::cluster_sync();
  const uint32_t address = ptx::smem_address(&values[threadIdx.x * 4]);
  const auto tell_peer = [&](uint64_t* barrier) {
    ptx::named_barrier_sync(1, kThreads);
    if (threadIdx.x == 0) {
      ptx::fence_acq_rel_cluster();
      ptx::mbarrier_arrive_cluster(barrier, peer);
    }
  };
  float sum = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (!cluster_barrier && round > 0) ptx::mbarrier_wait_cluster(&read, (round - 1) & 1);
    ptx::store_shared_f32x4(address, rank * 1000 + round, threadIdx.x, 0, 0);
    if (cluster_barrier) {
      ptx::cluster_sync();
    } else {
      tell_peer(&written);
      ptx::mbarrier_wait_cluster(&written, round & 1);
    }
    float v[4];
    ptx::load_cluster_f32x4(ptx::map_shared_to_cta(address, peer), v[0], v[1], v[2], v[3]);
    sum += v[0] + v[1];
    if (cluster_barrier)
      ptx::cluster_sync();
    else
      tell_peer(&read);
  }
  ptx::cluster_sync();  // neither CTA leaves while the other may still arrive on its barriers
  read_sums[blockIdx.x * kThreads + threadIdx.x] = sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "mbarrier") != 0 && std::strcmp(argv[1], "cluster_barrier") != 0)) {
    std::fprintf(stderr, "usage: %s mbarrier|cluster_barrier\n", argv[0]);
    return 2;
  }
  float* sums = nullptr;
  cudaMalloc(&sums, 2 * kThreads * sizeof(float));
  hand_over<<<2, kThreads>>>(sums, std::strcmp(argv[1], "cluster_barrier") == 0);
  const cudaError_t status = cudaDeviceSynchronize();
  float host[2 * kThreads] = {};
  cudaMemcpy(host, sums, sizeof host, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int cta = 0; cta < 2; ++cta) {
    // CTA `cta` read its peer's (peer * 1000 + round) + thread over the rounds.
    const float expected = kRounds * ((cta ^ 1) * 1000.0f) + kRounds * (kRounds - 1) / 2.0f;
    for (int thread = 0; thread < kThreads; ++thread)
      wrong += host[cta * kThreads + thread] != expected + kRounds * float(thread);
  }
  std::printf("%s: %s, %d of %d values wrong\n", argv[1], cudaGetErrorString(status), wrong, 2 * kThreads);
  return status == cudaSuccess && wrong == 0 ? 0 : 1;
}
