// The CPU backend's INT8 GEMM on every INT8 kernel set this CPU has, held to the scalar reference (exact sums,
// the recipe in FP64) in every recipe and M layout, on problems built directly as validation builds them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/bf16.hpp"
#include "cpu/cpu_gemm.hpp"
#include "cpu/f16.hpp"
#include "cpu/int8_gemm.hpp"
#include "cpu/isa.hpp"
#include "cpu/reference.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::cpu {

// Found by argument-dependent lookup, so it must live in Int8Isa's own namespace.
void PrintTo(Int8Isa isa, std::ostream* out) { *out << isa_name(isa); }

namespace {

using detail::GemmLayout;
using detail::GemmProblem;
using detail::Scaling;

constexpr std::uint32_t kPoison32 = 0x7FBADBADu;  // an FP32 NaN no computation produces (and an INT32 no case sums to)
constexpr std::uint16_t kPoison16 = 0x7FBAu;      // a BF16 NaN and an FP16 NaN
constexpr std::int8_t kPadding = 127;             // A's and B's bytes past K: reading them would change the sums

// The values of A and B.
enum class Values {
  Random,    // uniform over [-128, 127]
  Extremes,  // -128 or 127 at random
  Minimum,   // -128 everywhere: every product 2^14, the largest
};

struct Case {
  std::string name;
  Scaling scaling = Scaling::RowColumn;
  GemmLayout layout = GemmLayout::Normal;
  std::int64_t m = 0;  // M, M_sum or M_max
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType d_dtype = DType::BF16;
  bool with_c = false;
  std::optional<DType> bias;       // its type, if the case has one
  bool per_tensor_scales = false;  // RowColumn: one sfa, one sfb per expert (zero strides)
  bool slices = false;             // every operand a slice of a wider tensor with padded rows
  Values values = Values::Random;
  std::int64_t groups = 1;
  bool psum = false;                      // contiguous: group_array holds prefix sums rather than m_indices
  std::vector<std::int32_t> group_array;  // m_indices or psum (contiguous) or masked_m (masked)
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::int64_t ceil_div(std::int64_t value, std::int64_t divisor) { return (value + divisor - 1) / divisor; }

std::int64_t element_bytes(DType dtype) { return static_cast<std::int64_t>(dtype_size(dtype)); }

// D's buffer: a poisoned row before and after the groups' rows, each row d_row_stride elements.
struct DBuffer {
  DType dtype;
  std::vector<unsigned char> bytes;

  std::uint32_t bits(std::int64_t i) const {
    if (element_bytes(dtype) == 2) {
      std::uint16_t half;
      std::memcpy(&half, bytes.data() + 2 * i, 2);
      return half;
    }
    std::uint32_t word;
    std::memcpy(&word, bytes.data() + 4 * i, 4);
    return word;
  }
  bool poisoned(std::int64_t i) const { return bits(i) == (element_bytes(dtype) == 2 ? kPoison16 : kPoison32); }
  double value(std::int64_t i) const {
    const std::uint32_t b = bits(i);
    switch (dtype) {
      case DType::BF16: return float_from_bf16(static_cast<std::uint16_t>(b));
      case DType::F16: return float_from_f16(static_cast<std::uint16_t>(b));
      case DType::I32: return static_cast<std::int32_t>(b);
      default: {
        float f;
        std::memcpy(&f, &b, 4);
        return f;
      }
    }
  }
};

// The operands of one case in host memory. Bytes of A and B past K hold kPadding, and scale and C elements
// that no view reaches hold NaN, so that reading past an operand would show in D.
class Operands {
 public:
  explicit Operands(const Case& c) : case_(c), random_(static_cast<std::uint32_t>(std::hash<std::string>()(c.name))) {
    a_groups_ = c.layout == GemmLayout::Masked ? c.groups : 1;
    b_groups_ = c.layout == GemmLayout::Normal ? 1 : c.groups;
    const std::int64_t pad = c.slices ? 16 : 0;
    a_row_stride_ = b_row_stride_ = c.k + pad;
    a_ = int8_matrix(a_groups_ * c.m, a_row_stride_);
    b_ = int8_matrix(b_groups_ * c.n, b_row_stride_);
    fill_scales();
    d_row_stride_ = c.slices ? round_up(c.n, 8) + 8 : c.n;
    if (c.with_c) {
      c_.assign(c.m * d_row_stride_, std::nanf(""));
      std::uniform_real_distribution<float> value(-100.0f, 100.0f);
      for (std::int64_t r = 0; r < c.m; ++r)
        for (std::int64_t j = 0; j < c.n; ++j) c_[r * d_row_stride_ + j] = value(random_);
    }
    if (c.bias) fill_bias(*c.bias);
  }

