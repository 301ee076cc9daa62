// Thin wrappers of the sm90 PTX instructions the kernels use: mbarriers, TMA (bulk tensor copies),
// wgmma, register reallocation and fences. Each is one instruction; see the PTX ISA for their semantics.
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::ptx {

// ---- addresses and thread roles --------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_address(const void* pointer) {
  uint32_t address;
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(address) : "l"(pointer));
  return address;
}

__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t num_threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
}

// Arrives on barrier `id` of `num_threads` threads without waiting: this thread's earlier memory accesses are
// performed for the threads that wait on it.
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t num_threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
}

// A value the same in every lane of the warp, read from lane 0 so that ptxas knows it is: it cannot tell that of
// what inline asm returns, nor of arithmetic on threadIdx. A branch on a value it takes for divergent, anywhere in
// a kernel's tile loop, leaves ptxas unable to prove the warp converged in the next tile's K loop: it then keeps
// the operand descriptors in per-thread registers and moves them to uniform ones before every wgmma, behind a
// WARPSYNC (the K loops of the grouped layouts and of split-K were up to a tenth longer for it).
__device__ __forceinline__ uint32_t warp_uniform(uint32_t value) { return __shfl_sync(0xffffffff, value, 0); }

// Barrier `id` over `num_threads` threads (whole warps) that also returns whether `predicate` holds in all of
// them: the same answer in every thread, warp-uniform to ptxas too.
__device__ __forceinline__ bool named_barrier_and(uint32_t id, uint32_t num_threads, bool predicate) {
  uint32_t all;
  asm volatile(
      "{ .reg .pred p, q; setp.ne.u32 p, %1, 0; bar.red.and.pred q, %2, %3, p; selp.u32 %0, 1, 0, q; }"
      : "=r"(all)
      : "r"(static_cast<uint32_t>(predicate)), "r"(id), "r"(num_threads)
      : "memory");
  return warp_uniform(all) != 0;
}

// Four 32-bit words, as 16-byte loads and stores move them.
struct U32x4 {
  uint32_t word[4];
};

// ---- loads that bypass the coherent path (read-only data such as scales) ---------------------------

__device__ __forceinline__ float load_readonly(const float* pointer) {
  float value;
  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(value) : "l"(pointer));
  return value;
}

// A bfloat16 or float16 read through the read-only cache, as an FP32 (exactly: both are subsets of FP32).
__device__ __forceinline__ float load_readonly_bf16(const void* pointer) {
  uint16_t bits;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(bits) : "l"(pointer));
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}
__device__ __forceinline__ float load_readonly_f16(const void* pointer) {
  uint16_t bits;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(bits) : "l"(pointer));
  float value;
  asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(bits));
  return value;
}

// 16 bytes of data no thread writes during the kernel, read through the non-coherent path: kept in L1 where other
// warps read them too (kKeepInL1), or not allocated there where each is read once. Not volatile, so that the
// compiler may issue several before their first use.
template <bool kKeepInL1>
__device__ __forceinline__ U32x4 load_readonly_u32x4(const void* pointer) {
  U32x4 v;
  if constexpr (kKeepInL1)
    asm("ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.word[0]), "=r"(v.word[1]), "=r"(v.word[2]), "=r"(v.word[3])
        : "l"(pointer));
  else
    asm("ld.global.nc.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.word[0]), "=r"(v.word[1]), "=r"(v.word[2]), "=r"(v.word[3])
        : "l"(pointer));
  return v;
}

// An L2 cache policy that evicts the lines it brings in first: for data read once, so that it does not push
// out of L2 the operands other tiles read again.
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// ---- programmatic dependent launch ---------------------------------------------------------------------

// Waits until the grids this one depends on (the previous kernel of the stream, where this one was launched to
// overlap it) have completed and their memory operations are visible; returns at once otherwise.
__device__ __forceinline__ void wait_for_previous_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Lets the next kernel of the stream, if launched to overlap this one, start its blocks once every block of this
// grid has called it or exited (it still waits for this grid's completion before touching memory).
__device__ __forceinline__ void allow_next_grid() { asm volatile("griddepcontrol.launch_dependents;" :::); }

