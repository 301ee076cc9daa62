#include "cpu/blocked_gemm.hpp"

#include <algorithm>

#include "cpu/bf16.hpp"
#include "cpu/thread_pool.hpp"

namespace fgemm::cpu {
namespace {

using detail::GemmProblem;

// Rows of one chunk at most: B is decoded once per chunk, so taller chunks decode it less often.
constexpr std::int64_t kMaxChunkRows = 256;
// K values packed at once (see PackA in kernel_set.hpp): every row is read as a run of 1 KiB.
constexpr std::int64_t kSpanK = 8 * kBlockK;
// N tiles that share one packed span of A, so that A is decoded once for all of them.
constexpr std::int64_t kMaxTilesPerUnit = 16;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Working memory of one thread, kept between calls so that its buffers are allocated once.
class Scratch {
 public:
  void* packed_a(std::size_t bytes) { return grow(packed_a_, bytes); }
  void* packed_b(std::size_t bytes) { return grow(packed_b_, bytes); }
  float* sums(std::size_t count) { return static_cast<float*>(grow(sums_, count * sizeof(float))); }
  float* row_scales(std::size_t count) { return static_cast<float*>(grow(row_scales_, count * sizeof(float))); }

 private:
  struct alignas(64) CacheLine {
    unsigned char bytes[64];
  };

  static void* grow(std::vector<CacheLine>& buffer, std::size_t bytes) {
    const std::size_t lines = (bytes + sizeof(CacheLine) - 1) / sizeof(CacheLine);
    if (buffer.size() < lines) buffer.resize(lines);
    return buffer.data();
  }

