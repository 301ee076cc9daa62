// Split-K (docs/ARCHITECTURE.md): where a problem has too few tiles to occupy the GPU, the kSplitK CTAs of a
// cluster compute the same tile, CTA r over its share of the K blocks, [r, r + 1) * kNumKBlocks, and their sums
// meet in distributed shared memory, without a workspace in global memory:
//   1. the tile's rows are dealt out to the CTAs warp by warp (each math warp holds 16 rows of its warpgroup's
//      columns): math warp w of every CTA is owned by CTA w % kSplitK;
//   2. each CTA pushes the sums of the warps it does not own into a slot of their owner's shared memory with
//      st.async, which counts the bytes on the owner's "ready" barrier, where each pushing warp also arrives
//      with the bytes it sends (none where the warp has no rows to store): no fence on either side (a releasing
//      fence at cluster scope is a MEMBAR.ALL.GPU, a microsecond of a small split kernel). The arrival paces the
//      owner even where no bytes come: an owner that waited for nothing would run a tile ahead and arrive twice
//      on a pusher's "free" barrier within one of its phases;
//   3. the owner adds the peers' sums to its own (in its registers) in the order of their ranks, so the result is
//      the same bits in every run whichever CTA finishes first, and its epilogue stores those rows; the other CTAs
//      store nothing of them;
//   4. each owning warp then arrives on every peer's "free" barrier: the slots may take the next tile's sums, and
//      after the last tile the peer may leave (finish).
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/fragment_sums.cuh"

namespace fgemm::sm90 {

template <class C>
struct SplitKReduction {
  static constexpr uint32_t kFragments = C::kWarpgroupN / 2;
  static constexpr uint32_t kSplits = C::kSplitK;
  static constexpr uint32_t kMathWarps = C::kNumMathWarpgroups * 4;
  using WarpSums = FragmentSums<32, kFragments>;  // a slot: one warp's sums
  static constexpr uint32_t kWarpBytes = WarpSums::kBytes;
  static_assert(kSplits == 1 || (kMathWarps >= kSplits &&
                                  C::kTile.split_k_slots() * kWarpBytes <= static_cast<uint32_t>(C::kSumsBytes)),
                "split-K's slots fit the host's shared memory for the sums");

  uint32_t slots;  // shared-memory address of this CTA's slots
  uint64_t* ready;  // then "free", the next barrier (one pointer for both: the K loop keeps it in registers)
  uint32_t rank;  // this CTA's split
  uint32_t tiles = 0;

  // The math warps CTA `rank` owns.
  __device__ __forceinline__ static uint32_t owned_warps(uint32_t rank) {
    return (kMathWarps - rank + kSplits - 1) / kSplits;
  }

  // The producer thread, before the cluster's first barrier: "ready" awaits, for each owned warp, the arrival
  // (with its bytes) of that warp of every peer; "free" each warp that this CTA's sums go to.
  __device__ __forceinline__ static void init_barriers(uint64_t* barriers, uint32_t rank) {
    ptx::mbarrier_init(&barriers[0], (kSplits - 1) * owned_warps(rank));
    ptx::mbarrier_init(&barriers[1], kMathWarps - owned_warps(rank));
  }

  __device__ __forceinline__ SplitKReduction(uint8_t* smem_slots, uint64_t* barriers, uint32_t rank)
      : slots(ptx::smem_address(smem_slots)), ready(barriers), rank(rank) {}

  __device__ __forceinline__ uint64_t* free() const { return ready + 1; }

  // The slot in CTA `owner` that takes CTA `sender`'s sums of math warp `warp` (owned by `owner`): each owned warp
  // has one slot per peer, in rank order without the owner.
  __device__ __forceinline__ uint32_t slot_address(uint32_t warp, uint32_t sender, uint32_t owner) const {
    const uint32_t slot = warp / kSplits * (kSplits - 1) + (sender < owner ? sender : sender - 1);
    return WarpSums::thread_address(slots + slot * kWarpBytes);
  }

  // Whether this CTA reduces and stores the rows of math warp `warp`.
  __device__ __forceinline__ bool owns(uint32_t warp) const { return warp % kSplits == rank; }

  // After a tile's K loop: `acc` holds this CTA's sums of the tile; where this CTA owns the thread's `warp` (the
  // CTA's warp index, warp-uniform to ptxas: ptx::warp_uniform), it becomes the sum over every split.
  // `rows_needed`: whether the warp has rows to store at all (warp-uniform, the same in every CTA of the cluster);
  // its sums are neither sent nor read otherwise.
  __device__ __forceinline__ void reduce(float (&acc)[kFragments], uint32_t warp, bool rows_needed) {
    const uint32_t lane = threadIdx.x % 32;
    const uint32_t owner = warp % kSplits;
    if (owner != rank) {
      // The owner is done reading this CTA's sums of the previous tile (a fresh barrier passes parity 1 at once).
      ptx::mbarrier_wait(free(), (tiles & 1) ^ 1);
      // In either order, the arrival and the bytes: the owner's phase completes once every arrival and every
      // byte declared by them has come.
      if (lane == 0) ptx::mbarrier_arrive_expect_tx_relaxed_cluster(ready, owner, rows_needed ? kWarpBytes : 0);
      if (rows_needed) {
        const uint32_t remote = ptx::map_shared_to_cta(slot_address(warp, rank, owner), owner);
        const uint32_t remote_ready = ptx::peer_barrier(ready, owner);
#pragma unroll
        for (uint32_t q = 0; q < kFragments / 4; ++q)
          ptx::st_async_f32x4(remote + q * WarpSums::kQuadBytes, acc[4 * q], acc[4 * q + 1], acc[4 * q + 2],
                              acc[4 * q + 3], remote_ready);
      }
    } else {
      ptx::mbarrier_wait(ready, tiles & 1);
      if (rows_needed) {
        // Not unrolled: seven peers' slots at once would spill.
#pragma unroll 1
        for (uint32_t r = 0; r < kSplits; ++r)
          if (r != rank) WarpSums::add_to(slot_address(warp, r, rank), acc);
      }
      // The slots' loads complete before the peers' st.async of the next tile may overwrite them, as a stage's
      // before the TMA refills it (stage_ring.cuh): the proxy fence is a MEMBAR.ALL.CTA, which waits for them, and
      // a FENCE.VIEW.ASYNC.S (SASS read; a CTA-scope release on the arrivals compiles to the same). The arrivals
      // then carry no data.
      ptx::fence_proxy_async_shared();
      __syncwarp();
      if (lane == 0) {
#pragma unroll 1
        for (uint32_t r = 0; r < kSplits; ++r)
          if (r != rank) ptx::mbarrier_arrive_relaxed_cluster(free(), r);
      }
    }
    ++tiles;
  }

  // After the last tile: waits until the owners of the warps whose sums this CTA sent have read them and arrived
  // on its "free" barrier, the last access of a peer to this CTA's shared memory (the peers' st.async into its
  // slots and their arrivals on its "ready" barrier have all come: its owning warps waited for them). The CTA may
  // then leave with no cluster barrier (the kernel's exit).
  __device__ __forceinline__ void finish() const {
    if (tiles != 0) ptx::mbarrier_wait(free(), (tiles & 1) ^ 1);
  }
};

}  // namespace fgemm::sm90
