// Split-K (docs/ARCHITECTURE.md): where a problem has too few tiles to occupy the GPU, the kSplitK CTAs of a
// cluster compute the same tile, CTA r over its share of the K blocks, [r, r + 1) * kNumKBlocks, and their sums
// meet in distributed shared memory, without a workspace in global memory:
//   1. each CTA writes its FP32 sums of the tile to its own shared memory;
//   2. the tile's rows are dealt out to the CTAs warp by warp (each math warp holds 16 rows of its warpgroup's
//      columns): math warp w of a CTA is reduced by CTA w % kSplitK, which reads that warp's sums from every
//      CTA, its own included, and adds them in the order of the CTAs' ranks, so the result is the same bits in
//      every run whichever CTA finishes first;
//   3. that CTA's epilogue stores those rows; the other CTAs store nothing of them.
// Two barriers per CTA pace this from tile to tile: "ready" (the peers' sums are written) and "read" (the peers
// are done reading this CTA's sums, which may then be overwritten, or after the last tile the CTA leave). Each
// math warpgroup arrives on its peers' barriers once, after a barrier among its own threads and a cluster-scope
// fence that publishes the whole warpgroup's writes (or reads).
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/warpgroup_sums.cuh"

namespace fgemm::sm90 {

template <class C>
struct SplitKReduction {
  static constexpr uint32_t kFragments = C::kWarpgroupN / 2;
  using Sums = WarpgroupSums<kFragments>;
  static constexpr uint32_t kArrivals = (C::kSplitK - 1) * C::kNumMathWarpgroups;
  static_assert(C::kSplitK == 1 || C::kNumMathWarpgroups * Sums::kBytes == C::kSumsBytes,
                "the host's shared-memory size of split-K agrees with the kernel's");

  uint32_t sums;  // shared-memory address of this CTA's sums
  uint64_t* ready;
  uint64_t* read;
  uint32_t rank;  // this CTA's split
  uint32_t tiles = 0;

  // The producer thread, before the cluster's first barrier: the two barriers await every peer warpgroup.
  __device__ __forceinline__ static void init_barriers(uint64_t* barriers) {
    ptx::mbarrier_init(&barriers[0], kArrivals);
    ptx::mbarrier_init(&barriers[1], kArrivals);
  }

  __device__ __forceinline__ SplitKReduction(uint8_t* smem_sums, uint64_t* barriers, uint32_t rank)
      : sums(ptx::smem_address(smem_sums)), ready(&barriers[0]), read(&barriers[1]), rank(rank) {}

  // Whether this CTA reduces and stores the rows of math warp `warp`.
  __device__ __forceinline__ bool owns(uint32_t warp) const { return warp % C::kSplitK == rank; }

  // After a tile's K loop: `acc` holds this CTA's sums of the tile; where this CTA owns the thread's warp, it
  // becomes the sum over every split. `rows_needed`: whether the warp has rows to store at all (warp-uniform);
  // its sums are neither written nor read otherwise.
  __device__ __forceinline__ void reduce(float (&acc)[kFragments], uint32_t warpgroup, bool rows_needed) {
    const uint32_t address = Sums::thread_address(sums + warpgroup * Sums::kBytes);
    // The peers have read the previous tile's sums (a fresh barrier passes parity 1 at once).
    ptx::mbarrier_wait_cluster(read, (tiles & 1) ^ 1);
    if (rows_needed) Sums::store(address, acc);
    arrive_on_peers(ready, warpgroup);
    ptx::mbarrier_wait_cluster(ready, tiles & 1);
    if (rows_needed && owns(threadIdx.x / 32)) {
      // Not unrolled: eight peers' addresses at once would spill.
#pragma unroll 1
      for (uint32_t r = 0; r < C::kSplitK; ++r) {
        const uint32_t peer_address = ptx::map_shared_to_cta(address, r);
#pragma unroll
        for (uint32_t q = 0; q < kFragments / 4; ++q) {
          float v[4];
          ptx::load_cluster_f32x4(peer_address + q * Sums::kQuadBytes, v[0], v[1], v[2], v[3]);
#pragma unroll
          for (uint32_t e = 0; e < 4; ++e) acc[4 * q + e] = r == 0 ? v[e] : acc[4 * q + e] + v[e];
        }
      }
    }
    arrive_on_peers(read, warpgroup);
    ++tiles;
  }

  // After the last tile: waits until every peer has read this CTA's sums of it, the last access of a peer to
  // this CTA's shared memory. The CTA may then leave after a cluster barrier that orders nothing (the kernel's
  // exit), where one that released every thread's accesses waited for the epilogue's stores to D to be performed.
  __device__ __forceinline__ void finish() const {
    if (tiles != 0) ptx::mbarrier_wait_cluster(read, (tiles & 1) ^ 1);
  }

 private:
  // Once every thread of the warpgroup is past its accesses, one thread fences and arrives on the barrier of
  // every peer.
  __device__ __forceinline__ void arrive_on_peers(uint64_t* barrier, uint32_t warpgroup) const {
    ptx::named_barrier_sync(1 + warpgroup, 128);
    if (threadIdx.x % 128 == 0) {
      ptx::fence_acq_rel_cluster();
#pragma unroll 1
      for (uint32_t r = 0; r < C::kSplitK; ++r)
        if (r != rank) ptx::mbarrier_arrive_cluster(barrier, r);
    }
  }
};

}  // namespace fgemm::sm90
