// The sm90 GEMM kernel's skeleton: D = A * B^T (+ C) for the normal, m-grouped contiguous (m_indices or psum),
// m-grouped masked and k-grouped layouts, with its precision and recipe supplied by policies
// (docs/ARCHITECTURE.md):
//   - OperandA, OperandB: how A and B sit in a stage and how wgmma addresses them (operand_k_major.cuh,
//              operand_mn_major.cuh);
//   - Math:    what happens per K block (the MMAs through its Mma instruction, any scaling) and what else a
//              stage holds (math_block_scaled.cuh, math_row_blocks.cuh, math_no_scale.cuh, math_int32_sums.cuh);
//   - Transform: what the epilogue does to the accumulators before they are stored (epilogue_transform.cuh).
// The skeleton owns the rest: the persistent scheduler, the TMA producer and its stage ring, the math
// warpgroups' K loop and the epilogue's staging and stores, and the shared memory and barriers of C's rings
// (epilogue_c_ring.cuh), which the transform that adds C fills and reads.
//
// One CTA per SM walks its tiles (persistent), with clusters of two CTAs optionally sharing an operand by TMA
// multicast, or with clusters of up to eight CTAs sharing each tile's K loop (split-K, split_k_reduction.cuh).
// Warpgroups: two or three math warpgroups (three for 192-row tiles), each owning a 64 x kWarpgroupN part of the
// tile, or two taking alternate K blocks of a 64-row tile (alternating_k_blocks.cuh); and the producer (the last
// warpgroup), whose first thread streams the K blocks of A and B of every tile through a ring of kNumStages
// shared-memory stages with the TMA, and whose second warp may help the math policy fill its stages.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/alternating_k_blocks.cuh"
#include "fgemm/sm90/epilogue_store.cuh"
#include "fgemm/sm90/epilogue_transform.cuh"
#include "fgemm/sm90/gemm_config.cuh"
#include "fgemm/sm90/scheduler.cuh"
#include "fgemm/sm90/split_k_reduction.cuh"
#include "fgemm/sm90/stage_ring.cuh"

namespace fgemm::sm90 {

template <class C, class OperandA, class OperandB, class Math, class Transform>
struct GemmKernel {
  static constexpr uint32_t kNumStages = C::kNumStages;
  static constexpr uint32_t kSmemBytes = C::kTile.smem_bytes(Math::kStageExtraBytes);
  // Registers: the math policy divides the SM's 64 K between the producer warpgroup and the math warpgroups.
  static constexpr uint32_t kProducerRegisters = Math::kRegisters.producer;
  static constexpr uint32_t kMathRegisters = Math::kRegisters.math;
  static_assert(128 * kProducerRegisters + C::kNumMathWarpgroups * 128 * kMathRegisters <= 64 * 1024,
                "the warpgroups' registers fit the SM's");
  static_assert(kProducerRegisters % 8 == 0 && kMathRegisters % 8 == 0 && kProducerRegisters >= 24 &&
                    kMathRegisters <= 256,
                "setmaxnreg takes multiples of 8 in [24, 256]");
  static constexpr uint32_t kProducerThread = C::kNumMathWarpgroups * 128;
  // Each box starts on a 1024-byte boundary, where the 128-byte swizzle pattern starts.
  static_assert(C::kLoadedRowsA % OperandA::kRowUnit == 0 && C::kSliceRowsA % OperandA::kRowUnit == 0 &&
                    C::kSliceRowsB % OperandB::kRowUnit == 0,
                "a stage loads whole boxes of each operand");
  // Where C is D, a tile of at most kPrefetchDMaxKBlocks K blocks has its D brought into L2 kPrefetchDKBlocks K
  // blocks before its end (produce). Measured on an H200 (docs/PERFORMANCE.md): 2-15% faster on tiles of 4 to 32
  // K blocks, whose epilogue weighs most, and up to 3% slower on tiles of 56 and more.
  static constexpr uint32_t kPrefetchDKBlocks = 8;
  static constexpr uint32_t kPrefetchDMaxKBlocks = 32;
  using Sched = Scheduler<C::kLayout, C::kBlockM, C::kBlockN, C::kShapeN, C::kBandM, C::kClusterM, C::kClusterN>;

