// How fast can a kernel read N bytes from HBM, start to end, when it does nothing else? Two ways of streaming
// the bytes, each over many CTAs with many bytes in flight:
//
//  - bulk: one thread of each CTA copies its share of the bytes into a ring of shared-memory slots with bulk
//    copies (cp.async.bulk, the TMA's unit, as the GEMM's producer loads its stages), `depth` copies in flight;
//  - vector: every thread loads 16 bytes at a time, `kUnroll` loads in flight, the grid striding over the bytes.
//
// Each folds a word of what it read into `sink` so that no load is dead. The time such a kernel takes for a
// GEMM's bytes bounds the GEMM's own from below: a GEMM must read them too, and then compute.
//
// Built into a shared library and driven by bench/read_probe.py, which times it under the GEMM benchmarks'
// protocol.
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
  for (uint32_t slot = 0; slot < depth; ++slot) ptx::mbarrier_init(&full[slot], 1);
  ptx::fence_barrier_init();
  uint32_t folded = 0;
  for (uint32_t c = 0; c < chunks + depth; ++c) {
    const uint32_t slot = c % depth;
    if (c >= depth) {
      ptx::mbarrier_wait(&full[slot], ((c - depth) / depth) & 1);
      folded ^= *reinterpret_cast<const uint32_t*>(slots + uint64_t(slot) * chunk);
    }
    if (c < chunks) {
      const uint64_t offset = begin + uint64_t(c) * chunk;
      const uint32_t size = static_cast<uint32_t>(end - offset < chunk ? end - offset : chunk);
      ptx::mbarrier_arrive_expect_tx(&full[slot], size);
      bulk_load(slots + uint64_t(slot) * chunk, src + offset, size, &full[slot]);
    }
  }
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

}  // namespace

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
