// How fast can a kernel read N bytes from HBM, start to end, when it does nothing else? Two ways of streaming
// the bytes, each over many CTAs with many bytes in flight:
//
//  - bulk: one thread of each CTA copies its share of the bytes into a ring of shared-memory slots with bulk
//    copies (cp.async.bulk, the TMA's unit, as the GEMM's producer loads its stages), `depth` copies in flight;
//  - vector: every thread loads 16 bytes at a time, `kUnroll` loads in flight, the grid striding over the bytes;
//  - boxes: B of a GEMM ([N, K] bytes, K contiguous) as the GEMM's producer loads it, by the TMA with the 128-byte
//    swizzle: each CTA takes whole tiles of `rows` rows and walks their K in boxes of rows x 128 bytes x
//    `k_blocks` K blocks (a 3-D tensor map whose third dimension steps 128 bytes along K).
//
// Each folds a word of what it read into `sink` so that no load is dead. The time such a kernel takes for a
// GEMM's bytes bounds the GEMM's own from below: a GEMM must read them too, and then compute.
//
// Built into a shared library and driven by bench/read_probe.py, which times it under the GEMM benchmarks'
// protocol.
#include <cuda.h>
#include <cuda_runtime.h>

#include "fgemm/ptx.cuh"

using fgemm::uint32_t;
using fgemm::uint64_t;
using fgemm::uint8_t;
namespace ptx = fgemm::ptx;

namespace {

constexpr int kMaxDepth = 32;
constexpr int kUnroll = 8;

__device__ __forceinline__ void bulk_load(uint8_t* dst, const uint8_t* src, uint32_t bytes, uint64_t* barrier) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   ptx::smem_address(dst)),
               "l"(src), "r"(bytes), "r"(ptx::smem_address(barrier))
               : "memory");
}

// One thread streams `copies` copies through a ring of `depth` slots of `slot_bytes` in shared memory, each guarded by
// its barrier of `full`: issue(c, slot, barrier) starts copy c into its slot, and a copy is waited for before its
// slot takes another. Returns the first word of every copy, folded together.
template <class Issue>
__device__ __forceinline__ uint32_t stream_through_ring(uint8_t* slots, uint32_t slot_bytes, uint64_t* full,
                                                        uint32_t depth, uint32_t copies, Issue issue) {
  for (uint32_t slot = 0; slot < depth; ++slot) ptx::mbarrier_init(&full[slot], 1);
  ptx::fence_barrier_init();
  uint32_t folded = 0;
  for (uint32_t c = 0; c < copies + depth; ++c) {
    const uint32_t slot = c % depth;
    if (c >= depth) {
      ptx::mbarrier_wait(&full[slot], ((c - depth) / depth) & 1);
      folded ^= *reinterpret_cast<const uint32_t*>(slots + uint64_t(slot) * slot_bytes);
    }
    if (c < copies) issue(c, slots + uint64_t(slot) * slot_bytes, &full[slot]);
  }
  return folded;
}

// CTA b reads bytes [b * share, (b + 1) * share) of src (share a multiple of 16) in chunks of `chunk` bytes.
__global__ void __launch_bounds__(32, 1) read_bulk(const uint8_t* src, uint64_t bytes, uint32_t chunk, uint32_t depth,
                                                   uint32_t* sink) {
  extern __shared__ __align__(128) uint8_t slots[];
  __shared__ uint64_t full[kMaxDepth];
  if (threadIdx.x != 0) return;
  const uint64_t share = (bytes / gridDim.x + 15) / 16 * 16;
  const uint64_t begin = share * blockIdx.x;
  const uint64_t end = begin + share < bytes ? begin + share : bytes;
  const uint32_t chunks = begin < end ? static_cast<uint32_t>((end - begin + chunk - 1) / chunk) : 0;
  const uint32_t folded = stream_through_ring(slots, chunk, full, depth, chunks, [&](uint32_t c, uint8_t* dst,
                                                                                     uint64_t* barrier) {
    const uint64_t offset = begin + uint64_t(c) * chunk;
    const uint32_t size = static_cast<uint32_t>(end - offset < chunk ? end - offset : chunk);
    ptx::mbarrier_arrive_expect_tx(barrier, size);
    bulk_load(dst, src + offset, size, barrier);
  });
  if (folded == 0x9e3779b9u) *sink = folded;
}

__global__ void __launch_bounds__(1024) read_vector(const uint4* src, uint64_t vectors, uint32_t* sink) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint32_t folded = 0;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride * kUnroll) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint64_t at = i + u * stride;
      v[u] = at < vectors ? __ldcs(src + at) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) folded ^= v[u].x ^ v[u].w;
  }
  if (folded == 0x9e3779b9u) *sink = folded;
}