  DBuffer poisoned_d() const {
    DBuffer d{case_.d_dtype, std::vector<unsigned char>(d_elements() * element_bytes(case_.d_dtype))};
    for (std::int64_t i = 0; i < d_elements(); ++i) {
      if (element_bytes(d.dtype) == 2)
        std::memcpy(d.bytes.data() + 2 * i, &kPoison16, 2);
      else
        std::memcpy(d.bytes.data() + 4 * i, &kPoison32, 4);
    }
    return d;
  }

  // The problem as validation would build it, with D in `d`.
  GemmProblem problem(DBuffer& d) const {
    const Case& c = case_;
    GemmProblem p;
    p.layout = c.layout;
    p.ab_dtype = DType::I8;
    p.scaling = c.scaling;
    p.m = c.m, p.n = c.n, p.k = c.k;
    p.num_groups = c.groups;
    p.expected_m = c.m;
    p.a = reinterpret_cast<const std::uint8_t*>(a_.data());
    p.a_row_stride = a_row_stride_;
    p.a_group_stride = a_groups_ > 1 ? c.m * a_row_stride_ : 0;
    p.b = reinterpret_cast<const std::uint8_t*>(b_.data());
    p.b_row_stride = b_row_stride_;
    p.b_group_stride = b_groups_ > 1 ? c.n * b_row_stride_ : 0;
    if (c.scaling != Scaling::None) {
      p.sfa = sfa_.data(), p.sfa_m_stride = sfa_m_stride_, p.sfa_k_stride = sfa_k_stride_;
      p.sfa_group_stride = a_groups_ > 1 ? sfa_group_stride_ : 0;
      p.sfb = sfb_.data(), p.sfb_n_stride = sfb_n_stride_, p.sfb_k_stride = sfb_k_stride_;
      p.sfb_group_stride = sfb_group_stride_;
    }
    p.d = d.bytes.data() + d_row_stride_ * element_bytes(c.d_dtype);  // past the poisoned row before
    p.d_dtype = c.d_dtype;
    p.d_row_stride = d_row_stride_;
    p.d_group_stride = a_groups_ > 1 ? c.m * d_row_stride_ : 0;
    if (c.with_c) p.c = c_.data(), p.c_row_stride = d_row_stride_;
    if (c.bias) p.bias = bias_.data(), p.bias_dtype = *c.bias;
    if (c.layout == GemmLayout::Contiguous) (c.psum ? p.psum : p.m_indices) = c.group_array.data();
    if (c.layout == GemmLayout::Masked) p.masked_m = c.group_array.data();
    return p;
  }

  std::int64_t d_elements() const { return (a_groups_ * case_.m + 2) * d_row_stride_; }
  std::int64_t d_index(std::int64_t group, std::int64_t row, std::int64_t col) const {
    return (group * case_.m + row + 1) * d_row_stride_ + col;
  }
  std::int64_t d_groups() const { return a_groups_; }

  // The expert whose B row `row` of group `group` multiplies, or -1 for a row the call must not touch
  // (padding rows, masked-off rows).
  std::int64_t expert(std::int64_t group, std::int64_t row) const {
    const Case& c = case_;
    switch (c.layout) {
      case GemmLayout::Normal: return 0;
      case GemmLayout::Contiguous:
        if (!c.psum) return c.group_array[row];
        for (std::int64_t g = 0; g < c.groups; ++g)
          if (row >= (g == 0 ? 0 : round_up(c.group_array[g - 1], 128)) && row < c.group_array[g]) return g;
        return -1;
      case GemmLayout::Masked: return row < c.group_array[group] ? group : -1;
      case GemmLayout::KGrouped: break;
    }
    return -1;
  }