// ---- clusters --------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t rank;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Barrier of every thread of every CTA of the cluster; orders shared-memory accesses across the cluster.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Barrier of every thread of every CTA of the cluster that orders none of their prior memory accesses (but the
// mbarrier initialisations that fence_barrier_init publishes): cluster_sync's release makes each thread wait until
// all of its prior accesses are performed at cluster scope, half a microsecond on an H100 with none outstanding
// and a microsecond after an epilogue's stores.
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The address in CTA `cta`'s shared memory (distributed shared memory) of this CTA's shared address `address`.
__device__ __forceinline__ uint32_t map_shared_to_cta(uint32_t address, uint32_t cta) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(address), "r"(cta));
  return remote;
}

// A float from a peer CTA's shared memory (`cluster_address`, from map_shared_to_cta).
__device__ __forceinline__ float load_shared_cluster_f32(uint32_t cluster_address) {
  float value;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(value) : "r"(cluster_address) : "memory");
  return value;
}

// Stores 16 bytes into a peer CTA's shared memory (`cluster_address`, from map_shared_to_cta) and counts them as
// completed transaction bytes on the peer's mbarrier (`cluster_barrier`, mapped too): the peer's wait on that
// barrier orders them, with no fence on this side (a releasing fence at cluster scope is a MEMBAR.ALL.GPU).
__device__ __forceinline__ void st_async_f32x4(uint32_t cluster_address, float x, float y, float z, float w,
                                               uint32_t cluster_barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(
                   cluster_address),
               "f"(x), "f"(y), "f"(z), "f"(w), "r"(cluster_barrier)
               : "memory");
}

// ---- mbarrier --------------------------------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(uint64_t* barrier, uint32_t arrive_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(barrier)), "r"(arrive_count));
}

// Makes initialised barriers visible to the async proxy (TMA) and to the other threads.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// The barrier at the same shared-memory offset as `barrier` in CTA `cta` of the cluster (this CTA included).
__device__ __forceinline__ uint32_t peer_barrier(uint64_t* barrier, uint32_t cta) {
  return map_shared_to_cta(smem_address(barrier), cta);
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(barrier)) : "memory");
}

__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(barrier)), "r"(bytes)
               : "memory");
}

// Arrives on the barrier at the same shared-memory offset in CTA `cta` of the cluster (this CTA included).
// CTA-scope release: the arrival only says that this warp's wgmma reads of a stage are complete, which needs
// no fence; a cluster-scope release would add a memory barrier to every arrival, and costs more than half
// the kernel's speed.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* barrier, uint32_t cta) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(peer_barrier(barrier, cta)) : "memory");
}

// Waits until the barrier's phase of the given parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* barrier, uint32_t parity) {
  const uint32_t address = smem_address(barrier);
  uint32_t done;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(address), "r"(parity)
        : "memory");
  } while (!done);
}

// Arrives on the barrier at the same shared-memory offset in CTA `cta` of the cluster and adds `bytes` to the
// transaction bytes its phase awaits (the bytes this thread's warp sends it by st_async_f32x4), ordering none of
// this thread's memory accesses before it.
__device__ __forceinline__ void mbarrier_arrive_expect_tx_relaxed_cluster(uint64_t* barrier, uint32_t cta,
                                                                         uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.relaxed.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(
                   peer_barrier(barrier, cta)),
               "r"(bytes)
               : "memory");
}

// Arrives on the barrier at the same shared-memory offset in CTA `cta` of the cluster, ordering none of this
// thread's memory accesses before it: for a signal that carries no data.
__device__ __forceinline__ void mbarrier_arrive_relaxed_cluster(uint64_t* barrier, uint32_t cta) {
  asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(peer_barrier(barrier, cta))
               : "memory");
}

// ---- asynchronous copies of single words (cp.async) --------------------------------------------------

