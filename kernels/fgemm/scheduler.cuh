// Persistent tile scheduling for the three layouts. CTA b takes tiles b, b + gridDim.x, b + 2*gridDim.x, ...
// of one ordering; the producer and the math warpgroups of a CTA each walk the same sequence, so they
// agree on every tile without talking to each other.
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::sm90 {

enum class Layout : uint32_t { Normal = 0, Contiguous = 1, Masked = 2 };

struct Tile {
  uint32_t m_block;  // tile row: rows m_block * BLOCK_M ... (of the group, in the masked layout)
  uint32_t n_block;  // tile column
  uint32_t group;    // the expert (contiguous: as m_indices names it, possibly out of range)
};

// Tiles of a num_m_blocks x kNumNBlocks grid ordered in bands of kBandM tile rows: inside a band,
// consecutive tiles step down the rows first, so the tiles running at the same time share few distinct A
// and B blocks, and those stay in L2.
template <uint32_t kNumNBlocks, uint32_t kBandM>
__host__ __device__ __forceinline__ Tile band_raster(uint32_t index, uint32_t num_m_blocks) {
  const uint32_t band = index / (kBandM * kNumNBlocks);
  const uint32_t in_band = index % (kBandM * kNumNBlocks);
  const uint32_t band_rows = min_of(kBandM, num_m_blocks - band * kBandM);
  return Tile{band * kBandM + in_band % band_rows, in_band / band_rows, 0};
}

// Normal: one M x N grid. Contiguous: the same grid over M_sum rows, each tile taking the expert of its
// rows; tiles made only of padding rows (m_indices -1) are skipped. Masked: one grid per group with
// ceil(masked_m[g] / BLOCK_M) tile rows, the groups one after another (masked_m read on the device).
template <Layout kLayout, uint32_t kBlockM, uint32_t kBlockN, uint32_t kShapeN, uint32_t kBandM>
struct Scheduler {
  static constexpr uint32_t kNumNBlocks = ceil_div(kShapeN, kBlockN);

  uint32_t m;  // rows: M, M_sum, or M_max (masked)
  uint32_t num_groups;
  const int32_t* m_indices;
  const int32_t* masked_m;
  uint32_t next_index;
  uint32_t stride;
  // Masked: the group holding next_index, and the index of its first tile.
  uint32_t group = 0;
  uint32_t group_first_index = 0;

  __host__ __device__ Scheduler(uint32_t m, uint32_t num_groups, const int32_t* m_indices, const int32_t* masked_m,
                                uint32_t first_index, uint32_t stride)
      : m(m), num_groups(num_groups), m_indices(m_indices), masked_m(masked_m), next_index(first_index),
        stride(stride) {}

  // Rows of group g to compute: masked_m[g] clamped to [0, M_max], so a bad count cannot reach past A or D.
  __host__ __device__ uint32_t masked_rows(uint32_t g) const {
    const int32_t rows = masked_m[g];
    return rows < 0 ? 0u : min_of(static_cast<uint32_t>(rows), m);
  }

  // The expert of a contiguous tile: the m_indices value of its first row that is not padding, or -1 when
  // every row is padding.
  __host__ __device__ int32_t tile_expert(uint32_t m_block) const {
    const uint32_t end = min_of((m_block + 1) * kBlockM, m);
    for (uint32_t row = m_block * kBlockM; row < end; ++row)
      if (m_indices[row] != -1) return m_indices[row];
    return -1;
  }

  __host__ __device__ bool next(Tile& tile) {
    if constexpr (kLayout == Layout::Masked) {
      for (; group < num_groups; ++group) {
        const uint32_t m_blocks = ceil_div(masked_rows(group), kBlockM);
        if (next_index < group_first_index + m_blocks * kNumNBlocks) {
          tile = band_raster<kNumNBlocks, kBandM>(next_index - group_first_index, m_blocks);
          tile.group = group;
          next_index += stride;
          return true;
        }
        group_first_index += m_blocks * kNumNBlocks;
      }
      return false;
    } else {
      const uint32_t m_blocks = ceil_div(m, kBlockM);
      for (; next_index < m_blocks * kNumNBlocks; next_index += stride) {
        tile = band_raster<kNumNBlocks, kBandM>(next_index, m_blocks);
        if constexpr (kLayout == Layout::Contiguous) {
          const int32_t expert = tile_expert(tile.m_block);
          if (expert == -1) continue;
          tile.group = static_cast<uint32_t>(expert);
        }
        next_index += stride;
        return true;
      }
      return false;
    }
  }
};

}  // namespace fgemm::sm90