  // Shared memory: each storing math warpgroup's epilogue memory (D's staging, and C's ring in the same bytes), A's
  // and B's stages, each buffer on a 1024-byte boundary, where the 128-byte swizzle's pattern starts (the TMA and
  // wgmma address it from there); the math policy's stage buffers; the sums of split-K or of alternate K blocks,
  // read and written 16 bytes at a time, on a 16-byte boundary, which the barriers after them (8 bytes each, as
  // many as the stages, C's slots and split-K take) would not keep; then the barriers.
  struct SharedMemory {
    uint8_t* epilogue;
    uint8_t* a;
    uint8_t* b;
    uint8_t* extra;
    uint8_t* sums;
    uint64_t* full;
    uint64_t* empty;
    uint64_t* c_full;
    uint64_t* split_k_barriers;

    static_assert(C::kEpilogueBytesPerWarpgroup % 1024 == 0 && C::kSmemA % 1024 == 0 && C::kSmemB % 1024 == 0 &&
                      Math::kStageExtraBytes % 16 == 0 && C::kSumsBytes % 16 == 0,
                  "the buffers start on 1024-byte boundaries, and the sums on a 16-byte one");

    __device__ __forceinline__ explicit SharedMemory(uint8_t* base)
        : epilogue(base),
          a(epilogue + C::kStoringWarpgroups * C::kEpilogueBytesPerWarpgroup),
          b(a + kNumStages * C::kSmemA),
          extra(b + kNumStages * C::kSmemB),
          sums(extra + kNumStages * Math::kStageExtraBytes),
          full(reinterpret_cast<uint64_t*>(sums + C::kSumsBytes)),
          empty(full + kNumStages),
          c_full(empty + kNumStages),
          split_k_barriers(c_full + C::kStoringWarpgroups * C::kCSlots) {}
  };

  // The TMA thread of the producer warpgroup: streams the K blocks of A and B (and what the math policy loads
  // with them) of every tile through the stages.
  //
  // The k-grouped layout's operands are one matrix per expert: MN-major, rows of one [sum(ks), M] matrix (K
  // counted from the first expert's); K-major (FP8), a matrix of its own per expert, whose tensor map
  // `expert_maps` holds and whose K starts at the expert's first.
  //
  // Where C is D (accumulation in place), it also brings the D of each tile of few K blocks into L2
  // kPrefetchDKBlocks K blocks before the tile's end (at its start where it has fewer), so that the TMA's additions
  // in the epilogue find D there rather than wait for DRAM.
  __device__ __forceinline__ static void produce(Sched scheduler, uint32_t rank, const SharedMemory& smem,
                                                 const ptx::TensorMap* tmap_a, const ptx::TensorMap* tmap_b,
                                                 const ptx::TensorMap* tmap_d, const ScaleMaps& scale_maps,
                                                 const ExpertTensorMaps* expert_maps) {
    constexpr bool kMasked = C::kLayout == Layout::Masked;
    // B is a stack of the experts' matrices in the M-grouped layouts; k-grouped operands are one matrix each.
    constexpr bool kGroupedB = C::kLayout != Layout::Normal && C::kLayout != Layout::KGrouped;
    fill_stages<C>(scheduler, smem.empty, [&](const Tile& tile, uint32_t group, uint32_t kb, uint32_t stage) {
      const int32_t m0 = tile.m_block * C::kBlockM, n0 = tile.n_block * C::kBlockN;
      int32_t k0 = kb * C::kBlockK;
      const ptx::TensorMap* map_a = tmap_a;
      const ptx::TensorMap* map_b = tmap_b;
      if (expert_maps != nullptr) {
        map_a = reinterpret_cast<const ptx::TensorMap*>(&expert_maps->a[group]);
        map_b = reinterpret_cast<const ptx::TensorMap*>(&expert_maps->b[group]);
        k0 -= tile.k_begin;
      }
      constexpr bool kKGrouped = C::kLayout == Layout::KGrouped;
      if constexpr (C::kAddToD && !C::kPackedD && (kKGrouped || C::kNumKBlocks <= kPrefetchDMaxKBlocks)) {
        const uint32_t tile_k_blocks = kKGrouped ? ceil_div(tile.k_len, C::kBlockK) : C::kNumKBlocks;
        const uint32_t prefetch_at = tile_k_blocks > kPrefetchDKBlocks ? tile_k_blocks - kPrefetchDKBlocks : 0;
        if (tile_k_blocks <= kPrefetchDMaxKBlocks && kb - tile.k_begin / C::kBlockK == prefetch_at)
          Epilogue<C>::template prefetch_tile_of_d<kMasked || kKGrouped>(tmap_d, m0, n0, group);
      }
      const bool multicast = C::kMulticastSize > 1 && tile.multicast;
      uint64_t* full = &smem.full[stage];
      // The bytes that land in this CTA's stage, its own loads and its peers' multicasts together.
      ptx::mbarrier_arrive_expect_tx(full, C::kStageLoadBytes + Math::kTmaExtraBytes);
      Math::load_with_stage(smem.extra + stage * Math::kStageExtraBytes, scale_maps, full, m0, n0, kb, group);
      OperandA::template load<kMasked>(smem.a + stage * C::kSmemA, map_a, full, C::kSliceRowsA, C::kLoadedRowsA,
                                      multicast && C::kClusterN > 1, rank, k0, m0, group);
      OperandB::template load<kGroupedB>(smem.b + stage * C::kSmemB, map_b, full, C::kSliceRowsB, C::kBlockN,
                                        multicast && C::kClusterM > 1, rank, k0, n0, group);
    });
  }