  // |C| + |bias| + the magnitude of the scaled sums (|sfa sfb P| over all of K, or the sum of each K block's
  // |sfa sfb P_kb|) of one element of D: the scale of the rounding errors of the FP32 steps.
  double magnitude(std::int64_t group, std::int64_t row, std::int64_t col) const {
    const Case& c = case_;
    const std::int64_t e = expert(group, row);
    const std::int8_t* a = a_.data() + (group * c.m + row) * a_row_stride_;
    const std::int8_t* b = b_.data() + (e * c.n + col) * b_row_stride_;
    const auto block_sum = [&](std::int64_t k0, std::int64_t k1) {
      std::int64_t sum = 0;
      for (std::int64_t k = k0; k < k1; ++k) sum += a[k] * b[k];
      return sum;
    };
    double total =
        (c.with_c ? std::fabs(c_[row * d_row_stride_ + col]) : 0.0) + (c.bias ? std::fabs(bias_value(col)) : 0.0);
    const float* sfa = sfa_.data() + group * sfa_group_stride_ + row * sfa_m_stride_;
    if (c.scaling == Scaling::RowColumn)
      return total + std::fabs(double{*sfa} * sfb_[e * sfb_group_stride_ + col * sfb_n_stride_] *
                               static_cast<std::int32_t>(static_cast<std::uint32_t>(block_sum(0, c.k))));  // as INT32
    const float* sfb = sfb_.data() + e * sfb_group_stride_ + col / 128 * sfb_n_stride_;
    for (std::int64_t kb = 0; kb < ceil_div(c.k, 128); ++kb)
      total += std::fabs(double{sfa[kb * sfa_k_stride_]} * sfb[kb * sfb_k_stride_] *
                         static_cast<double>(block_sum(128 * kb, std::min(c.k, 128 * kb + 128))));
    return total;
  }

 private:
  // `rows` rows of K values at `row_stride`, kPadding past K.
  std::vector<std::int8_t> int8_matrix(std::int64_t rows, std::int64_t row_stride) {
    std::vector<std::int8_t> matrix(rows * row_stride, kPadding);
    std::uniform_int_distribution<int> byte(-128, 127), coin(0, 1);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < case_.k; ++k) {
        const int value = case_.values == Values::Random     ? byte(random_)
                          : case_.values == Values::Extremes ? (coin(random_) ? 127 : -128)
                                                             : -128;
        matrix[r * row_stride + k] = static_cast<std::int8_t>(value);
      }
    return matrix;
  }

  // Scales of a magnitude that keeps D within FP16's range whatever the values.
  void fill_scales() {
    const Case& c = case_;
    std::uniform_real_distribution<float> scale(0.5f / 256, 2.0f / 256);
    const std::int64_t k_blocks = ceil_div(c.k, 128), n_blocks = ceil_div(c.n, 128);
    std::int64_t sfa_rows = 0, sfa_cols = 0, sfb_rows = 0, sfb_cols = 0;  // per group
    if (c.scaling == Scaling::RowColumn && c.per_tensor_scales) {
      sfb_group_stride_ = 1, sfa_rows = sfa_cols = sfb_rows = sfb_cols = 1;
    } else if (c.scaling == Scaling::RowColumn) {
      sfa_m_stride_ = 1, sfb_n_stride_ = 1, sfa_rows = c.m, sfb_rows = c.n, sfa_cols = sfb_cols = 1;
      sfa_group_stride_ = c.m, sfb_group_stride_ = c.n;
    } else if (c.scaling == Scaling::Block) {
      sfa_k_stride_ = sfb_k_stride_ = 1;
      sfa_m_stride_ = k_blocks + (c.slices ? 3 : 0), sfb_n_stride_ = k_blocks + (c.slices ? 1 : 0);
      sfa_group_stride_ = c.m * sfa_m_stride_, sfb_group_stride_ = n_blocks * sfb_n_stride_;
      sfa_rows = c.m, sfa_cols = k_blocks, sfb_rows = n_blocks, sfb_cols = k_blocks;
    }
    const auto fill = [&](std::vector<float>& values, std::int64_t groups, std::int64_t group_stride, std::int64_t rows,
                          std::int64_t row_stride, std::int64_t cols, std::int64_t col_stride) {
      values.assign(std::max<std::int64_t>(1, groups * std::max<std::int64_t>(group_stride, rows * cols)) + 8,
                    std::nanf(""));
      for (std::int64_t g = 0; g < groups; ++g)
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t l = 0; l < cols; ++l)
            values[g * group_stride + r * row_stride + l * col_stride] = scale(random_);
    };
    fill(sfa_, a_groups_, sfa_group_stride_, sfa_rows, sfa_m_stride_, sfa_cols, sfa_k_stride_);
    fill(sfb_, b_groups_, sfb_group_stride_, sfb_rows, sfb_n_stride_, sfb_cols, sfb_k_stride_);
  }

