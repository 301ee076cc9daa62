// Persistent tile scheduling for the three layouts. The unit of work is a "cluster tile": kClusterM x
// kClusterN output tiles, one per CTA of a thread-block cluster (1 x 1 without clusters). Cluster c takes
// cluster tiles c, c + num_clusters, ... of one ordering; every CTA of a cluster, and the producer and the
// math warpgroups of each CTA, walk the same sequence, so they agree on every tile without talking.
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::sm90 {

// ContiguousPsum is the contiguous layout with its experts' rows named by prefix sums instead of m_indices.
// KGrouped: one M x N output per expert, each over its own range of K (the experts' weight gradient).
enum class Layout : uint32_t { Normal = 0, Contiguous = 1, Masked = 2, ContiguousPsum = 3, KGrouped = 4 };

__host__ __device__ constexpr bool is_contiguous(Layout layout) {
  return layout == Layout::Contiguous || layout == Layout::ContiguousPsum;
}

// Each expert's rows of the contiguous layouts start at a multiple of this (kMAlignmentForContiguousLayout).
constexpr uint32_t kContiguousAlignment = 128;

struct Tile {
  uint32_t m_block;  // tile row: rows m_block * BLOCK_M ... (of the group, in the masked layout)
  uint32_t n_block;  // tile column
  uint32_t group;    // the expert (contiguous: as m_indices names it, possibly out of range)
  // False for a CTA whose part of the cluster tile lies outside the problem: it still loads and multiplies,
  // in step with its partner (they share loads), but stores nothing.
  bool valid;
  // The CTAs of the cluster load their shared operand once, each a slice, multicast to all: only when every
  // tile of the cluster tile is valid and of one expert.
  bool multicast;
  uint32_t rows;  // rows of A to compute: M, M_sum, or masked_m[group] clamped to [0, M_max]
  // The tile's K loop starts at K index k_begin: 0, the first of this CTA's split (split-K), or the expert's
  // (k-grouped, whose range of K is [k_begin, k_begin + k_len)).
  uint32_t k_begin;
  uint32_t k_len;
};

// Tiles of a num_m_blocks x num_n_blocks grid ordered in bands of kBandM tile rows: inside a band,
// consecutive tiles step down the rows first, so the tiles running at the same time share few distinct A
// and B blocks, and those stay in L2.
template <uint32_t kBandM>
__host__ __device__ __forceinline__ void band_raster(uint32_t index, uint32_t num_m_blocks, uint32_t num_n_blocks,
                                                     uint32_t& m_block, uint32_t& n_block) {
  const uint32_t band = index / (kBandM * num_n_blocks);
  const uint32_t in_band = index % (kBandM * num_n_blocks);
  const uint32_t band_rows = min_of(kBandM, num_m_blocks - band * kBandM);
  m_block = band * kBandM + in_band % band_rows;
  n_block = in_band / band_rows;
}

// Normal: one M x N grid. Contiguous: the same grid over M_sum rows, each tile taking the expert of its
// rows; cluster tiles made only of padding rows (m_indices -1, or rows past an expert's prefix sum) are
// skipped. Masked: one grid per group with ceil(masked_m[g] / BLOCK_M) tile rows, the groups one after another
// (masked_m read on the device).
// K-grouped: one M x N grid per expert, the experts one after another, each with its range of K (ks read on
// the device; an expert with none still has its tiles, which store C or zeros).
template <Layout kLayout, uint32_t kBlockM, uint32_t kBlockN, uint32_t kShapeN, uint32_t kBandM, uint32_t kClusterM,
          uint32_t kClusterN>
struct Scheduler {
  static constexpr uint32_t kNumNBlocks = ceil_div(kShapeN, kBlockN);
  static constexpr uint32_t kNumClusterCols = ceil_div(kNumNBlocks, kClusterN);

  uint32_t m;  // rows: M, M_sum, or M_max (masked)
  uint32_t num_groups;
  // Contiguous: m_indices [M_sum], or the prefix sums [num_groups] (psum); k-grouped: each expert's K.
  const int32_t* grouped_layout;
  const int32_t* masked_m;
  uint32_t rank_m, rank_n;  // this CTA's place in its multicast cluster
  uint32_t split_k_begin;   // split-K: where this CTA's share of every tile's K starts
  uint32_t next_index;
  uint32_t stride;
  // Masked and k-grouped: the group holding next_index, and the index of its first cluster tile; k-grouped:
  // where its K starts.
  uint32_t group = 0;
  uint32_t group_first_index = 0;
  uint32_t group_k_begin = 0;

  // `multicast_rank`: the CTA's rank in a multicast cluster (0 without one); the CTAs of a split-K cluster walk
  // the same tiles, each from its own `split_k_begin`.
  __host__ __device__ Scheduler(uint32_t m, uint32_t num_groups, const int32_t* grouped_layout,
                                const int32_t* masked_m, uint32_t multicast_rank, uint32_t first_index,
                                uint32_t stride, uint32_t split_k_begin = 0)
      : m(m), num_groups(num_groups), grouped_layout(grouped_layout), masked_m(masked_m),
        rank_m(multicast_rank % kClusterM), rank_n(multicast_rank / kClusterM), split_k_begin(split_k_begin),
        next_index(first_index), stride(stride) {}

  // Rows of group g to compute: masked_m[g] clamped to [0, M_max], so a bad count cannot reach past A or D;
  // every row for k-grouped.
  __host__ __device__ uint32_t group_rows(uint32_t g) const {
    if constexpr (kLayout == Layout::KGrouped) return m;
    const int32_t rows = masked_m[g];
    return rows < 0 ? 0u : min_of(static_cast<uint32_t>(rows), m);
  }

  // Expert g's K (k-grouped), negative counts read as none.
  __host__ __device__ uint32_t group_k(uint32_t g) const {
    const int32_t k = grouped_layout[g];
    return k < 0 ? 0u : static_cast<uint32_t>(k);
  }

  // The end of expert g's rows in the psum layout: psum[g], clamped to [0, M_sum] so that a bad value cannot
  // reach past A or D.
  __host__ __device__ uint32_t psum_end(uint32_t g) const {
    const int32_t end = grouped_layout[g];
    return end < 0 ? 0u : min_of(static_cast<uint32_t>(end), m);
  }

  // Where expert g's rows start in the psum layout: psum[g - 1] rounded up to the alignment (0 for g = 0).
  __host__ __device__ uint32_t psum_start(uint32_t g) const {
    return g == 0 ? 0u : ceil_div(psum_end(g - 1), kContiguousAlignment) * kContiguousAlignment;
  }

  // The expert of row `row` of a tile of expert `group`: its m_indices value, or in the psum layout `group`
  // where the row lies before the expert's end (a tile lies inside the aligned range of one expert), else -1.
  __host__ __device__ int32_t row_expert(uint32_t row, uint32_t group) const {
    if (row >= m) return -1;
    if constexpr (kLayout == Layout::ContiguousPsum)
      return row < psum_end(group) ? static_cast<int32_t>(group) : -1;
    else
      return grouped_layout[row];
  }

  // The expert of a psum tile row: expert g owns rows [align(psum[g - 1]), align(psum[g])), the first
  // psum[g] of them computed; the expert is the first whose aligned end lies past the tile row's first row
  // (a binary search, log2(G) loads), or -1 where the tile row holds only padding.
  __host__ __device__ int32_t psum_block_expert(uint32_t first_row) const {
    uint32_t low = 0, high = num_groups;
    while (low < high) {
      const uint32_t mid = (low + high) / 2;
      if (ceil_div(psum_end(mid), kContiguousAlignment) * kContiguousAlignment > first_row)
        high = mid;
      else
        low = mid + 1;
    }
    return low < num_groups && first_row < psum_end(low) ? static_cast<int32_t>(low) : -1;
  }

  // The expert of a contiguous tile row: the m_indices value of its first row that is not padding (the psum
  // layout: see psum_block_expert), or -1 when every row is padding (or the block lies past the end).
  __host__ __device__ int32_t block_expert(uint32_t m_block) const {
    const uint32_t first_row = m_block * kBlockM, end = min_of(first_row + kBlockM, m);
    if (first_row >= end) return -1;
    if constexpr (kLayout == Layout::ContiguousPsum) return psum_block_expert(first_row);
    const int32_t* m_indices = grouped_layout;
    // The common case, one load: a tile row starts with its expert's rows (each expert's rows begin at a
    // multiple of the M alignment, and the padding is at their end).
    const int32_t expert = m_indices[first_row];
    if (expert != -1) return expert;
    // Padding: look at kScanRows rows at a time. Their loads are independent, so each round costs one trip
    // to memory; a row at a time, a tile row of padding (serving frameworks size M_sum for the worst case,
    // leaving whole tiles of it) cost kBlockM dependent loads, thousands of cycles, in every warpgroup.
    constexpr uint32_t kScanRows = 16;
    for (uint32_t base = first_row + 1; base < end; base += kScanRows) {
      int32_t experts[kScanRows];
#pragma unroll
      for (uint32_t i = 0; i < kScanRows; ++i) experts[i] = base + i < end ? m_indices[base + i] : -1;
#pragma unroll
      for (uint32_t i = 0; i < kScanRows; ++i)
        if (experts[i] != -1) return experts[i];
    }
    return -1;
  }

  // This CTA's tile of cluster tile (cluster_row, cluster_col) in a grid of num_m_blocks tile rows.
  __host__ __device__ Tile tile_of(uint32_t cluster_row, uint32_t cluster_col, uint32_t num_m_blocks) const {
    Tile tile;
    tile.m_block = cluster_row * kClusterM + rank_m;
    tile.n_block = cluster_col * kClusterN + rank_n;
    tile.group = 0;
    tile.rows = m;
    tile.k_begin = split_k_begin;
    tile.k_len = 0;
    tile.valid = tile.m_block < num_m_blocks && tile.n_block < kNumNBlocks;
    // Whole cluster tile inside the grid: the last tile of the cluster tile is.
    tile.multicast = (cluster_row + 1) * kClusterM <= num_m_blocks && (cluster_col + 1) * kClusterN <= kNumNBlocks;
    return tile;
  }

  __host__ __device__ bool next(Tile& tile) {
    uint32_t cluster_row, cluster_col;
    if constexpr (kLayout == Layout::Masked || kLayout == Layout::KGrouped) {
      for (; group < num_groups; ++group) {
        const uint32_t rows = group_rows(group);
        const uint32_t m_blocks = ceil_div(rows, kBlockM);
        const uint32_t cluster_rows = ceil_div(m_blocks, kClusterM);
        if (next_index < group_first_index + cluster_rows * kNumClusterCols) {
          band_raster<kBandM>(next_index - group_first_index, cluster_rows, kNumClusterCols, cluster_row, cluster_col);
          tile = tile_of(cluster_row, cluster_col, m_blocks);
          tile.group = group;
          tile.rows = rows;
          if constexpr (kLayout == Layout::KGrouped) {
            tile.k_begin = group_k_begin;
            tile.k_len = group_k(group);
          }
          next_index += stride;
          return true;
        }
        group_first_index += cluster_rows * kNumClusterCols;
        if constexpr (kLayout == Layout::KGrouped) group_k_begin += group_k(group);
      }
      return false;
    } else {
      const uint32_t m_blocks = ceil_div(m, kBlockM);
      const uint32_t cluster_rows = ceil_div(m_blocks, kClusterM);
      for (; next_index < cluster_rows * kNumClusterCols; next_index += stride) {
        band_raster<kBandM>(next_index, cluster_rows, kNumClusterCols, cluster_row, cluster_col);
        tile = tile_of(cluster_row, cluster_col, m_blocks);
        if constexpr (is_contiguous(kLayout)) {
          // Every CTA of the cluster reads the experts of both its tile rows (clusters hold at most two
          // CTAs), to agree on what to do.
          const int32_t first = block_expert(cluster_row * kClusterM);
          const int32_t second = kClusterM > 1 ? block_expert(cluster_row * kClusterM + 1) : first;
          if (first == -1 && second == -1) continue;
          const int32_t own = rank_m == 0 ? first : second;
          tile.valid &= own != -1;
          tile.multicast &= first == second;
          // A padding-only tile of a cluster tile reads its partner's expert (it stores nothing).
          tile.group = static_cast<uint32_t>(own != -1 ? own : first != -1 ? first : second);
        }
        next_index += stride;
        return true;
      }
      return false;
    }
  }
};

}  // namespace fgemm::sm90