  // The K loop of a tile whose K blocks are the problem's (every layout but k-grouped): unrolled over the stages
  // (over several rounds where the math's step depends on the K block's parity and the stage count would change
  // that parity from round to round), so stages and parities are compile-time constants.
  template <class Pipe>
  __device__ __forceinline__ static void k_loop(Math& math, Pipe& pipe) {
    using R = Ring<C>;
    constexpr uint32_t kPeriod = Math::kStepPeriod;
    constexpr uint32_t kRoundsPerIteration = kNumStages % kPeriod == 0 ? 1 : kPeriod;
    for (uint32_t round = 0; round + kRoundsPerIteration <= R::kFullRounds; round += kRoundsPerIteration) {
      pipe.new_round();
#pragma unroll
      for (uint32_t i = 0; i < kRoundsPerIteration * kNumStages; ++i)
        math.step(pipe, i % kNumStages, round + i / kNumStages, i % 2 == 1);
    }
    pipe.new_round();
    if constexpr (kRoundsPerIteration == 2 && R::kFullRounds % 2 == 1) {
#pragma unroll
      for (uint32_t i = 0; i < kNumStages; ++i) math.step(pipe, i, R::kFullRounds - 1, i % 2 == 1);
    }
#pragma unroll
    for (int i = 0; i < static_cast<int>(R::kLastRoundStages); ++i)
      math.step(pipe, i, R::kFullRounds, (R::kFullRounds * kNumStages + i) % 2 == 1);
    math.end_tile(pipe);
    ++pipe.tiles_before;
  }

  // The K loop of a k-grouped tile, whose expert's K blocks are known only on the device: rounds over the stages,
  // the last one cut short, each stage's parity kept by the pipe's RingPhases. Where the math's step depends on
  // the K block's parity, the number of stages is even, so that K block round * kNumStages + i has i's parity.
  template <class Pipe>
  __device__ __forceinline__ static void expert_k_loop(Math& math, Pipe& pipe, uint32_t k_blocks) {
    static_assert(Math::kStepPeriod == 1 || kNumStages % Math::kStepPeriod == 0, "rounds keep the blocks' parity");
    for (uint32_t round = 0; round * kNumStages < k_blocks; ++round) {
      pipe.new_round();
#pragma unroll
      for (uint32_t i = 0; i < kNumStages; ++i)
        if (round * kNumStages + i < k_blocks) math.step(pipe, i, round, i % 2 == 1);
    }
    math.end_tile(pipe);
    pipe.phases.end_tile(k_blocks);
  }