  // Bias values in [-100, 100], exact in the bias's type.
  void fill_bias(DType dtype) {
    std::uniform_real_distribution<float> value(-100.0f, 100.0f);
    bias_.assign(case_.n * element_bytes(dtype), 0);
    for (std::int64_t j = 0; j < case_.n; ++j) {
      const float v = value(random_);
      if (dtype == DType::F32) {
        std::memcpy(bias_.data() + 4 * j, &v, 4);
        continue;
      }
      const std::uint16_t bits = dtype == DType::BF16 ? bf16_from_float(v) : f16_from_float(v);
      std::memcpy(bias_.data() + 2 * j, &bits, 2);
    }
  }

  double bias_value(std::int64_t col) const {
    if (*case_.bias == DType::F32) {
      float v;
      std::memcpy(&v, bias_.data() + 4 * col, 4);
      return v;
    }
    std::uint16_t bits;
    std::memcpy(&bits, bias_.data() + 2 * col, 2);
    return *case_.bias == DType::BF16 ? float_from_bf16(bits) : float_from_f16(bits);
  }

  Case case_;
  std::mt19937 random_;
  std::int64_t a_groups_ = 1, b_groups_ = 1, a_row_stride_ = 0, b_row_stride_ = 0, d_row_stride_ = 0;
  std::int64_t sfa_m_stride_ = 0, sfa_k_stride_ = 0, sfa_group_stride_ = 0;
  std::int64_t sfb_n_stride_ = 0, sfb_k_stride_ = 0, sfb_group_stride_ = 0;
  std::vector<std::int8_t> a_, b_;
  std::vector<float> sfa_, sfb_, c_;
  std::vector<unsigned char> bias_;
};

// Every element the call computes matches the reference (exactly for INT32 D; for the scaled recipes within
// the rounding errors of the FP32 steps, and one unit in the last place of a 16-bit D); every other element
// of D's buffer (padding rows, masked-off rows, the padding of a wider tensor, the rows before and after)
// still holds the poison.
void expect_matches_reference(const Operands& ops, const Case& c, const DBuffer& fast, const DBuffer& reference) {
  // RowColumn rounds sfa * sfb, float(P), their product, and the sums with bias and C; Block rounds sfa * sfb,
  // the product and the sum of each K block, then the sums with bias and C. Each rounding errs by at most 2^-24
  // of the magnitude.
  const std::int64_t roundings = c.scaling == Scaling::Block ? 3 * ceil_div(c.k, 128) + 2 : 5;
  const double relative_bound = 2.0 * static_cast<double>(roundings) * std::ldexp(1.0, -24);
  const int last_place_bits = c.d_dtype == DType::BF16 ? 7 : c.d_dtype == DType::F16 ? 10 : 23;
  std::vector<bool> inside(ops.d_elements(), false);
  int failures = 0;
  for (std::int64_t g = 0; g < ops.d_groups(); ++g)
    for (std::int64_t r = 0; r < c.m; ++r)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const std::int64_t i = ops.d_index(g, r, j);
        inside[i] = true;
        if (ops.expert(g, r) < 0) {
          if (!fast.poisoned(i) && failures++ < 8)
            ADD_FAILURE() << "wrote D[" << g << ", " << r << ", " << j << "], a row the call must skip";
          continue;
        }
        const double expected = reference.value(i), actual = fast.value(i);
        double tolerance = 0.0;
        if (c.scaling != Scaling::None) {
          const double largest = std::max(std::fabs(expected), std::fabs(actual));
          tolerance = relative_bound * ops.magnitude(g, r, j);
          if (largest > 0) tolerance += std::ldexp(1.0, std::max(std::ilogb(largest), -14) - last_place_bits);
        }
        if (!(std::fabs(actual - expected) <= tolerance) && failures++ < 8)
          ADD_FAILURE() << "D[" << g << ", " << r << ", " << j << "] = " << actual << ", reference " << expected
                        << ", tolerance " << tolerance;
      }
  for (std::int64_t i = 0; i < ops.d_elements(); ++i)
    if (!inside[i] && !fast.poisoned(i) && failures++ < 8)
      ADD_FAILURE() << "wrote element " << i << " of D's buffer, outside D";
  EXPECT_EQ(failures, 0);
}

