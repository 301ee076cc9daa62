#include "cuda/gemm_sm90.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "core/log.hpp"
#include "core/settings.hpp"
#include "cuda/few_rows.hpp"
#include "cuda/heuristics.hpp"
#include "cuda/hopper_device.hpp"
#include "cuda/kernel_source.hpp"
#include "cuda/stream_order.hpp"
#include "cuda/tma.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/device.hpp"
#include "fgemm/gemm_params.cuh"
#include "jit/kernel_cache.hpp"
#include "jit/launch.hpp"

namespace fgemm::cuda {
namespace {

// FGEMM_PRINT_CONFIGS: print each configuration the heuristics choose, once per problem shape.
bool print_configs() {
  static const bool enabled = [] {
    const char* value = std::getenv("FGEMM_PRINT_CONFIGS");
    return value != nullptr && *value != '\0' && std::string(value) != "0";
  }();
  return enabled;
}

}  // namespace

double dram_bytes_per_cycle_of(const driver::DeviceProperties& properties) {
  if (properties.clock_khz <= 0 || properties.memory_clock_khz <= 0 || properties.memory_bus_width_bits <= 0)
    return 0;
  return 2.0 * properties.memory_clock_khz * (properties.memory_bus_width_bits / 8.0) / properties.clock_khz;
}

DeviceLimits gemm_device_limits(int device) {
  const auto& properties = driver::device_properties(device);
  DeviceLimits limits;
  limits.num_sms = properties.sm_count;
  limits.max_smem_per_block = properties.max_shared_memory_per_block_optin;
  // A device with faster DRAM than the H100 the models were fitted on gets its own figure: on an H200 the 16-bit
  // rows whose choice it changed ran 1.00-1.15x faster (docs/PERFORMANCE.md). Slower ones keep the fitted figure.
  limits.dram_bytes_per_cycle = std::max(limits.dram_bytes_per_cycle, dram_bytes_per_cycle_of(properties));
  const int requested = detail::requested_num_sms();
  if (requested > properties.sm_count)
    throw Error(ErrorKind::InvalidValue, "fgemm: set_num_sms(" + std::to_string(requested) + ") exceeds the " +
                                             std::to_string(properties.sm_count) + " SMs of device " +
                                             std::to_string(device));
  if (requested > 0) limits.num_sms = requested;
  return limits;
}

namespace {

// The forced configuration (force_config); block_m == 0 when there is none.
std::mutex g_forced_mutex;
BlockShape g_forced;

}  // namespace

BlockShape forced_config() {
  std::lock_guard<std::mutex> lock(g_forced_mutex);
  return g_forced;
}

jit::KernelSpec gemm_kernel_spec(const KernelConfig& config) {
  return jit::KernelSpec{kGemmKernelSymbol, gemm_kernel_source(config), config.smem_bytes()};
}

namespace {

// The heuristics' choice for a problem and its kernel's cache key, remembered so that a repeated call costs
// one lookup and builds no string.
struct Choice {
  KernelConfig config;
  std::string name;
};

const Choice& configuration_for(const ProblemSize& size, int device) {
  using Key = std::tuple<int, int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, int, int,
                         int, int, int, int, int, int, int, int>;
  struct KeyHash {
    std::size_t operator()(const Key& key) const {
      std::size_t hash = 0;
      std::apply([&](auto... field) { ((hash = hash * 1000003u ^ std::hash<std::int64_t>()(field)), ...); }, key);
      return hash;
    }
  };
  static std::mutex mutex;
  static std::unordered_map<Key, Choice, KeyHash> chosen;

  const int requested_sms = detail::requested_num_sms();
  const BlockShape forced = forced_config();
  // The kind (its input type, scaling, output and bias types), its storage orders and the psum form (and packed
  // D), in one field.
  const KernelShape& shape = size.shape;
  const int epilogue = ((static_cast<int>(shape.scaling) * 2 + shape.output_f16) * 2 + shape.has_bias) * 8 +
                       static_cast<int>(shape.bias_dtype);
  const int kind = (((epilogue * 8 + static_cast<int>(shape.ab_dtype)) * 2 + shape.a_mn_major) * 8 +
                    shape.b_mn_major * 4 + shape.psum * 2 + shape.sfa_by_tma) * 8 + shape.c_in_d * 4 +
                   shape.c_of_d_type * 2 + shape.packed_d;
  const Key key{device,
                requested_sms,
                size.m,
                size.num_groups,
                size.shape.n,
                size.shape.k,
                size.k_per_group,
                static_cast<int>(size.shape.layout),
                size.shape.output_f32,
                size.shape.has_c,
                kind,
                forced.block_m,
                forced.block_n,
                forced.cluster_m,
                forced.cluster_n,
                forced.split_k,
                forced.c_slots,
                forced.num_stages};
  std::lock_guard<std::mutex> lock(mutex);
  auto found = chosen.find(key);
  if (found != chosen.end()) return found->second;
  const KernelConfig config = choose_config(size, gemm_device_limits(device), forced);
  if (print_configs())
    detail::log(detail::LogLevel::Info, "fgemm: M=" + std::to_string(size.m) + " N=" + std::to_string(size.shape.n) +
                                            " K=" + std::to_string(size.shape.k) + " -> " + config.name() + ", " +
                                            std::to_string(config.num_sms) + " CTAs, " +
                                            std::to_string(config.smem_bytes()) + " bytes of shared memory");
  return chosen.emplace(key, Choice{config, config.name()}).first->second;
}

// Extents and strides as tensor maps take them.
std::uint64_t u64(std::int64_t value) { return static_cast<std::uint64_t>(value); }

// A matrix of scales as the TMA loads it (MN-major: K blocks x `rows`, a stack of them where `stacked`), in boxes
// of one K block's scales of a tile's rows; nullopt where the TMA cannot load it, and the kernel's helper warp
// reads it with its strides: rows not contiguous, a column or group's matrix not on a 16-byte boundary, or
// columns that overlap (broadcast strides). A stride the TMA never steps over (a single K block or group) is
// given as the smallest it accepts.
std::optional<MatrixBox> scales_for_tma(const float* scales, std::int64_t rows, std::int64_t row_stride,
                                        std::int64_t k_stride, std::int64_t k_blocks, bool stacked,
                                        std::int64_t groups, std::int64_t group_stride_given) {
  const std::int64_t column_stride = k_blocks == 1 ? (rows + 3) / 4 * 4 : k_stride;
  const std::int64_t group_stride = stacked && groups > 1 ? group_stride_given : column_stride * k_blocks;
  const bool rows_contiguous = row_stride == 1 || rows == 1;
  const bool aligned = reinterpret_cast<std::uintptr_t>(scales) % 16 == 0 && column_stride % 4 == 0 &&
                       group_stride % 4 == 0;
  const bool apart = column_stride >= rows && group_stride >= column_stride * k_blocks;
  if (!rows_contiguous || !aligned || !apart) return std::nullopt;
  return MatrixBox{scales, u64(k_blocks), u64(rows), u64(column_stride), 4, 1, 0, 0,
                   stacked ? u64(groups) : 0, u64(group_stride)};
}

// The boxes of the scales the TMA thread loads with each stage: sfa for the block recipe, sfa and sfb for the
// 1D1D recipe (both or neither: the helper warp copies them otherwise). Empty where the kind has none.
struct ScaleBoxes {
  std::optional<MatrixBox> sfa, sfb;
  bool by_tma() const { return sfa.has_value(); }
};

ScaleBoxes scale_boxes(const detail::GemmProblem& p) {
  // A k-grouped problem whose experts are all empty has no K block to scale.
  if ((p.scaling != detail::Scaling::Block && p.scaling != detail::Scaling::RowBlocks) || p.k == 0) return {};
  const bool masked = p.layout == detail::GemmLayout::Masked;
  ScaleBoxes boxes;
  boxes.sfa = scales_for_tma(p.sfa, p.m, p.sfa_m_stride, p.sfa_k_stride, p.k_blocks(), masked, p.num_groups,
                             p.sfa_group_stride);
  if (p.scaling == detail::Scaling::RowBlocks) {
    boxes.sfb = scales_for_tma(p.sfb, p.n, p.sfb_n_stride, p.sfb_k_stride, p.k_blocks(), false, 1, 0);
    if (!boxes.sfa || !boxes.sfb) boxes = {};
  }
  return boxes;
}

// The limits of the kernel beyond validation: TMA coordinates are 32-bit signed integers, and the kernel
// addresses sfb by 32-bit element offsets.
void check_kernel_limits(const detail::GemmProblem& p) {
  constexpr std::int64_t kMaxExtent = 0x7fffffff;
  if (p.m > kMaxExtent || p.n > kMaxExtent || p.k > kMaxExtent || p.d_rows > kMaxExtent)
    throw Error(ErrorKind::InvalidValue, "fgemm: on the GPU, M, N, K and the rows of a packed D must each be below "
                                         "2^31");
  if (p.scaling != detail::Scaling::Block) return;  // no scales per 128 x 128 block
  const std::int64_t sfb_groups = p.layout == detail::GemmLayout::Normal ? 1 : p.num_groups;
  const std::int64_t sfb_last = (sfb_groups - 1) * p.sfb_group_stride +
                                (p.n - 1) / detail::kScaleBlock * p.sfb_n_stride +
                                (p.k - 1) / detail::kScaleBlock * p.sfb_k_stride;
  if (sfb_last >= (std::int64_t(1) << 32))
    throw Error(ErrorKind::InvalidValue, "fgemm: on the GPU, argument 'sfb' must span fewer than 2^32 elements");
}

// FP32 accumulation in place (C is D) adds each tile to D with the TMA's reduction store at the tile's end, except
// where the normal layout's K loop is as short as kInPlaceThroughRingMaxK and M is past the decode regime
// (kDecodeMaxM): there D is read as a C of its own, through C's ring, whose loads start with the tile
// (epilogue_c_ring.cuh). On an H200 (docs/PERFORMANCE.md) the ring was 1.14x (BF16) and 1.20x (FP8 1D1D) faster at
// 32768 x 4096 x 512, and 1-14% slower at K = 1536 and more, where the ring takes the shared memory of stages.
// Decode-sized M keeps the reduction store: its D is a few rows, and a ring of C would cost the 8-bit decode tiles
// their alternate K blocks (TileConfig::alternate_k_blocks), which exclude one.
constexpr std::int64_t kInPlaceThroughRingMaxK = 512;

bool adds_by_reduction_store(const detail::GemmProblem& p) {
  const bool through_ring =
      p.layout == detail::GemmLayout::Normal && p.k <= kInPlaceThroughRingMaxK && p.m > kDecodeMaxM;
  return p.adds_to_d() && !through_ring;
}

// What the heuristics tune for: the masked layout for the expected rows per group, the others for their rows;
// the k-grouped layout for its experts' mean K (its kernels take any K).
ProblemSize problem_size(const detail::GemmProblem& p, bool scales_by_tma) {
  const bool masked = p.layout == detail::GemmLayout::Masked;
  const bool k_grouped = p.layout == detail::GemmLayout::KGrouped;
  ProblemSize size;
  size.m = masked ? std::min(p.expected_m, p.m) : p.m;
  size.num_groups = masked || k_grouped ? p.num_groups : 1;
  if (k_grouped) size.k_per_group = p.k / p.num_groups;
  size.shape = KernelShape{p.layout,
                           p.n,
                           k_grouped ? 0 : p.k,
                           p.d_dtype == DType::F32 || p.d_dtype == DType::I32,
                           p.c != nullptr && !adds_by_reduction_store(p),
                           adds_by_reduction_store(p),
                           p.c != nullptr && p.c_dtype != DType::F32,
                           scales_by_tma,
                           p.ab_dtype,
                           p.a_mn_major,
                           p.b_mn_major,
                           p.psum != nullptr,
                           p.d_row_starts != nullptr,
                           p.scaling,
                           p.d_dtype == DType::F16,
                           p.bias != nullptr,
                           p.bias_dtype};
  return size;
}

// The tensor maps the kernel reads A, B, the scales and C through and stores D with. A stacked operand (masked A
// and D, grouped B, k-grouped C and D) gets a 3-D map, one matrix per group. The scales' maps are not read where
// the math's helper warp copies them (no box). The k-grouped FP8 layout's operands have a map per expert
// (`experts`) instead of a and b.
struct GemmTensorMaps {
  driver::CUtensorMap a, b, sfa, sfb, d, c;
};

// An operand's map: K-major as rows x K in boxes of `box_rows` (the multicast slice) x one K block, with the 128-byte
// swizzle; MN-major as K x rows (the rows of M or N contiguous) in boxes of one K block x `box_rows` (a run of 64 or
// 32 elements, one swizzle row: operand_mn_major.cuh), swizzled by the run's bytes.
MatrixBox operand_box(const void* data, bool mn_major, std::int64_t rows, std::int64_t k, std::int64_t row_stride,
                      int element_bytes, std::uint32_t box_rows, std::uint32_t block_k, std::uint64_t groups,
                      std::int64_t group_stride) {
  if (mn_major) {
    const std::int32_t swizzle_bytes = static_cast<std::int32_t>(box_rows) * element_bytes;
    return {data,     u64(k),        u64(rows), u64(row_stride), element_bytes, block_k,
            box_rows, swizzle_bytes, groups,    u64(group_stride)};
  }
  return {data, u64(rows), u64(k), u64(row_stride), element_bytes, box_rows, block_k, 128, groups, u64(group_stride)};
}

// Expert g's blocks [M, ks[g]] of A and [N, ks[g]] of B, K-major, one after another in the k-grouped FP8 layout.
void encode_expert_maps(const detail::GemmProblem& p, const KernelConfig& config, sm90::ExpertTensorMaps& experts) {
  static_assert(sizeof(sm90::TensorMapBytes) == sizeof(driver::CUtensorMap), "a tensor map is 128 bytes");
  std::int64_t k_begin = 0;
  for (std::int64_t g = 0; g < p.num_groups; ++g) {
    // An expert with no K loads nothing; its maps get one value of K so that they can be encoded.
    const std::int64_t k = std::max<std::int64_t>(p.ks[g], 16);
    const void* a = p.ks[g] > 0 ? static_cast<const void*>(p.a + k_begin * p.m) : p.d;
    const void* b = p.ks[g] > 0 ? static_cast<const void*>(p.b + k_begin * p.n) : p.d;
    const driver::CUtensorMap map_a = make_tensor_map(
        operand_box(a, false, p.m, k, k, 1, std::uint32_t(config.slice_rows_a()), config.block_k(), 0, 0),
        "encoding the tensor map of an expert's block of 'a'");
    const driver::CUtensorMap map_b = make_tensor_map(
        operand_box(b, false, p.n, k, k, 1, std::uint32_t(config.slice_rows_b()), config.block_k(), 0, 0),
        "encoding the tensor map of an expert's block of 'b'");
    std::memcpy(&experts.a[g], &map_a, sizeof map_a);
    std::memcpy(&experts.b[g], &map_b, sizeof map_b);
    k_begin += p.ks[g];
  }
}

GemmTensorMaps tensor_maps(const detail::GemmProblem& p, const KernelConfig& config, const ScaleBoxes& scales,
                           sm90::ExpertTensorMaps& experts) {
  const bool masked = p.layout == detail::GemmLayout::Masked;
  const auto groups_of = [&](bool stacked) { return stacked ? u64(p.num_groups) : std::uint64_t(0); };
  const std::uint32_t block_k = config.block_k();
  const int element_bytes = config.operand_bytes;
  GemmTensorMaps maps{};
  // A k-grouped problem whose experts are all empty loads nothing, but its maps need an extent of K and an
  // address: one row of D's.
  const void* a = p.k > 0 ? static_cast<const void*>(p.a) : p.d;
  const void* b = p.k > 0 ? static_cast<const void*>(p.b) : p.d;
  const std::int64_t k = std::max<std::int64_t>(p.k, 1);
  if (config.expert_maps()) {
    encode_expert_maps(p, config, experts);
  } else {
    const int box_rows_a = p.a_mn_major ? config.mn_major_run_a() : config.slice_rows_a();
    const int box_rows_b = p.b_mn_major ? config.mn_major_run_b() : config.slice_rows_b();
    maps.a = make_tensor_map(operand_box(a, p.a_mn_major, p.m, k, p.a_row_stride, element_bytes,
                                         std::uint32_t(box_rows_a), block_k, groups_of(masked), p.a_group_stride),
                             "encoding the tensor map of 'a'");
    maps.b = make_tensor_map(operand_box(b, p.b_mn_major, p.n, k, p.b_row_stride, element_bytes,
                                         std::uint32_t(box_rows_b), block_k,
                                         groups_of(p.layout == detail::GemmLayout::Contiguous ||
                                                   p.layout == detail::GemmLayout::Masked),
                                         p.b_group_stride),
                             "encoding the tensor map of 'b'");
  }
  if (scales.sfa) {
    MatrixBox sfa = *scales.sfa;
    sfa.box_cols = std::uint32_t(config.block_m);
    maps.sfa = make_tensor_map(sfa, "encoding the tensor map of 'sfa'");
  }
  if (scales.sfb) {
    MatrixBox sfb = *scales.sfb;
    sfb.box_cols = std::uint32_t(config.block_n);
    maps.sfb = make_tensor_map(sfb, "encoding the tensor map of 'sfb'");
  }
  const std::uint32_t chunk_cols = config.chunk_bytes() / config.output_bytes;
  const std::int64_t d_rows = p.d_row_starts != nullptr ? p.d_rows : p.m;  // packed D has rows of its own
  maps.d = make_tensor_map({p.d, u64(d_rows), u64(p.n), u64(p.d_row_stride), config.output_bytes, 64, chunk_cols,
                            config.swizzle_d_bytes(), groups_of(masked || p.layout == detail::GemmLayout::KGrouped),
                            u64(p.d_group_stride)},
                           "encoding the tensor map of 'd'");
  // A C of its own, read in chunks of 64 rows x 128 bytes, one 128-byte swizzle row each (epilogue_c_ring.cuh).
  if (config.c_slots > 0)
    maps.c = make_tensor_map({p.c, u64(p.m), u64(p.n), u64(p.c_row_stride), config.c_bytes, 64,
                              std::uint32_t(config.c_chunk_cols()), 128,
                              groups_of(p.layout == detail::GemmLayout::KGrouped), u64(p.c_group_stride)},
                             "encoding the tensor map of 'c'");
  return maps;
}

sm90::GemmParams kernel_params(const detail::GemmProblem& p) {
  return {static_cast<std::uint32_t>(p.m), static_cast<std::uint32_t>(p.num_groups), p.sfa, p.sfa_m_stride,
          p.sfa_k_stride, p.sfa_group_stride, p.sfb, p.sfb_n_stride, p.sfb_k_stride, p.sfb_group_stride, p.bias,
          p.d, p.d_row_stride, p.d_group_stride, p.m_indices, p.psum, p.masked_m, p.ks_tensor, p.d_row_starts,
          static_cast<std::uint32_t>(p.d_rows)};
}

// The grid of a kernel: its configuration's, or, for clusters of more than two CTAs (split-K), no more clusters
// than the device runs at once, as its driver says (asked once per kernel): those the heuristics counted on
// may not all fit the GPCs.
unsigned grid_of(const KernelConfig& config, const jit::Kernel& kernel) {
  const auto cluster = static_cast<unsigned>(config.cluster_size());
  const auto grid = static_cast<unsigned>(config.num_sms);
  if (cluster <= 2) return grid;
  static std::mutex mutex;
  static std::unordered_map<const jit::Kernel*, unsigned> most_clusters;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = most_clusters.find(&kernel);
  if (found == most_clusters.end()) {
    const jit::LaunchShape shape{{cluster, 1, 1}, {static_cast<unsigned>(config.num_threads()), 1, 1}, {cluster, 1, 1}};
    const int clusters = jit::max_active_clusters(kernel, shape);
    if (print_configs())
      detail::log(detail::LogLevel::Info, "fgemm: " + kernel.name + " runs at most " + std::to_string(clusters) +
                                              " clusters of " + std::to_string(cluster) + " CTAs at once");
    found = most_clusters.emplace(&kernel, static_cast<unsigned>(std::max(clusters, 1))).first;
  }
  return std::min(grid, found->second * cluster);
}

}  // namespace

namespace {

// Experts [first, first + count) of a k-grouped problem, as a problem of its own.
detail::GemmProblem expert_range(const detail::GemmProblem& p, std::int64_t first, std::int64_t count) {
  detail::GemmProblem part = p;
  const std::int64_t k_before = std::accumulate(p.ks.begin(), p.ks.begin() + first, std::int64_t(0));
  part.ks.assign(p.ks.begin() + first, p.ks.begin() + first + count);
  part.k = std::accumulate(part.ks.begin(), part.ks.end(), std::int64_t(0));
  part.num_groups = count;
  part.a = p.a + k_before * p.m;
  part.b = p.b + k_before * p.n;
  part.sfa = p.sfa + k_before / detail::kScaleBlock * p.sfa_k_stride;
  part.sfb = p.sfb + k_before / detail::kScaleBlock * p.sfb_k_stride;
  part.d = static_cast<std::uint8_t*>(p.d) + first * p.d_group_stride * std::int64_t(dtype_size(p.d_dtype));
  if (p.c != nullptr)
    part.c = static_cast<const std::uint8_t*>(p.c) + first * p.c_group_stride * std::int64_t(dtype_size(p.c_dtype));
  part.ks_tensor = p.ks_tensor + first;
  return part;
}

}  // namespace

void gemm(const detail::GemmProblem& p, Stream stream) {
  const bool expert_blocks = p.layout == detail::GemmLayout::KGrouped && !p.a_mn_major;
  if (expert_blocks && p.num_groups > std::int64_t(sm90::kExpertMapsPerLaunch)) {
    // The per-expert tensor maps of one launch are its kernel parameters: launch once per so many experts.
    for (std::int64_t first = 0; first < p.num_groups; first += sm90::kExpertMapsPerLaunch)
      gemm(expert_range(p, first, std::min<std::int64_t>(sm90::kExpertMapsPerLaunch, p.num_groups - first)),
           stream);
    return;
  }
  check_kernel_limits(p);
  const int device = p.device.index;
  use_hopper_device(device);
  const ScaleBoxes scales = scale_boxes(p);
  const ProblemSize size = problem_size(p, scales.by_tma());
  if (const std::optional<FewRowsConfig> few_rows =
          few_rows_config(size, driver::device_properties(device).sm_count, forced_config())) {
    if (print_configs())
      detail::log(detail::LogLevel::Info, "fgemm: M=" + std::to_string(p.m) + " N=" + std::to_string(p.n) +
                                              " K=" + std::to_string(p.k) + " -> " + few_rows->name());
    few_rows_gemm(p, *few_rows, stream);
    return;
  }
  const Choice& choice = configuration_for(size, device);
  const KernelConfig& config = choice.config;
  const jit::Kernel& kernel = jit::get_kernel(device, choice.name, [&config] { return gemm_kernel_spec(config); });
  // Written (8 KB) only for the kernels that take them: every other call leaves them as they are.
  sm90::ExpertTensorMaps experts;
  GemmTensorMaps maps = tensor_maps(p, config, scales, experts);
  sm90::GemmParams params = kernel_params(p);
  // The driver reads as many of these as the kernel has parameters: the per-expert maps only where it takes them.
  void* args[] = {&params, &maps.a, &maps.b, &maps.sfa, &maps.sfb, &maps.d, &maps.c, &experts};
  const auto cluster = static_cast<unsigned>(config.cluster_size());
  jit::launch(kernel,
              jit::LaunchShape{{grid_of(config, kernel), 1, 1},
                               {static_cast<unsigned>(config.num_threads()), 1, 1},
                               {cluster, 1, 1}},
              args, static_cast<driver::CUstream>(stream), kernel_stream_order());
}

void force_config(int block_m, int block_n, int cluster_m, int cluster_n, int split_k, int c_slots, int num_stages) {
  if (block_m < 0 || block_n < 0 || cluster_m < 0 || cluster_n < 0 || split_k < 0 || c_slots < 0 || num_stages < 0 ||
      (block_m == 0) != (block_n == 0) || (cluster_m == 0) != (cluster_n == 0))
    throw Error(ErrorKind::InvalidValue, "fgemm: a forced configuration has positive sizes, or zeros");
  std::lock_guard<std::mutex> lock(g_forced_mutex);
  g_forced = BlockShape{block_m, block_n, cluster_m, cluster_n, split_k, c_slots, num_stages};
}

int device_sm_count() {
  if (driver::device_count() == 0) return 0;
  return driver::device_properties(0).sm_count;
}

}  // namespace fgemm::cuda