  // The math warpgroups: the K loop and the epilogue of every tile of the CTA.
  __device__ __forceinline__ static void consume(const GemmParams& params, Sched scheduler, const SharedMemory& smem,
                                                 const ptx::TensorMap* tmap_d, const ptx::TensorMap* tmap_c,
                                                 uint32_t rank) {
    ptx::setmaxnreg_increase<kMathRegisters>();
    constexpr bool kMasked = C::kLayout == Layout::Masked;
    constexpr bool kStackedD = kMasked || C::kLayout == Layout::KGrouped;  // D is [G, M, N]
    // Warp-uniform to ptxas (ptx::warp_uniform): the descriptors below then live in uniform registers, and the
    // branches on the warp (split-K's rows) do not make the K loop's code divergent.
    const uint32_t warpgroup = ptx::warp_uniform(threadIdx.x / 128);
    const uint32_t warp = ptx::warp_uniform(threadIdx.x / 32);
    // The part of the tile this warpgroup multiplies and stores; with alternate K blocks both multiply all of it,
    // each the K blocks of its parity, and warpgroup 0 alone stores it.
    const uint32_t tile_part = C::kAlternateKBlocks ? 0 : warpgroup;
    const uint32_t k_parity = C::kAlternateKBlocks ? warpgroup : 0;
    const bool stores = !C::kAlternateKBlocks || warpgroup == 0;
    const uint32_t wg_row = tile_part / C::kWarpgroupCols;
    const uint32_t wg_col = tile_part % C::kWarpgroupCols;
    const uint32_t lane = threadIdx.x % 32;
    // This thread's accumulator rows in the warpgroup's 64 rows: r and r + 8 (the wgmma fragment layout).
    const uint32_t row_in_wg = (threadIdx.x / 32 % 4) * 16 + lane / 4;
    constexpr uint32_t kRowBytes = C::kBlockK * C::kTile.operand_bytes;
    StagePipe<C, OperandA, OperandB, typename Math::Mma> pipe{
        smem.full,
        smem.empty,
        OperandA::descriptor(ptx::smem_address(smem.a) + wg_row * 64 * kRowBytes),
        OperandB::descriptor(ptx::smem_address(smem.b) + wg_col * C::kWarpgroupN * kRowBytes),
        0,
        lane};
    uint8_t* staging = smem.epilogue + tile_part * C::kEpilogueBytesPerWarpgroup;
    const CRingMemory c_ring{staging, smem.c_full + tile_part * C::kCSlots, tmap_c};
    Math math(params, smem.extra, wg_row, row_in_wg, k_parity);
    Transform transform;
    SplitKReduction<C> split_k(smem.sums, smem.split_k_barriers, rank);
    // Split-K: the rows of the warps another CTA of the cluster reduces are neither stored here nor read row by
    // row for the epilogue (INT8's scales; C comes in boxes of the warpgroup's rows).
    const bool stores_rows = C::kSplitK == 1 || split_k.owns(warp);

    Tile tile;
    while (scheduler.next(tile)) {
      const bool group_valid = tile.group < params.num_groups;
      const uint32_t group = group_valid ? tile.group : 0;
      const uint32_t m_base = tile.m_block * C::kBlockM + wg_row * 64;
      const uint32_t n_base = tile.n_block * C::kBlockN + wg_col * C::kWarpgroupN;
      const uint32_t row0 = m_base + row_in_wg, row1 = row0 + 8;
      const uint32_t rows = tile.rows;
      const uint32_t input_row0 = stores_rows ? row0 : params.m, input_row1 = stores_rows ? row1 : params.m;
      // The experts of this thread's two rows (contiguous layouts), read now for the epilogue, so that the
      // loads' latency hides behind the K loop.
      int32_t row_experts[2] = {-1, -1};
      if constexpr (is_contiguous(C::kLayout)) {
        row_experts[0] = scheduler.row_expert(row0, tile.group);
        row_experts[1] = scheduler.row_expert(row1, tile.group);
      }
      // D's row of the warpgroup's first row: the same, or in packed D the expert's row counted from its start in
      // D (a bad start lands past d_rows, where nothing is written).
      uint32_t d_m_base = m_base;
      if constexpr (C::kPackedD)
        d_m_base = m_base - scheduler.psum_start(group) + static_cast<uint32_t>(params.d_row_starts[group]);

      const EpilogueTile epilogue_tile{
          params, group, input_row0, input_row1, n_base, {m_base, n_base, group, 1 + warpgroup}, c_ring};

      // ---------------------------------------------------------------- the K loop
      if (tile.valid && stores) transform.begin_tile(epilogue_tile);
      math.begin_tile(group, n_base, tile.k_begin / C::kBlockK);
      if constexpr (C::kLayout == Layout::KGrouped) {
        expert_k_loop(math, pipe, ceil_div(tile.k_len, C::kBlockK));
      } else if constexpr (C::kAlternateKBlocks) {
        if (warpgroup == 0)
          AlternatingKBlocks<C>::template k_loop<0>(math, pipe);
        else
          AlternatingKBlocks<C>::template k_loop<1>(math, pipe);
      } else {
        k_loop(math, pipe);
      }

      // ---------------------------------------------------------------- the epilogue
      if constexpr (C::kSplitK > 1) split_k.reduce(math.acc, warp, m_base + warp % 4 * 16 < rows);
      if constexpr (C::kAlternateKBlocks)
        AlternatingKBlocks<C>::add_sums(math.acc, ptx::smem_address(smem.sums), warpgroup);
      if (!tile.valid || !stores) continue;  // a filler tile that kept a cluster partner company, or no part of D
      transform.apply(math.acc, epilogue_tile);
      // Grouped layouts write only their rows: rows past masked_m, and padding rows (m_indices -1) of the
      // contiguous layout, keep what D held; rows whose m_indices disagrees with the tile's expert (segments
      // not aligned to BLOCK_M, or an expert index out of range) become NaN rather than a wrong number.
      RowAction actions[2] = {row0 < params.m ? RowAction::Write : RowAction::Skip,
                              row1 < params.m ? RowAction::Write : RowAction::Skip};
      if constexpr (is_contiguous(C::kLayout)) {
        for (uint32_t half = 0; half < 2; ++half) {
          const int32_t expert = row_experts[half];
          actions[half] = expert == -1 ? RowAction::Skip
                          : group_valid && static_cast<uint32_t>(expert) == tile.group ? RowAction::Write
                                                                                        : RowAction::WriteNaN;
        }
      } else if constexpr (kMasked) {
        actions[0] = row0 < rows ? RowAction::Write : RowAction::Skip;
        actions[1] = row1 < rows ? RowAction::Write : RowAction::Skip;
      }
      if (!stores_rows) actions[0] = actions[1] = RowAction::Skip;
      if constexpr (C::kPackedD) {
        if (d_m_base + row_in_wg >= params.d_rows) actions[0] = RowAction::Skip;
        if (d_m_base + row_in_wg + 8 >= params.d_rows) actions[1] = RowAction::Skip;
      }
      // Rows past the end of A count as full: TMA clips them. So in the normal layout only a ragged N (or
      // split-K, whose CTAs store some warps' rows each) makes tiles partial, and its kernels have no code for
      // them otherwise. In packed D such rows would land on other experts' rows: no TMA store covers them.
      constexpr bool kPartialTiles = C::kLayout != Layout::Normal || C::kRaggedN || C::kSplitK > 1;
      const bool clipped_by_tma = C::kSplitK == 1 && (!C::kRaggedN || n_base + C::kWarpgroupN <= C::kShapeN);
      const bool past_a0 = !C::kPackedD && row0 >= params.m, past_a1 = !C::kPackedD && row1 >= params.m;
      const bool full_tile = ptx::named_barrier_and(
          1 + warpgroup, 128,
          clipped_by_tma && (actions[0] == RowAction::Write || past_a0) &&
              (actions[1] == RowAction::Write || past_a1));
      Epilogue<C>::staged(math.acc, staging, 1 + warpgroup, [&](uint32_t pass) {
        if (full_tile) {
          Epilogue<C>::store_to_tma(staging, 1 + warpgroup, pass, [&](const uint8_t* chunk, uint32_t chunk_col) {
            if constexpr (kStackedD)
              Epilogue<C>::tma_chunk(tmap_d, chunk, n_base + chunk_col, m_base, group);
            else
              Epilogue<C>::tma_chunk(tmap_d, chunk, n_base + chunk_col, d_m_base);
          });
        } else if (kPartialTiles && n_base < C::kShapeN) {
          const int64_t offset = group * params.d_group_stride + int64_t(d_m_base) * params.d_row_stride + n_base;
          void* d = static_cast<uint8_t*>(params.d) + offset * C::kOutputBytes;
          Epilogue<C>::store_rows(staging, pass, d, params.d_row_stride, C::kShapeN - n_base, actions);
        }
      });
    }
    if (threadIdx.x % 128 == 0) ptx::bulk_wait_group_all();
    if constexpr (C::kSplitK > 1) split_k.finish();
  }

