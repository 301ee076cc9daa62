// C (a matrix of its own, FP32 or of D's 16-bit type, or a stack of them in the k-grouped layout) read by the TMA into
// shared memory for the epilogue's D = C + A·B. Each math warpgroup has a ring of kCSlots chunks, each 64 rows of C by
// 128 bytes, 32 FP32 or 64 16-bit columns (one TMA box, with the 128-byte swizzle). As a tile's K loop starts, one
// thread of the warpgroup loads the first kCSlots of the tile's chunks, so that their latency hides behind the K loop;
// in the epilogue the warpgroup reads the chunks in order, and each slot, once read, is loaded with the chunk kCSlots
// further on. Where the ring holds all of a tile's chunks, nothing of C is waited for in the epilogue. (Bringing the
// chunks it cannot hold into L2 as the tile starts made 128 x 256 tiles 5% slower on an H100; bringing them in a few at
// a time across the K loop, by the producer, made no tile faster and some 2% slower.) A larger ring costs stages, which
// every K block needs: the heuristics weigh one against the other (kLoadLatencyCycles).
//
// The ring lies in the bytes where the warpgroup stages D for its TMA store (TileConfig::
// epilogue_bytes_per_warpgroup): by the time the epilogue stages D it has read every chunk of the tile's C, and a
// tile's first chunks are loaded only once the store of the previous tile's D has read the staging. Sharing them
// gave the tiles with C one more stage or a larger ring than the two apart.
//
// C is read once: its loads carry L2's evict-first policy, so that it does not push out the blocks of A and B
// that the next tiles read. Past the edges of C the TMA fills the box with zeros.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/gemm_config.cuh"

namespace fgemm::sm90 {

// A math warpgroup's ring (its slots and a barrier per slot) and C's tensor map.
struct CRingMemory {
  uint8_t* slots;
  uint64_t* full;
  const ptx::TensorMap* map;
};

// Where the ring's chunk of the tile is, and which warpgroup and named barrier it belongs to.
struct CChunkOrigin {
  uint32_t m_base, n_base, group;  // the warpgroup's first row and column of C, and its matrix (k-grouped)
  uint32_t barrier_id;             // the warpgroup's named barrier
};

template <class C>
struct CRing {
  static constexpr uint32_t kSlots = C::kCSlots;
  static constexpr uint32_t kChunks = C::kCChunks;
  static constexpr uint32_t kChunkCols = C::kCChunkCols;
  static constexpr uint32_t kChunkBytes = TileConfig::kCChunkBytes;
  static constexpr bool kStacked = C::kLayout == Layout::KGrouped;  // C is [G, M, N]
  static_assert(kSlots >= 1 && kSlots <= kChunks, "the ring holds one to all of a warpgroup's chunks");

  // The chunks this warpgroup's ring has taken before the current tile: chunk i of all of them lands in slot
  // i % kSlots, in that slot's (i / kSlots)-th phase. Where the slots divide a tile's chunks (a ring that holds
  // them all, for one), every tile starts at slot 0, and a chunk's slot is a compile-time constant: ptxas keeps
  // fewer registers live than for slots computed at run time, which spilled kernels near their limit.
  uint32_t chunks_before = 0;
  static constexpr bool kTilesStartAtSlotZero = kChunks % kSlots == 0;

  __device__ __forceinline__ uint32_t slot_of(uint32_t chunk) const {
    return kTilesStartAtSlotZero ? chunk % kSlots : (chunks_before + chunk) % kSlots;
  }
  __device__ __forceinline__ uint32_t phase_parity_of(uint32_t chunk) const {
    return (kTilesStartAtSlotZero ? chunks_before / kSlots + chunk / kSlots : (chunks_before + chunk) / kSlots) % 2;
  }

  // The tile's first chunks into the ring, once every thread of the warpgroup has read the previous tile's, and
  // the TMA has read the previous tile's D from the same bytes (the thread that loads C issued that store).
  __device__ __forceinline__ void begin_tile(const CRingMemory& ring, const CChunkOrigin& origin) const {
    slots_read(origin.barrier_id);
    if (threadIdx.x % 128 == 0) {
      ptx::bulk_wait_group_read_all();
#pragma unroll
      for (uint32_t chunk = 0; chunk < kSlots; ++chunk) load(ring, origin, chunk);
    }
  }

  // Calls read(chunk, address of its slot) for each of the tile's chunks in order, once it has landed.
  template <class Read>
  __device__ __forceinline__ void for_each_chunk(const CRingMemory& ring, const CChunkOrigin& origin, Read read) {
#pragma unroll
    for (uint32_t chunk = 0; chunk < kChunks; ++chunk) {
      const uint32_t slot = slot_of(chunk);
      ptx::mbarrier_wait(&ring.full[slot], phase_parity_of(chunk));
      read(chunk, ptx::smem_address(ring.slots + slot * kChunkBytes));
      if (chunk + kSlots < kChunks) {
        slots_read(origin.barrier_id);
        if (threadIdx.x % 128 == 0) load(ring, origin, chunk + kSlots);
      }
    }
    chunks_before += kChunks;
  }

 private:
  // Waits until every thread of the warpgroup has read the slots the TMA is about to refill. The TMA writes
  // through the async proxy, which a barrier does not order after the threads' loads: ptxas issues a chunk's last
  // loads just before the barrier and waits for their values after it, and on an H100 a refill issued right after
  // the barrier overwrote an 8-column group of them before they had read it (k-grouped FP8 with C and
  // helper-copied scales). A proxy fence in each thread first makes its loads of the slots complete.
  __device__ __forceinline__ static void slots_read(uint32_t barrier_id) {
    ptx::fence_proxy_async_shared();
    ptx::named_barrier_sync(barrier_id, 128);
  }

  __device__ __forceinline__ void load(const CRingMemory& ring, const CChunkOrigin& origin, uint32_t chunk) const {
    const uint32_t slot = slot_of(chunk);
    uint64_t* full = &ring.full[slot];
    ptx::mbarrier_arrive_expect_tx(full, kChunkBytes);
    const int32_t col = origin.n_base + chunk * kChunkCols;
    if constexpr (kStacked)
      ptx::tma_load_3d_evict_first(ring.slots + slot * kChunkBytes, ring.map, full, col, origin.m_base, origin.group);
    else
      ptx::tma_load_2d_evict_first(ring.slots + slot * kChunkBytes, ring.map, full, col, origin.m_base);
  }
};

}  // namespace fgemm::sm90