// Copies 4 bytes from global to shared memory, asynchronously.
__device__ __forceinline__ void cp_async_4(float* smem_dst, const float* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_address(smem_dst)), "l"(src) : "memory");
}

// Arrives on the barrier once this thread's earlier cp.async copies are complete; the arrival counts towards
// the barrier's expected count (.noinc).
__device__ __forceinline__ void cp_async_mbarrier_arrive(uint64_t* barrier) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_address(barrier)) : "memory");
}

// ---- TMA -------------------------------------------------------------------------------------------

// A CUtensorMap, opaque to device code: 128 bytes, 64-byte aligned, passed as a __grid_constant__ parameter.
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};

__device__ __forceinline__ void prefetch_tensor_map(const TensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// Brings the box at (inner, outer) of a matrix (2-D map) or at (inner, middle, outer) of a stack of them (3-D) into
// L2, for a later access to find it there; nothing lands in shared memory and nothing is waited for.
__device__ __forceinline__ void tma_prefetch_l2_2d(const TensorMap* map, int32_t inner, int32_t outer) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(map), "r"(inner), "r"(outer)
               : "memory");
}

__device__ __forceinline__ void tma_prefetch_l2_3d(const TensorMap* map, int32_t inner, int32_t middle,
                                                   int32_t outer) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(map), "r"(inner),
               "r"(middle), "r"(outer)
               : "memory");
}

__device__ __forceinline__ void tma_load_2d(void* smem_dst, const TensorMap* map, uint64_t* barrier, int32_t inner,
                                            int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      ::"r"(smem_address(smem_dst)), "l"(map), "r"(smem_address(barrier)), "r"(inner), "r"(outer)
      : "memory");
}

__device__ __forceinline__ void tma_load_3d(void* smem_dst, const TensorMap* map, uint64_t* barrier, int32_t inner,
                                            int32_t middle, int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];" ::"r"(smem_address(smem_dst)),
      "l"(map), "r"(smem_address(barrier)), "r"(inner), "r"(middle), "r"(outer)
      : "memory");
}

// The same loads under L2's evict-first policy, for data read once.
__device__ __forceinline__ void tma_load_2d_evict_first(void* smem_dst, const TensorMap* map, uint64_t* barrier,
                                                        int32_t inner, int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, "
      "{%3, %4}], [%2], %5;" ::"r"(smem_address(smem_dst)),
      "l"(map), "r"(smem_address(barrier)), "r"(inner), "r"(outer), "l"(l2_evict_first_policy())
      : "memory");
}

__device__ __forceinline__ void tma_load_3d_evict_first(void* smem_dst, const TensorMap* map, uint64_t* barrier,
                                                        int32_t inner, int32_t middle, int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, "
      "{%3, %4, %5}], [%2], %6;" ::"r"(smem_address(smem_dst)),
      "l"(map), "r"(smem_address(barrier)), "r"(inner), "r"(middle), "r"(outer), "l"(l2_evict_first_policy())
      : "memory");
}

// The multicast forms write the box at the same shared-memory offset of every CTA in `cta_mask`, and
// complete the transaction on the barrier at the same offset in each.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem_dst, const TensorMap* map, uint64_t* barrier,
                                                      uint16_t cta_mask, int32_t inner, int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_address(smem_dst)),
      "l"(map), "r"(smem_address(barrier)), "r"(inner), "r"(outer), "h"(cta_mask)
      : "memory");
}

__device__ __forceinline__ void tma_load_3d_multicast(void* smem_dst, const TensorMap* map, uint64_t* barrier,
                                                      uint16_t cta_mask, int32_t inner, int32_t middle,
                                                      int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(smem_address(smem_dst)),
      "l"(map), "r"(smem_address(barrier)), "r"(inner), "r"(middle), "r"(outer), "h"(cta_mask)
      : "memory");
}

__device__ __forceinline__ void tma_store_2d(const TensorMap* map, const void* smem_src, int32_t inner, int32_t outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(map),
               "r"(smem_address(smem_src)), "r"(inner), "r"(outer)
               : "memory");
}