const char* recipe_name(Scaling scaling) {
  return scaling == Scaling::None ? "exact" : scaling == Scaling::RowColumn ? "rowcol" : "block";
}

const char* type_name(DType dtype) {
  return dtype == DType::BF16 ? "bf16" : dtype == DType::F16 ? "f16" : dtype == DType::F32 ? "f32" : "i32";
}

// A normal problem; D INT32 without scales, else `d_dtype`.
Case normal(Scaling scaling, std::int64_t m, std::int64_t n, std::int64_t k, DType d_dtype = DType::BF16) {
  Case c;
  c.scaling = scaling;
  c.m = m, c.n = n, c.k = k;
  c.d_dtype = scaling == Scaling::None ? DType::I32 : d_dtype;
  c.name = std::string(recipe_name(scaling)) + "_m" + std::to_string(m) + "_n" + std::to_string(n) + "_k" +
           std::to_string(k) + "_" + type_name(c.d_dtype);
  return c;
}

Case with_c(Case c) {
  c.with_c = true;
  c.name += "_c";
  return c;
}

Case with_bias(Case c, DType dtype) {
  c.bias = dtype;
  c.name += std::string("_bias") + type_name(dtype);
  return c;
}

Case sliced(Case c) {
  c.slices = true;
  c.name += "_slices";
  return c;
}

Case per_tensor(Case c) {
  c.per_tensor_scales = true;
  c.name += "_pertensor";
  return c;
}

Case with_values(Case c, Values values) {
  c.values = values;
  c.name += values == Values::Extremes ? "_extremes" : "_minimum";
  return c;
}

// Experts of rows in runs: {expert, rows} pairs, expert -1 for padding.
Case contiguous(Scaling scaling, std::vector<std::pair<int, int>> runs, std::int64_t groups, std::int64_t n,
                std::int64_t k, const std::string& name) {
  Case c = normal(scaling, 0, n, k);
  c.layout = GemmLayout::Contiguous;
  c.groups = groups;
  for (auto [expert, rows] : runs) c.group_array.insert(c.group_array.end(), rows, expert);
  c.m = static_cast<std::int64_t>(c.group_array.size());
  c.name = "contiguous_" + name + "_" + normal(scaling, c.m, n, k).name;
  return c;
}

// Expert g's rows run from psum[g - 1] rounded up to 128 to psum[g]; rows past the last sum are padding.
Case contiguous_psum(Scaling scaling, std::vector<std::int32_t> psum, std::int64_t m_sum, std::int64_t n,
                     std::int64_t k) {
  Case c = normal(scaling, m_sum, n, k);
  c.layout = GemmLayout::Contiguous;
  c.psum = true;
  c.groups = static_cast<std::int64_t>(psum.size());
  c.group_array = std::move(psum);
  c.name = "contiguous_psum_" + c.name;
  return c;
}