  // expert_maps: the k-grouped FP8 kernels' per-expert maps of A and B, null for every other kernel.
  __device__ __forceinline__ static void run(const GemmParams& params, const ptx::TensorMap* tmap_a,
                                             const ptx::TensorMap* tmap_b, const ScaleMaps& scale_maps,
                                             const ptx::TensorMap* tmap_d, const ptx::TensorMap* tmap_c,
                                             const ExpertTensorMaps* expert_maps) {
    // The kernel has no static shared memory, and the dynamic one starts aligned.
    extern __shared__ __align__(1024) uint8_t smem_base[];
    if (ptx::smem_address(smem_base) % 1024 != 0) __trap();
    const SharedMemory smem(smem_base);

    if (threadIdx.x == kProducerThread) {
      if (expert_maps == nullptr) {  // otherwise tmap_a and tmap_b are not read
        ptx::prefetch_tensor_map(tmap_a);
        ptx::prefetch_tensor_map(tmap_b);
      }
      ptx::prefetch_tensor_map(tmap_d);
      if constexpr (C::kCSlots > 0) ptx::prefetch_tensor_map(tmap_c);
      if constexpr (Math::kTmaExtraBytes > 0) {
        ptx::prefetch_tensor_map(scale_maps.sfa);
        if (scale_maps.sfb != nullptr) ptx::prefetch_tensor_map(scale_maps.sfb);
      }
      for (uint32_t s = 0; s < kNumStages; ++s) {
        // The TMA thread's arrival (with the bytes it expects), and the math policy's helper warp's.
        ptx::mbarrier_init(&smem.full[s], 1 + Math::kHelperArrivals);
        // One arrival per math warp that multiplies the stage's K block, of every CTA of the multicast cluster: a
        // stage is refilled (possibly by a peer's multicast) only once all of them are done with it.
        ptx::mbarrier_init(&smem.empty[s], C::kWarpgroupsPerKBlock * 4 * C::kMulticastSize);
      }
      // One arrival, the TMA's expected bytes, per chunk of C's rings.
      for (uint32_t s = 0; s < C::kStoringWarpgroups * C::kCSlots; ++s) ptx::mbarrier_init(&smem.c_full[s], 1);
      if constexpr (C::kSplitK > 1) SplitKReduction<C>::init_barriers(smem.split_k_barriers, ptx::cluster_rank());
      ptx::fence_barrier_init();
    }
    // The peers' barriers must be initialised before any multicast or remote arrival reaches them
    // (fence_barrier_init above publishes them; nothing else needs ordering yet).
    if constexpr (C::kClusterSize > 1)
      ptx::cluster_sync_relaxed();
    else
      __syncthreads();
    // Launched to overlap the previous kernel of the stream (fgemm::set_pdl), the prologue above has run beside
    // its last tiles; nothing before this point reads or writes global memory (the tensor maps are kernel
    // parameters). The next kernel may start its own prologue on each SM this CTA leaves.
    ptx::wait_for_previous_grid();
    ptx::allow_next_grid();

    // A multicast cluster's CTAs take neighbouring tiles; a split-K cluster's take the same tiles, each its
    // split of their K.
    const uint32_t rank = C::kClusterSize > 1 ? ptx::cluster_rank() : 0;
    const uint32_t multicast_rank = C::kSplitK > 1 ? 0 : rank;
    const uint32_t split_k_begin = C::kSplitK > 1 ? rank * C::kNumKBlocks * C::kBlockK : 0;
    const int32_t* grouped_layout = C::kLayout == Layout::ContiguousPsum ? params.psum
                                    : C::kLayout == Layout::KGrouped     ? params.ks
                                                                         : params.m_indices;
    Sched scheduler(params.m, params.num_groups, grouped_layout, params.masked_m, multicast_rank,
                    blockIdx.x / C::kClusterSize, gridDim.x / C::kClusterSize, split_k_begin);

    if (threadIdx.x / 128 == C::kNumMathWarpgroups) {
      // ---------------------------------------------------------------- the producer
      ptx::setmaxnreg_decrease<kProducerRegisters>();
      if (threadIdx.x == kProducerThread)
        produce(scheduler, multicast_rank, smem, tmap_a, tmap_b, tmap_d, scale_maps, expert_maps);
      if (threadIdx.x / 32 == kProducerThread / 32 + 1)
        Math::help_producer(params, scheduler, smem.extra, smem.full, smem.empty);
    } else {
      consume(params, scheduler, smem, tmap_d, tmap_c, rank);
    }
    // A CTA leaves only when its peers no longer write to its shared memory or arrive on its barriers. In a
    // multicast cluster that is once every CTA is here, its accesses released. A split-K CTA needs no barrier:
    // its math threads have waited for every peer's last st.async into its slots and arrival on its barriers
    // (SplitKReduction::finish), and no peer reads its shared memory; what it sends itself lands in peers that
    // wait for it.
    if constexpr (C::kMulticastSize > 1) ptx::cluster_sync();
  }
};

}  // namespace fgemm::sm90