  std::vector<CacheLine> packed_a_, packed_b_, sums_, row_scales_;
};

// Rows [first_row, first_row + rows) of one row block.
struct RowChunk {
  const RowBlock* block;
  std::int64_t first_row;
  std::int64_t rows;
};

// The work of one task: a chunk of rows times the N tiles [first_tile, first_tile + tiles).
struct WorkUnit {
  const RowChunk* chunk;
  std::int64_t first_tile;
  std::int64_t tiles;
};

// [0, count) cut into `parts` ranges of nearly equal sizes; calls emit(begin, size) for each.
template <class Emit>
void split_evenly(std::int64_t count, std::int64_t parts, Emit emit) {
  for (std::int64_t i = 0; i < parts; ++i) {
    const std::int64_t begin = count * i / parts, end = count * (i + 1) / parts;
    emit(begin, end - begin);
  }
}

// Chunks as tall as allowed, unless there are too few N tiles to give every thread work (twice over, for
// balance); never shorter than one micro-kernel.
std::vector<RowChunk> make_chunks(const std::vector<RowBlock>& blocks, std::int64_t n_tiles, int threads,
                                  int min_rows) {
  std::int64_t total_rows = 0;
  for (const RowBlock& block : blocks) total_rows += block.rows;
  const std::int64_t balanced = ceil_div(total_rows * n_tiles, 2 * static_cast<std::int64_t>(threads));
  const std::int64_t max_rows = std::clamp<std::int64_t>(balanced, min_rows, kMaxChunkRows);
  std::vector<RowChunk> chunks;
  for (const RowBlock& block : blocks)
    split_evenly(block.rows, ceil_div(block.rows, max_rows), [&](std::int64_t first, std::int64_t rows) {
      chunks.push_back({&block, first, rows});
    });
  return chunks;
}

// Each chunk's N tiles in as few units as give every thread several (for balance).
std::vector<WorkUnit> make_units(const std::vector<RowChunk>& chunks, std::int64_t n_tiles, int threads) {
  const std::int64_t wanted =
      ceil_div(4 * static_cast<std::int64_t>(threads), static_cast<std::int64_t>(chunks.size()));
  const std::int64_t per_chunk = std::min(n_tiles, std::max(ceil_div(n_tiles, kMaxTilesPerUnit), wanted));
  std::vector<WorkUnit> units;
  for (const RowChunk& chunk : chunks)
    split_evenly(n_tiles, per_chunk, [&](std::int64_t first, std::int64_t tiles) {
      units.push_back({&chunk, first, tiles});
    });
  return units;
}

// One N tile of a unit: where its B starts and how many columns it has.
struct Tile {
  std::int64_t n0;
  std::int64_t cols;
  const std::uint8_t* b;
  const float* sfb;
  float* sums;  // rows x kBlockN, FP32
};

// Multiplies a packed span of A by the tile's packed span of B, one K block at a time, into the tile's
// sums. span_start is the span's first value of K.
void multiply_span(const GemmProblem& p, const KernelSet& kernels, const RowChunk& chunk, const Tile& tile,
                   std::int64_t span_start, std::int64_t k_len, const unsigned char* packed_a,
                   const unsigned char* packed_b, float* row_scales) {
  const std::int64_t rows = chunk.rows;
  const std::int64_t col_panels = ceil_div(tile.cols, kernels.panel_cols);
  const std::int64_t row_panels = ceil_div(rows, kernels.max_rows);
  const std::int64_t element = kernels.packed_element_bytes;
  const float* sfa = chunk.block->sfa + chunk.first_row * p.sfa_m_stride;
  for (std::int64_t block_start = 0; block_start < k_len; block_start += kBlockK) {
    const std::int64_t kb = (span_start + block_start) / kBlockK;
    const std::int64_t kc = std::min(kBlockK, k_len - block_start);
    const float col_scale = tile.sfb[kb * p.sfb_k_stride];
    for (std::int64_t r = 0; r < rows; ++r) row_scales[r] = sfa[r * p.sfa_m_stride + kb * p.sfa_k_stride] * col_scale;

    const unsigned char* a_block = packed_a + block_start * rows * element;
    const unsigned char* b_block = packed_b + block_start * col_panels * kernels.panel_cols * element;
    // Column panels outside: one packed B panel stays in L1 while the rows' A panels stream past it.
    for (std::int64_t panel = 0; panel < col_panels; ++panel) {
      const unsigned char* b_panel = b_block + panel * kc * kernels.panel_cols * element;
      split_evenly(rows, row_panels, [&](std::int64_t r0, std::int64_t panel_rows) {
        kernels.micro_kernels[panel_rows - 1](a_block + r0 * kBlockK * element, b_panel, kc, row_scales + r0,
                                              tile.sums + r0 * kBlockN + panel * kernels.panel_cols, kBlockN, kb == 0);
      });
    }
  }
}

// D = sums (+ C) for the tile's rows and columns, rounded to D's type.
void write_tile(const GemmProblem& p, const RowChunk& chunk, const Tile& tile) {
  const RowBlock& block = *chunk.block;
  for (std::int64_t r = 0; r < chunk.rows; ++r) {
    const std::int64_t row = chunk.first_row + r;
    const float* sum = tile.sums + r * kBlockN;
    const float* c = block.c ? block.c + row * p.c_row_stride + tile.n0 : nullptr;
    if (p.d_dtype == DType::F32) {
      float* out = static_cast<float*>(block.d) + row * p.d_row_stride + tile.n0;
      for (std::int64_t j = 0; j < tile.cols; ++j) out[j] = c ? sum[j] + c[j] : sum[j];
    } else {
      std::uint16_t* out = static_cast<std::uint16_t*>(block.d) + row * p.d_row_stride + tile.n0;
      for (std::int64_t j = 0; j < tile.cols; ++j) out[j] = bf16_from_float(c ? sum[j] + c[j] : sum[j]);
    }
  }
}

// A unit span by span: the span of A is decoded once, then each tile decodes its span of B and multiplies.
void multiply_unit(const GemmProblem& p, const KernelSet& kernels, const WorkUnit& unit, Scratch& scratch) {
  const RowChunk& chunk = *unit.chunk;
  const RowBlock& block = *chunk.block;
  const std::size_t element = static_cast<std::size_t>(kernels.packed_element_bytes);
  const std::int64_t span = std::min(kSpanK, ceil_div(p.k, kBlockK) * kBlockK);  // packed blocks are kBlockK long
  auto* packed_a = static_cast<unsigned char*>(scratch.packed_a(chunk.rows * span * element));
  auto* packed_b = static_cast<unsigned char*>(scratch.packed_b(kBlockN * span * element));
  float* sums = scratch.sums(unit.tiles * chunk.rows * kBlockN);
  float* row_scales = scratch.row_scales(chunk.rows);

  std::vector<Tile> tiles;
  for (std::int64_t t = 0; t < unit.tiles; ++t) {
    const std::int64_t n0 = (unit.first_tile + t) * kBlockN;
    tiles.push_back({n0, std::min(kBlockN, p.n - n0), block.b + n0 * p.b_row_stride,
                     block.sfb + (n0 / kBlockN) * p.sfb_n_stride, sums + t * chunk.rows * kBlockN});
  }
  const std::uint8_t* a = block.a + chunk.first_row * p.a_row_stride;
  for (std::int64_t span_start = 0; span_start < p.k; span_start += kSpanK) {
    const std::int64_t k_len = std::min(kSpanK, p.k - span_start);
    kernels.pack_a(a + span_start, p.a_row_stride, chunk.rows, k_len, packed_a);
    for (const Tile& tile : tiles) {
      kernels.pack_b(tile.b + span_start, p.b_row_stride, tile.cols, k_len, packed_b);
      multiply_span(p, kernels, chunk, tile, span_start, k_len, packed_a, packed_b, row_scales);
    }
  }
  for (const Tile& tile : tiles) write_tile(p, chunk, tile);
}

}  // namespace

void blocked_gemm(const GemmProblem& problem, const std::vector<RowBlock>& blocks, const KernelSet& kernels) {
  ThreadPool& pool = ThreadPool::instance();
  const std::int64_t n_tiles = ceil_div(problem.n, kBlockN);
  const std::vector<RowChunk> chunks = make_chunks(blocks, n_tiles, pool.num_threads(), kernels.max_rows);
  if (chunks.empty()) return;  // every row is padding or masked off
  const std::vector<WorkUnit> units = make_units(chunks, n_tiles, pool.num_threads());
  pool.run(static_cast<std::int64_t>(units.size()), [&](std::int64_t i) {
    thread_local Scratch scratch;
    multiply_unit(problem, kernels, units[i], scratch);
  });
}

}  // namespace fgemm::cpu