Case masked(Scaling scaling, std::vector<std::int32_t> masked_m, std::int64_t m_max, std::int64_t n, std::int64_t k) {
  Case c = normal(scaling, m_max, n, k);
  c.layout = GemmLayout::Masked;
  c.groups = static_cast<std::int64_t>(masked_m.size());
  c.name = "masked";
  for (auto rows : masked_m) c.name += "_" + std::to_string(rows);
  c.name += "_" + normal(scaling, m_max, n, k).name;
  c.group_array = std::move(masked_m);
  return c;
}

constexpr Scaling kRecipes[] = {Scaling::None, Scaling::RowColumn, Scaling::Block};

std::vector<Case> cases() {
  std::vector<Case> all;
  // Rows around the kernels' panels (AMX row groups of 16, VNNI panels of 7, AVX2 of 4); N a multiple of neither
  // 16 nor 64, across sfb's blocks of 128 columns and the work units' strips of 256; K a multiple of 16 only,
  // with 1040 beyond two packed spans of 512. 520 rows and 1100 columns make units of two chunks of rows.
  const std::int64_t shapes[][3] = {{1, 1, 16},      {1, 200, 400},  {15, 72, 48},    {16, 64, 128},
                                    {17, 40, 144},   {33, 130, 256}, {100, 200, 400}, {257, 136, 528},
                                    {300, 72, 1040}, {60, 600, 144}, {520, 1100, 144}};
  for (Scaling recipe : kRecipes)
    for (const auto& s : shapes) all.push_back(normal(recipe, s[0], s[1], s[2]));
  for (Scaling recipe : {Scaling::RowColumn, Scaling::Block}) {
    all.push_back(with_bias(with_c(normal(recipe, 45, 100, 272, DType::F32)), DType::F32));
    all.push_back(with_bias(with_c(normal(recipe, 130, 40, 144, DType::F16)), DType::F16));
    all.push_back(with_bias(normal(recipe, 64, 200, 208, DType::BF16), DType::BF16));
    all.push_back(with_bias(sliced(normal(recipe, 50, 100, 400, DType::F16)), DType::F32));
    all.push_back(sliced(with_c(normal(recipe, 20, 264, 1040, DType::F32))));
  }
  all.push_back(sliced(normal(Scaling::None, 70, 100, 144)));
  all.push_back(per_tensor(normal(Scaling::RowColumn, 40, 72, 400, DType::F32)));
  for (Scaling recipe : kRecipes) {
    all.push_back(with_values(normal(recipe, 33, 72, 400, DType::F32), Values::Extremes));
    all.push_back(with_values(normal(recipe, 20, 40, 1040, DType::F16), Values::Minimum));
  }
  // K = 131088 of products 2^14: the sums reach 2^31 + 2^18, past INT32, and wrap as torch._int_mm's do.
  all.push_back(with_values(normal(Scaling::None, 3, 33, 131088), Values::Minimum));
  all.push_back(with_values(normal(Scaling::RowColumn, 3, 33, 131088, DType::F32), Values::Minimum));

  // Runs of any length (the CPU needs no alignment), padding rows among them; experts out of order.
  const std::vector<std::pair<int, int>> ragged = {{1, 3}, {0, 40}, {-1, 5}, {2, 1}, {0, 17}, {1, 70}, {-1, 14}};
  const std::vector<std::pair<int, int>> aligned = {{2, 100}, {-1, 28}, {0, 128}, {-1, 128}, {1, 78}, {-1, 50}};
  for (Scaling recipe : kRecipes) {
    all.push_back(contiguous(recipe, ragged, 3, 136, 272, "ragged"));
    all.push_back(contiguous(recipe, aligned, 3, 72, 144, "aligned"));
    // Experts 0 [0, 100), 1 none, 2 [128, 300), 3 [384, 385); the rest padding.
    all.push_back(contiguous_psum(recipe, {100, 128, 300, 385}, 420, 100, 144));
    all.push_back(masked(recipe, {70, 0, 33}, 70, 40, 208));
    all.push_back(masked(recipe, {1, 17, 16}, 20, 130, 1040));
  }
  all.push_back(per_tensor(masked(Scaling::RowColumn, {5, 30}, 32, 72, 144)));
  all.push_back(per_tensor(contiguous(Scaling::RowColumn, ragged, 3, 40, 400, "ragged")));
  // Nothing to compute: the call must return and leave D as it was.
  all.push_back(masked(Scaling::Block, {0, 0}, 16, 72, 16));
  all.push_back(contiguous(Scaling::None, {{-1, 40}}, 2, 72, 16, "all_padding"));
  return all;
}