__device__ __forceinline__ void tma_store_3d(const TensorMap* map, const void* smem_src, int32_t inner,
                                             int32_t middle, int32_t outer) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map),
               "r"(smem_address(smem_src)), "r"(inner), "r"(middle), "r"(outer)
               : "memory");
}

// The TMA's reduction store: D += the shared-memory box, element by element in FP32, done by the memory system
// (L2) as it writes D, so that no thread reads D first.
__device__ __forceinline__ void tma_add_f32_2d(const TensorMap* map, const void* smem_src, int32_t inner,
                                               int32_t outer) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   map),
               "r"(smem_address(smem_src)), "r"(inner), "r"(outer)
               : "memory");
}

__device__ __forceinline__ void tma_add_f32_3d(const TensorMap* map, const void* smem_src, int32_t inner,
                                               int32_t middle, int32_t outer) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map),
      "r"(smem_address(smem_src)), "r"(inner), "r"(middle), "r"(outer)
      : "memory");
}

__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until the committed stores have finished reading shared memory (the buffer may be rewritten).
__device__ __forceinline__ void bulk_wait_group_read_all() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// Waits until the committed stores are complete in global memory.
__device__ __forceinline__ void bulk_wait_group_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Orders this thread's ordinary shared-memory accesses before later ones by the async proxy: its writes before a
// TMA store reads them, its reads before a TMA load overwrites them.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- wgmma -----------------------------------------------------------------------------------------

// Shared-memory matrix descriptor for a K-major tile stored with the 128-byte swizzle: rows of 128 bytes,
// groups of 8 rows (1024 bytes) apart. The leading-dimension offset is unused in this mode.
__device__ __forceinline__ uint64_t smem_descriptor_k_major_sw128(uint32_t smem_byte_address) {
  constexpr uint64_t kStrideBytes = 1024;
  constexpr uint64_t kSwizzle128B = 1;
  return static_cast<uint64_t>((smem_byte_address & 0x3FFFF) >> 4) | ((kStrideBytes >> 4) << 32) |
         (kSwizzle128B << 62);
}

// An MN-major operand (16-bit types only: FP8 wgmma reads K-major operands) with the 128- or 64-byte swizzle: the
// swizzle atom is 8 rows of K, each one swizzle row (64 or 32 elements) of M or N. `mn_atom_bytes` steps from one
// run of M or N to the next (the leading byte offset), 8 swizzle rows from one atom of 8 K rows to the next (the
// stride byte offset).
template <uint32_t kSwizzleBytes>
__device__ __forceinline__ uint64_t smem_descriptor_mn_major(uint32_t smem_byte_address, uint32_t mn_atom_bytes) {
  static_assert(kSwizzleBytes == 128 || kSwizzleBytes == 64, "the 128- or 64-byte swizzle");
  constexpr uint64_t kStrideBytes = 8 * kSwizzleBytes;
  constexpr uint64_t kSwizzleMode = kSwizzleBytes == 128 ? 1 : 2;  // the descriptor's codes of the two swizzles
  return static_cast<uint64_t>((smem_byte_address & 0x3FFFF) >> 4) | (static_cast<uint64_t>(mn_atom_bytes >> 4) << 16) |
         ((kStrideBytes >> 4) << 32) | (kSwizzleMode << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// mma.sync m16n8k16 of 16-bit inputs (BF16, or FP16 where kF16) into FP32, d += a * b, a warp's registers in the
// PTX fragment layouts: lane l holds a's rows l / 4 (a0, a2) and l / 4 + 8 (a1, a3), b's column l / 4, and d's rows
// l / 4 (d[0], d[1]) and l / 4 + 8 (d[2], d[3]).
template <bool kF16>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                             uint32_t b0, uint32_t b1) {
  if constexpr (kF16)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Keeps the compiler from moving reads or writes of an accumulator register across wgmma fences and waits.
__device__ __forceinline__ void fence_operand(float& reg) { asm volatile("" : "+f"(reg)::"memory"); }
__device__ __forceinline__ void fence_operand(int32_t& reg) { asm volatile("" : "+r"(reg)::"memory"); }

// ---- registers -------------------------------------------------------------------------------------

template <uint32_t kRegisters>
__device__ __forceinline__ void setmaxnreg_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
}

template <uint32_t kRegisters>
__device__ __forceinline__ void setmaxnreg_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
}