// Tiles of `rows` rows of B dealt round-robin to the CTAs; each walks its tile's K blocks in boxes of `k_blocks`
// of them, `depth` boxes in flight.
__global__ void __launch_bounds__(32, 1) read_boxes(const __grid_constant__ CUtensorMap map, uint32_t n, uint32_t k,
                                                    uint32_t rows, uint32_t k_blocks, uint32_t depth, uint32_t* sink) {
  // The boxes land on 1024-byte boundaries, where the 128-byte swizzle's pattern starts; the barriers follow them.
  extern __shared__ __align__(1024) uint8_t boxes_ring[];
  if (threadIdx.x != 0) return;
  const uint32_t box_bytes = rows * 128 * k_blocks;
  uint8_t* slots = boxes_ring;
  uint64_t* full = reinterpret_cast<uint64_t*>(boxes_ring + depth * box_bytes);
  const uint32_t boxes_per_tile = k / 128 / k_blocks;
  const uint32_t tiles = (n + rows - 1) / rows;
  const uint32_t my_tiles = tiles > blockIdx.x ? (tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  const uint32_t boxes = my_tiles * boxes_per_tile;
  const uint32_t folded = stream_through_ring(slots, box_bytes, full, depth, boxes, [&](uint32_t c, uint8_t* dst,
                                                                                       uint64_t* barrier) {
    const uint32_t tile = blockIdx.x + (c / boxes_per_tile) * gridDim.x;
    const uint32_t k_block = (c % boxes_per_tile) * k_blocks;
    ptx::mbarrier_arrive_expect_tx(barrier, box_bytes);
    ptx::tma_load_3d(dst, reinterpret_cast<const ptx::TensorMap*>(&map), barrier, 0, static_cast<int32_t>(tile * rows),
                     static_cast<int32_t>(k_block));
  });
  if (folded == 0x9e3779b9u) *sink = folded;
}

}  // namespace

// Reads B [n, k] (k a multiple of 128 * k_blocks) in boxes of rows x 128 bytes x k_blocks with `ctas` CTAs, `depth`
// boxes in flight each. Returns a CUresult where the tensor map cannot be made, else the launch's cudaError_t.
extern "C" int read_probe_boxes(const void* b, unsigned n, unsigned k, int ctas, unsigned rows, unsigned k_blocks,
                                unsigned depth, void* sink, void* stream) {
  if (depth == 0 || depth > kMaxDepth || k % (128 * k_blocks) != 0) return cudaErrorInvalidValue;
  CUtensorMap map;
  const cuuint64_t sizes[3] = {128, n, k / 128};
  const cuuint64_t strides[2] = {k, 128};  // a row of B, then a K block along it
  const cuuint32_t box[3] = {128, rows, k_blocks};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult encoded = cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(b), sizes, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (encoded != CUDA_SUCCESS) return 1000 + static_cast<int>(encoded);
  const int smem = static_cast<int>((rows * 128 * k_blocks + 8) * depth);
  const cudaError_t attribute = cudaFuncSetAttribute(read_boxes, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (attribute != cudaSuccess) return attribute;
  read_boxes<<<ctas, 32, smem, static_cast<cudaStream_t>(stream)>>>(map, n, k, rows, k_blocks, depth,
                                                                     static_cast<uint32_t*>(sink));
  return cudaGetLastError();
}

// Reads `bytes` (a multiple of 16) of `src` with `ctas` CTAs of the bulk kind (chunk and depth as above; chunk a
// multiple of 16, depth * chunk bytes of shared memory per CTA) or, where chunk is 0, of the vector kind with
// `threads` threads per CTA. Returns the launch's cudaError_t.
extern "C" int read_probe(const void* src, unsigned long long bytes, int ctas, int threads, unsigned chunk,
                          unsigned depth, void* sink, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (chunk == 0) {
    read_vector<<<ctas, threads, 0, s>>>(static_cast<const uint4*>(src), bytes / 16, static_cast<uint32_t*>(sink));
    return cudaGetLastError();
  }
  if (depth == 0 || depth > kMaxDepth) return cudaErrorInvalidValue;
  const int smem = static_cast<int>(chunk * depth);
  const cudaError_t attribute = cudaFuncSetAttribute(read_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (attribute != cudaSuccess) return attribute;
  read_bulk<<<ctas, 32, smem, s>>>(static_cast<const uint8_t*>(src), bytes, chunk, depth,
                                   static_cast<uint32_t*>(sink));
  return cudaGetLastError();
}