class Int8FastPath : public testing::TestWithParam<std::tuple<Int8Isa, Case>> {};

TEST_P(Int8FastPath, MatchesReference) {
  const auto& [isa, c] = GetParam();
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU lacks the instruction set " << isa_name(isa);
  const Operands ops(c);
  DBuffer fast = ops.poisoned_d(), reference = ops.poisoned_d();
  int8_gemm(ops.problem(fast), isa);
  reference_gemm(ops.problem(reference));
  expect_matches_reference(ops, c, fast, reference);
}

INSTANTIATE_TEST_SUITE_P(cpu, Int8FastPath,
                         testing::Combine(testing::ValuesIn(kAllInt8Isas), testing::ValuesIn(cases())),
                         [](const testing::TestParamInfo<Int8FastPath::ParamType>& info) {
                           return std::string(isa_name(std::get<0>(info.param))) + "_" + std::get<1>(info.param).name;
                         });

// cpu::gemm hands INT8 problems to the INT8 path (with the kernel set of FGEMM_CPU_ISA, or the best).
TEST(Int8Gemm, CpuGemmRunsInt8Problems) {
  for (Scaling recipe : kRecipes) {
    Case c = normal(recipe, 40, 72, 400, DType::F32);
    if (recipe != Scaling::None) c = with_bias(c, DType::F32);
    const Operands ops(c);
    DBuffer fast = ops.poisoned_d(), reference = ops.poisoned_d();
    gemm(ops.problem(fast));
    reference_gemm(ops.problem(reference));
    expect_matches_reference(ops, c, fast, reference);
  }
}

// FGEMM_CPU_ISA's families map to the INT8 sets as int8_gemm.cpp documents, and always to one this CPU has.
TEST(Int8Gemm, KernelSetOfEachFamily) {
  EXPECT_EQ(int8_isa_for(Isa::Scalar), Int8Isa::Scalar);
  EXPECT_EQ(int8_isa_for(Isa::Avx2), Int8Isa::Avx2);
  const Int8Isa avx512 = cpu_supports(Int8Isa::Avx512Vnni) ? Int8Isa::Avx512Vnni : Int8Isa::Avx2;
  EXPECT_EQ(int8_isa_for(Isa::Avx512), avx512);
  EXPECT_EQ(int8_isa_for(Isa::Avx512Bf16), avx512);
  EXPECT_EQ(int8_isa_for(Isa::AmxBf16), cpu_supports(Int8Isa::AmxInt8) ? Int8Isa::AmxInt8 : avx512);
  for (Isa isa : kAllIsas)
    if (cpu_supports(isa)) EXPECT_TRUE(cpu_supports(int8_isa_for(isa))) << isa_name(isa);
}

// The kernel sets' shapes that the driver relies on.
TEST(Int8Gemm, KernelSetsFitTheDriver) {
  for (Int8Isa isa : kAllInt8Isas) {
    const Int8KernelSet& kernels = int8_kernels_for(isa);
    EXPECT_EQ(kBlockN % kernels.panel_cols, 0) << isa_name(isa);
    EXPECT_EQ(kernels.max_rows % kernels.row_granule, 0) << isa_name(isa);
    EXPECT_LE(kernels.max_rows, kInt8MaxPanelRows) << isa_name(isa);
    for (int rows = kernels.row_granule; rows <= kernels.max_rows; rows += kernels.row_granule) {
      EXPECT_NE(kernels.sum_kernels[rows - 1], nullptr) << isa_name(isa) << " " << rows;
      EXPECT_NE(kernels.block_kernels[rows - 1], nullptr) << isa_name(isa) << " " << rows;
    }
  }
}

}  // namespace
}  // namespace fgemm::cpu