// ---- conversions and stores ------------------------------------------------------------------------

// Two floats to a pair of bfloat16 (round to nearest even): `low` in bits 0-15.
__device__ __forceinline__ uint32_t pack_bf16x2(float low, float high) {
  uint32_t packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(high), "f"(low));
  return packed;
}

// Two floats to a pair of float16 (round to nearest even): `low` in bits 0-15.
__device__ __forceinline__ uint32_t pack_f16x2(float low, float high) {
  uint32_t packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(high), "f"(low));
  return packed;
}

__device__ __forceinline__ float load_shared_f32(uint32_t address) {
  float value;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(value) : "r"(address) : "memory");
  return value;
}

__device__ __forceinline__ void load_shared_f32x2(uint32_t address, float& x, float& y) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x), "=f"(y) : "r"(address) : "memory");
}

__device__ __forceinline__ void load_shared_f32x4(uint32_t address, float& x, float& y, float& z, float& w) {
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(x), "=f"(y), "=f"(z), "=f"(w)
               : "r"(address)
               : "memory");
}

__device__ __forceinline__ uint32_t load_shared_u32(uint32_t address) {
  uint32_t value;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(value) : "r"(address) : "memory");
  return value;
}

// A pair of bfloat16 or float16 (`low` in bits 0-15) as two floats, exactly: both are subsets of FP32.
__device__ __forceinline__ void unpack_bf16x2(uint32_t packed, float& low, float& high) {
  low = __uint_as_float(packed << 16);
  high = __uint_as_float(packed & 0xffff0000u);
}
__device__ __forceinline__ void unpack_f16x2(uint32_t packed, float& low, float& high) {
  asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}"
      : "=f"(low), "=f"(high)
      : "r"(packed));
}

__device__ __forceinline__ void store_shared_f32x2(uint32_t address, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(address), "f"(x), "f"(y) : "memory");
}

__device__ __forceinline__ void store_shared_f32x4(uint32_t address, float x, float y, float z, float w) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(address), "f"(x), "f"(y), "f"(z), "f"(w)
               : "memory");
}

// 16 bytes as four 32-bit words, for copies through registers.
__device__ __forceinline__ U32x4 load_shared_u32x4(uint32_t address) {
  U32x4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.word[0]), "=r"(v.word[1]), "=r"(v.word[2]), "=r"(v.word[3])
               : "r"(address)
               : "memory");
  return v;
}

__device__ __forceinline__ U32x4 load_global_u32x4(const void* pointer) {
  U32x4 v;
  asm volatile("ld.global.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.word[0]), "=r"(v.word[1]), "=r"(v.word[2]), "=r"(v.word[3])
               : "l"(pointer));
  return v;
}

__device__ __forceinline__ void store_global_u32x4(void* pointer, const U32x4& v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(pointer), "r"(v.word[0]), "r"(v.word[1]),
               "r"(v.word[2]), "r"(v.word[3])
               : "memory");
}

// stmatrix: a warp stores 8 x 8 matrices of 16-bit values, thread t holding row t / 4, columns 2 (t % 4) and
// 2 (t % 4) + 1 of each (the layout of an MMA accumulator's 8-column group) and lanes 8i to 8i + 7 giving
// the addresses of matrix i's rows.
__device__ __forceinline__ void stmatrix_x4(uint32_t address, uint32_t m0, uint32_t m1, uint32_t m2, uint32_t m3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(address), "r"(m0), "r"(m1),
               "r"(m2), "r"(m3)
               : "memory");
}

__device__ __forceinline__ void stmatrix_x2(uint32_t address, uint32_t m0, uint32_t m1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(address), "r"(m0), "r"(m1) : "memory");
}

}  // namespace fgemm::ptx
