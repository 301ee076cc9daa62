// The CPU backend's fast path on every instruction set this CPU has, held to the scalar reference on
// random operands (never zero) in all three layouts, through the public API.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/validate.hpp"
#include "cpu/bf16.hpp"
#include "cpu/cpu_gemm.hpp"
#include "cpu/e4m3.hpp"
#include "cpu/isa.hpp"
#include "cpu/reference.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::cpu {

// Found by argument-dependent lookup, so it must live in Isa's own namespace.
void PrintTo(Isa isa, std::ostream* out) { *out << isa_name(isa); }

namespace {

using detail::GemmLayout;
using detail::GemmProblem;

constexpr std::uint8_t kE4m3One = 0x38;
constexpr std::uint8_t kE4m3Nan = 0x7F;
constexpr std::uint32_t kPoisonF32 = 0x7FBADBADu;  // a NaN no computation produces
constexpr std::uint16_t kPoisonBf16 = 0x7FBAu;

// Sets FGEMM_CPU_ISA for as long as it lives.
class ForcedIsa {
 public:
  explicit ForcedIsa(Isa isa) { setenv("FGEMM_CPU_ISA", isa_name(isa), 1); }
  ~ForcedIsa() { unsetenv("FGEMM_CPU_ISA"); }
};

// Every test runs once per instruction set, forced with FGEMM_CPU_ISA; on a CPU that lacks one, its tests
// are skipped, saying so.
#define SKIP_IF_CPU_LACKS(isa) \
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU lacks the instruction set " << isa_name(isa)

// Memory aligned like a tensor allocator's, handed out as elements of one type.
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::size_t count, std::size_t element_bytes)
      : storage_(count * element_bytes + 64), bytes_(count * element_bytes) {}
  unsigned char* data() {
    auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    return storage_.data() + (64 - address % 64) % 64;
  }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(data());
  }
  std::size_t bytes() const { return bytes_; }

 private:
  std::vector<unsigned char> storage_;
  std::size_t bytes_ = 0;
};

struct Case {
  std::string name;
  GemmLayout layout = GemmLayout::Normal;
  std::int64_t m = 0;  // M, M_sum or M_max
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType d_dtype = DType::BF16;
  bool with_c = false;
  bool slices = false;        // every operand is a slice of a wider tensor with padded rows
  bool mn_major_sfa = false;  // sfa column-major with M padded to 4, as DeepGEMM wants it
  std::int64_t groups = 1;
  ContiguousLayout form = ContiguousLayout::MIndices;
  std::vector<std::int32_t> group_array;  // m_indices or psum (contiguous, as `form` says) or masked_m (masked)
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// The operands of one case in host memory. Padding bytes of A and B rows hold E4M3 NaN and unused sfa
// entries hold NaN, so that reading past an operand would show in D.
class Operands {
 public:
  explicit Operands(const Case& c) : case_(c), random_(std::hash<std::string>()(c.name)) {
    const bool grouped_a = c.layout == GemmLayout::Masked;
    const bool grouped_b = c.layout != GemmLayout::Normal;
    a_groups_ = grouped_a ? c.groups : 1;
    b_groups_ = grouped_b ? c.groups : 1;
    k_blocks_ = (c.k + 127) / 128;
    n_blocks_ = (c.n + 127) / 128;
    const std::int64_t pad = c.slices ? 16 : 0;  // elements; keeps every row stride a multiple of 16 bytes

    a_row_stride_ = c.k + pad;
    a_ = Buffer(a_groups_ * c.m * a_row_stride_, 1);
    fill_codes(a_, c.k, a_row_stride_);
    b_row_stride_ = c.k + pad;
    b_ = Buffer(b_groups_ * c.n * b_row_stride_, 1);
    fill_codes(b_, c.k, b_row_stride_);

    if (c.mn_major_sfa) {
      sfa_m_stride_ = 1;
      sfa_k_stride_ = round_up(c.m, 4);
      sfa_group_stride_ = sfa_k_stride_ * k_blocks_;
    } else {
      sfa_m_stride_ = k_blocks_ + (c.slices ? 3 : 0);
      sfa_k_stride_ = 1;
      sfa_group_stride_ = sfa_m_stride_ * c.m;
    }
    const std::uniform_real_distribution<float> scale(0.5f, 2.0f);
    sfa_ = Buffer(a_groups_ * sfa_group_stride_, sizeof(float));
    fill_floats(sfa_, {a_groups_, c.m, k_blocks_}, {sfa_group_stride_, sfa_m_stride_, sfa_k_stride_}, scale);
    sfb_n_stride_ = k_blocks_ + (c.slices ? 1 : 0);
    sfb_ = Buffer(b_groups_ * n_blocks_ * sfb_n_stride_, sizeof(float));
    fill_floats(sfb_, {b_groups_, n_blocks_, k_blocks_}, {n_blocks_ * sfb_n_stride_, sfb_n_stride_, 1}, scale);

    d_row_stride_ = c.slices ? round_up(c.n, 8) + 8 : c.n;
    if (c.with_c) {
      c_ = Buffer(c.m * d_row_stride_, sizeof(float));
      fill_floats(c_, {1, c.m, c.n}, {0, d_row_stride_, 1}, std::uniform_real_distribution<float>(-1e4f, 1e4f));
    }
    if (!c.group_array.empty()) {
      group_array_ = Buffer(c.group_array.size(), sizeof(std::int32_t));
      std::memcpy(group_array_.data(), c.group_array.data(), group_array_.bytes());
    }
  }

  // D's buffer: the groups' rows of d_row_stride elements, one more row before and after when D is a slice
  // (which then also starts 16 bytes into its row), all poisoned.
  Buffer poisoned_d(DType dtype) const {
    Buffer d(d_buffer_elements(), dtype == DType::F32 ? 4 : 2);
    for (std::int64_t i = 0; i < d_buffer_elements(); ++i) {
      if (dtype == DType::F32)
        std::memcpy(d.as<std::uint32_t>() + i, &kPoisonF32, 4);
      else
        d.as<std::uint16_t>()[i] = kPoisonBf16;
    }
    return d;
  }

  std::int64_t d_buffer_elements() const { return d_offset() + a_groups_ * case_.m * d_row_stride_ + d_row_stride_; }
  std::int64_t d_offset() const { return case_.slices ? d_row_stride_ + 16 / element_bytes(case_.d_dtype) : 0; }
  std::int64_t d_index(std::int64_t group, std::int64_t row, std::int64_t col) const {
    return d_offset() + (group * case_.m + row) * d_row_stride_ + col;
  }
  std::int64_t d_groups() const { return a_groups_; }

  // Whether the call computes row `row` of group `group` (padding rows and masked-off rows it must not touch).
  bool row_written(std::int64_t group, std::int64_t row) const {
    switch (case_.layout) {
      case GemmLayout::Normal: return true;
      case GemmLayout::Contiguous:
        if (case_.form == ContiguousLayout::MIndices) return case_.group_array[row] >= 0;
        for (std::size_t g = 0; g < case_.group_array.size(); ++g)
          if (row >= (g == 0 ? 0 : round_up(case_.group_array[g - 1], 128)) && row < case_.group_array[g]) return true;
        return false;
      case GemmLayout::Masked: return row < case_.group_array[group];
    }
    return false;
  }

  // Runs the public operation of the case's layout into `d`.
  void run(Buffer& d) {
    const Views v = views(d);
    switch (case_.layout) {
      case GemmLayout::Normal: fp8_gemm_nt(v.a, v.sfa, v.b, v.sfb, v.d, v.c); break;
      case GemmLayout::Contiguous:
        m_grouped_fp8_gemm_nt_contiguous(v.a, v.sfa, v.b, v.sfb, v.d, v.group_array, case_.form);
        break;
      case GemmLayout::Masked: m_grouped_fp8_gemm_nt_masked(v.a, v.sfa, v.b, v.sfb, v.d, v.group_array, case_.m); break;
    }
  }

  // The validated problem of the case with output `d`, for the reference.
  GemmProblem problem(Buffer& d) {
    const Views v = views(d);
    switch (case_.layout) {
      case GemmLayout::Normal: return detail::validate_normal(v.a, v.sfa, v.b, v.sfb, v.d, v.c);
      case GemmLayout::Contiguous:
        return detail::validate_contiguous(v.a, v.sfa, v.b, v.sfb, v.d, v.group_array, case_.form);
      case GemmLayout::Masked: return detail::validate_masked(v.a, v.sfa, v.b, v.sfb, v.d, v.group_array, case_.m);
      case GemmLayout::KGrouped: break;
    }
    return {};
  }

  // |C| + sum_kb |sfa sfb| sum_k |A B| for every element of D (as FP32, in a buffer laid out like D): the
  // scale of the rounding errors any order of FP32 summation makes.
  Buffer magnitudes() {
    Buffer out(d_buffer_elements(), sizeof(float));
    Buffer scratch_d = poisoned_d(case_.d_dtype);
    GemmProblem p = problem(scratch_d);
    Buffer a = absolute_codes(a_), b = absolute_codes(b_);
    Buffer sfa = absolute_floats(sfa_), sfb = absolute_floats(sfb_), c = absolute_floats(c_);
    p.a = a.as<std::uint8_t>();
    p.b = b.as<std::uint8_t>();
    p.sfa = sfa.as<float>();
    p.sfb = sfb.as<float>();
    if (p.c) p.c = c.as<float>();
    p.d = out.as<float>() + d_offset();
    p.d_dtype = DType::F32;
    reference_gemm(p);
    return out;
  }

  std::int64_t k_blocks() const { return k_blocks_; }

  void set_a_code(std::int64_t row, std::int64_t k, std::uint8_t code) {
    a_.as<std::uint8_t>()[row * a_row_stride_ + k] = code;
  }
  void set_b_code(std::int64_t col, std::int64_t k, std::uint8_t code) {
    b_.as<std::uint8_t>()[col * b_row_stride_ + k] = code;
  }

 private:
  struct Views {
    TensorView a, sfa, b, sfb, d, group_array;
    std::optional<TensorView> c;
  };

  static std::int64_t element_bytes(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

  Views views(Buffer& d) {
    const Case& c = case_;
    const bool grouped_a = c.layout == GemmLayout::Masked;
    const bool grouped_b = c.layout != GemmLayout::Normal;
    Views v;
    v.a = grouped_a ? make_tensor_view(a_.data(), DType::E4M3, {c.groups, c.m, c.k})
                    : make_tensor_view(a_.data(), DType::E4M3, {c.m, c.k});
    set_strides(v.a, {c.m * a_row_stride_, a_row_stride_, 1});
    v.sfa = grouped_a ? make_tensor_view(sfa_.data(), DType::F32, {c.groups, c.m, k_blocks_})
                      : make_tensor_view(sfa_.data(), DType::F32, {c.m, k_blocks_});
    set_strides(v.sfa, {sfa_group_stride_, sfa_m_stride_, sfa_k_stride_});
    v.b = grouped_b ? make_tensor_view(b_.data(), DType::E4M3, {c.groups, c.n, c.k})
                    : make_tensor_view(b_.data(), DType::E4M3, {c.n, c.k});
    set_strides(v.b, {c.n * b_row_stride_, b_row_stride_, 1});
    v.sfb = grouped_b ? make_tensor_view(sfb_.data(), DType::F32, {c.groups, n_blocks_, k_blocks_})
                      : make_tensor_view(sfb_.data(), DType::F32, {n_blocks_, k_blocks_});
    set_strides(v.sfb, {n_blocks_ * sfb_n_stride_, sfb_n_stride_, 1});
    void* d_start = d.data() + d_offset() * element_bytes(c.d_dtype);
    v.d = grouped_a ? make_tensor_view(d_start, c.d_dtype, {c.groups, c.m, c.n})
                    : make_tensor_view(d_start, c.d_dtype, {c.m, c.n});
    set_strides(v.d, {c.m * d_row_stride_, d_row_stride_, 1});
    if (c.with_c) {
      v.c = make_tensor_view(c_.data(), DType::F32, {c.m, c.n});
      set_strides(*v.c, {d_row_stride_, 1});
    }
    if (!c.group_array.empty())
      v.group_array =
          make_tensor_view(group_array_.data(), DType::I32, {static_cast<std::int64_t>(c.group_array.size())});
    return v;
  }

  // The last ndim of `strides` become the view's strides.
  static void set_strides(TensorView& view, std::initializer_list<std::int64_t> strides) {
    const std::int64_t* last = strides.end() - view.ndim;
    for (int i = 0; i < view.ndim; ++i) view.strides[i] = last[i];
  }

  void fill_codes(Buffer& buffer, std::int64_t k, std::int64_t row_stride) {
    std::uniform_int_distribution<int> code(0, 255);
    auto* bytes = buffer.as<std::uint8_t>();
    for (std::size_t i = 0; i < buffer.bytes(); ++i) {
      if (static_cast<std::int64_t>(i) % row_stride >= k) {
        bytes[i] = kE4m3Nan;
        continue;
      }
      int value;
      do value = code(random_);
      while ((value & 0x7F) == 0 || (value & 0x7F) == kE4m3Nan);
      bytes[i] = static_cast<std::uint8_t>(value);
    }
  }

  // Fills the elements at offsets i * stride_i + j * stride_j + l * stride_l with draws of `value`, and the
  // rest of the buffer (which no view reaches) with NaN.
  template <class Distribution>
  void fill_floats(Buffer& buffer, const std::int64_t (&extent)[3], const std::int64_t (&stride)[3],
                   Distribution value) {
    auto* values = buffer.as<float>();
    for (std::size_t i = 0; i < buffer.bytes() / sizeof(float); ++i) values[i] = std::nanf("");
    for (std::int64_t i = 0; i < extent[0]; ++i)
      for (std::int64_t j = 0; j < extent[1]; ++j)
        for (std::int64_t l = 0; l < extent[2]; ++l)
          values[i * stride[0] + j * stride[1] + l * stride[2]] = value(random_);
  }

  static Buffer absolute_codes(Buffer& codes) {
    Buffer out(codes.bytes(), 1);
    for (std::size_t i = 0; i < codes.bytes(); ++i) out.as<std::uint8_t>()[i] = codes.as<std::uint8_t>()[i] & 0x7F;
    return out;
  }

  static Buffer absolute_floats(Buffer& values) {
    Buffer out(values.bytes() / sizeof(float), sizeof(float));
    for (std::size_t i = 0; i < values.bytes() / sizeof(float); ++i)
      out.as<float>()[i] = std::fabs(values.as<float>()[i]);
    return out;
  }

  Case case_;
  std::mt19937 random_;
  std::int64_t a_groups_ = 1, b_groups_ = 1, k_blocks_ = 0, n_blocks_ = 0;
  std::int64_t a_row_stride_ = 0, b_row_stride_ = 0, d_row_stride_ = 0;
  std::int64_t sfa_m_stride_ = 0, sfa_k_stride_ = 0, sfa_group_stride_ = 0, sfb_n_stride_ = 0;
  Buffer a_, b_, sfa_, sfb_, c_, group_array_;
};

double element(Buffer& buffer, DType dtype, std::int64_t i) {
  return dtype == DType::F32 ? buffer.as<float>()[i] : float_from_bf16(buffer.as<std::uint16_t>()[i]);
}

bool poisoned(Buffer& buffer, DType dtype, std::int64_t i) {
  if (dtype == DType::BF16) return buffer.as<std::uint16_t>()[i] == kPoisonBf16;
  std::uint32_t bits;
  std::memcpy(&bits, buffer.as<std::uint32_t>() + i, 4);
  return bits == kPoisonF32;
}

// Every element the call computes matches the reference; every other element of D's buffer (padding
// rows, masked-off rows, the rest of the wider tensor) still holds the poison.
void expect_matches_reference(Operands& ops, const Case& c, Buffer& fast, Buffer& reference) {
  Buffer magnitude = ops.magnitudes();
  // Each side sums up to 128 products per K block, scales each block once, adds the blocks and C: at most
  // 128 + k_blocks + 3 roundings of at most 2^-24 of the magnitude, in an order of its own.
  const double relative_bound = 2.0 * (128 + ops.k_blocks() + 3) * std::ldexp(1.0, -24);
  std::vector<bool> inside(ops.d_buffer_elements(), false);
  int failures = 0;
  for (std::int64_t g = 0; g < ops.d_groups(); ++g)
    for (std::int64_t r = 0; r < c.m; ++r)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const std::int64_t i = ops.d_index(g, r, j);
        inside[i] = true;
        if (!ops.row_written(g, r)) {
          if (!poisoned(fast, c.d_dtype, i) && failures++ < 8)
            ADD_FAILURE() << "wrote D[" << g << ", " << r << ", " << j << "], a row the call must skip";
          continue;
        }
        const double expected = element(reference, c.d_dtype, i), actual = element(fast, c.d_dtype, i);
        if (std::isnan(expected) && std::isnan(actual) && !poisoned(fast, c.d_dtype, i)) continue;
        double tolerance = relative_bound * magnitude.as<float>()[i];
        const double largest = std::max(std::fabs(expected), std::fabs(actual));
        if (c.d_dtype == DType::BF16 && largest > 0) tolerance += std::ldexp(1.0, std::ilogb(largest) - 7);
        if (!(std::fabs(actual - expected) <= tolerance) && failures++ < 8)
          ADD_FAILURE() << "D[" << g << ", " << r << ", " << j << "] = " << actual << ", reference " << expected
                        << ", tolerance " << tolerance;
      }
  for (std::int64_t i = 0; i < ops.d_buffer_elements(); ++i)
    if (!inside[i] && !poisoned(fast, c.d_dtype, i) && failures++ < 8)
      ADD_FAILURE() << "wrote element " << i << " of D's buffer, outside D";
  EXPECT_EQ(failures, 0);
}

Case normal(std::int64_t m, std::int64_t n, std::int64_t k, DType d_dtype) {
  Case c;
  c.m = m, c.n = n, c.k = k, c.d_dtype = d_dtype;
  c.name = "m" + std::to_string(m) + "_n" + std::to_string(n) + "_k" + std::to_string(k) +
           (d_dtype == DType::F32 ? "_f32" : "_bf16");
  return c;
}

Case with_c(Case c) {
  c.with_c = true;
  c.name += "_c";
  return c;
}

Case sliced(Case c) {
  c.slices = true;
  c.name += "_slices";
  return c;
}

Case mn_major_sfa(Case c) {
  c.mn_major_sfa = true;
  c.name += "_mnmajor";
  return c;
}

// Experts of rows in runs: {expert, rows} pairs, expert -1 for padding.
Case contiguous(std::vector<std::pair<int, int>> runs, std::int64_t groups, std::int64_t n, std::int64_t k,
                DType d_dtype, const std::string& name) {
  Case c = normal(0, n, k, d_dtype);
  c.layout = GemmLayout::Contiguous;
  c.groups = groups;
  for (auto [expert, rows] : runs) c.group_array.insert(c.group_array.end(), rows, expert);
  c.m = static_cast<std::int64_t>(c.group_array.size());
  c.name = "contiguous_" + name + "_" + normal(c.m, n, k, d_dtype).name;
  return c;
}

// The prefix-sum form: expert g's rows run from psum[g - 1] rounded up to 128 to psum[g]; rows past the last
// sum are padding.
Case contiguous_psum(std::vector<std::int32_t> psum, std::int64_t m_sum, std::int64_t n, std::int64_t k, DType d_dtype,
                     const std::string& name) {
  Case c = normal(m_sum, n, k, d_dtype);
  c.layout = GemmLayout::Contiguous;
  c.form = ContiguousLayout::Psum;
  c.groups = static_cast<std::int64_t>(psum.size());
  c.group_array = std::move(psum);
  c.name = "contiguous_psum_" + name + "_" + c.name;
  return c;
}

Case masked(std::vector<std::int32_t> masked_m, std::int64_t m_max, std::int64_t n, std::int64_t k, DType d_dtype) {
  Case c = normal(m_max, n, k, d_dtype);
  c.layout = GemmLayout::Masked;
  c.groups = static_cast<std::int64_t>(masked_m.size());
  c.name = "masked";
  for (auto rows : masked_m) c.name += "_" + std::to_string(rows);
  c.name += "_of" + std::to_string(m_max) + "_n" + std::to_string(n) + "_k" + std::to_string(k) +
            (d_dtype == DType::F32 ? "_f32" : "_bf16");
  c.group_array = std::move(masked_m);
  return c;
}

std::vector<Case> cases() {
  const DType bf16 = DType::BF16, f32 = DType::F32;
  // Segments of 128 rows (the contiguous layout's alignment), some ending in padding rows, one all padding.
  const std::vector<std::pair<int, int>> aligned = {{2, 100}, {-1, 28}, {0, 128}, {-1, 128}, {1, 78}, {-1, 50}};
  // Any run lengths: the CPU needs no alignment.
  const std::vector<std::pair<int, int>> ragged = {{1, 3}, {0, 40}, {-1, 5}, {2, 1}, {0, 17}, {1, 70}, {-1, 14}};
  return {
      normal(1, 72, 16, bf16),
      with_c(normal(1, 200, 400, f32)),
      sliced(normal(7, 1000, 144, bf16)),
      mn_major_sfa(normal(33, 200, 400, f32)),
      mn_major_sfa(sliced(with_c(normal(128, 72, 144, bf16)))),
      sliced(normal(130, 264, 272, f32)),
      with_c(normal(300, 136, 128, bf16)),
      sliced(normal(20, 100, 48, bf16)),  // N = 100: a multiple of neither 16 nor 8, so D must be a slice
      mn_major_sfa(sliced(with_c(normal(64, 1000, 400, f32)))),
      // K beyond one packed span (1024) with a short last block; more N tiles than one work unit takes.
      sliced(with_c(normal(5, 2200, 1040, f32))),
      mn_major_sfa(normal(150, 264, 2064, bf16)),
      contiguous(aligned, 3, 200, 144, bf16, "aligned"),
      mn_major_sfa(sliced(contiguous(aligned, 3, 72, 400, f32, "aligned"))),
      contiguous(ragged, 3, 136, 272, f32, "ragged"),
      // Experts 0 [0, 100), 1 none, 2 [128, 300), 3 none (it would start at 384), 4 [384, 385), 5 [512, 530);
      // the rest padding.
      contiguous_psum({100, 128, 300, 300, 385, 530}, 560, 200, 144, bf16, "unaligned"),
      mn_major_sfa(sliced(contiguous_psum({3, 256, 256, 300}, 300, 72, 400, f32, "aligned"))),
      contiguous_psum({0, 0}, 128, 72, 16, bf16, "empty"),
      masked({0, 1, 64}, 64, 200, 144, bf16),
      mn_major_sfa(sliced(masked({64, 0, 1}, 64, 72, 400, f32))),
      masked({37, 64, 5}, 64, 1000, 16, bf16),
      sliced(masked({5, 30}, 32, 200, 1296, f32)),
      // Nothing to compute: the call must return and leave D as it was.
      masked({0, 0}, 16, 72, 16, bf16),
      contiguous({{-1, 256}}, 2, 72, 16, f32, "all_padding"),
      // Blocks of few rows (the path of the dot kernels), alone and with longer ones in the same call.
      contiguous({{0, 2}, {1, 8}, {-1, 3}, {2, 5}, {0, 1}}, 3, 136, 400, bf16, "short_runs"),
      sliced(contiguous({{1, 7}, {0, 9}, {2, 4}}, 3, 200, 1040, f32, "short_runs")),
      masked({1, 8, 3, 0, 7}, 8, 200, 1040, bf16),
      mn_major_sfa(sliced(masked({2, 6}, 9, 100, 144, f32))),
  };
}

// The row counts on both sides of every kernel set's max_direct_rows (PathThreshold checks them).
constexpr std::int64_t kFewRows = 16;

// Every row count from 1 to kFewRows: on every kernel set, the path of the dot kernels with each combination
// of its tiles (4, 2 and 1 rows), and the blocked path above it. N is not a multiple of 16 (a last work unit
// of 8 columns, or 4 with slices) and K not one of 128; K = 1040 takes several spans of K on both paths.
std::vector<Case> few_row_cases() {
  std::vector<Case> few_rows;
  for (std::int64_t m = 1; m <= kFewRows; ++m) {
    const std::int64_t k = m % 3 == 0 ? 1040 : m % 3 == 1 ? 400 : 144;
    const DType d_dtype = m % 2 == 0 ? DType::F32 : DType::BF16;
    Case c = m % 4 == 3 ? sliced(normal(m, 100, k, d_dtype)) : normal(m, 200, k, d_dtype);
    few_rows.push_back(m % 5 == 0 ? with_c(c) : m % 5 == 1 ? mn_major_sfa(c) : c);
  }
  return few_rows;
}

class FastPath : public testing::TestWithParam<std::tuple<Isa, Case>> {};

TEST_P(FastPath, MatchesReference) {
  const auto& [isa, c] = GetParam();
  SKIP_IF_CPU_LACKS(isa);
  Operands ops(c);
  Buffer fast = ops.poisoned_d(c.d_dtype), reference = ops.poisoned_d(c.d_dtype);
  {
    ForcedIsa forced(isa);
    ops.run(fast);
  }
  reference_gemm(ops.problem(reference));
  expect_matches_reference(ops, c, fast, reference);
}

std::string fast_path_test_name(const testing::TestParamInfo<FastPath::ParamType>& info) {
  return std::string(isa_name(std::get<0>(info.param))) + "_" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(cpu, FastPath, testing::Combine(testing::ValuesIn(kAllIsas), testing::ValuesIn(cases())),
                         fast_path_test_name);

INSTANTIATE_TEST_SUITE_P(cpu_few_rows, FastPath,
                         testing::Combine(testing::ValuesIn(kAllIsas), testing::ValuesIn(few_row_cases())),
                         fast_path_test_name);

// Rows of A: 20 take the blocked path, 1 the path of the dot kernels.
class PathThreshold : public testing::TestWithParam<Isa> {};

// The row counts that the tests give each kernel set take both of its paths: 1 row the dot kernels'; 16
// (kFewRows, Decoding) and 20 (NanPropagation) the micro-kernels'.
TEST_P(PathThreshold, LiesWithinTheRowCountsTested) {
  const int max_direct_rows = kernels_for(GetParam()).max_direct_rows;
  EXPECT_GE(max_direct_rows, 1);
  EXPECT_LT(max_direct_rows, kFewRows);
}

INSTANTIATE_TEST_SUITE_P(cpu, PathThreshold, testing::ValuesIn(kAllIsas),
                         [](const testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

class NanPropagation : public testing::TestWithParam<std::tuple<Isa, DType, std::int64_t>> {};

TEST_P(NanPropagation, ANanCodeMakesItsRowOrColumnNan) {
  const auto& [isa, d_dtype, m] = GetParam();
  SKIP_IF_CPU_LACKS(isa);
  const Case c = normal(m, 200, 272, d_dtype);
  const std::int64_t nan_row = std::min<std::int64_t>(3, m - 1), nan_col = 150;
  Operands ops(c);
  ops.set_a_code(nan_row, 5, kE4m3Nan);
  ops.set_b_code(nan_col, 260, kE4m3Nan | 0x80);
  Buffer fast = ops.poisoned_d(d_dtype), reference = ops.poisoned_d(d_dtype);
  {
    ForcedIsa forced(isa);
    ops.run(fast);
  }
  reference_gemm(ops.problem(reference));
  expect_matches_reference(ops, c, fast, reference);
  for (std::int64_t r = 0; r < c.m; ++r)
    for (std::int64_t j = 0; j < c.n; ++j)
      ASSERT_EQ(std::isnan(element(fast, d_dtype, ops.d_index(0, r, j))), r == nan_row || j == nan_col)
          << r << ", " << j;
}

INSTANTIATE_TEST_SUITE_P(cpu, NanPropagation,
                         testing::Combine(testing::ValuesIn(kAllIsas), testing::Values(DType::BF16, DType::F32),
                                          testing::Values(20, 1)),
                         [](const testing::TestParamInfo<NanPropagation::ParamType>& info) {
                           return std::string(isa_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) == DType::F32 ? "_f32" : "_bf16") + "_m" +
                                  std::to_string(std::get<2>(info.param));
                         });

// FP32 D = A . B^T with K = 16 and unit scales.
std::vector<float> multiply_with_unit_scales(Buffer& a, std::int64_t m, Buffer& b, std::int64_t n) {
  const std::int64_t n_blocks = (n + 127) / 128;
  Buffer sfa(m, sizeof(float)), sfb(n_blocks, sizeof(float)), d(m * n, sizeof(float));
  std::fill_n(sfa.as<float>(), m, 1.0f);
  std::fill_n(sfb.as<float>(), n_blocks, 1.0f);
  fp8_gemm_nt(make_tensor_view(a.data(), DType::E4M3, {m, 16}), make_tensor_view(sfa.data(), DType::F32, {m, 1}),
              make_tensor_view(b.data(), DType::E4M3, {n, 16}), make_tensor_view(sfb.data(), DType::F32, {n_blocks, 1}),
              make_tensor_view(d.data(), DType::F32, {m, n}));
  return std::vector<float>(d.as<float>(), d.as<float>() + m * n);
}

// 16 rows of the 16x16 identity in E4M3.
Buffer identity_rows() {
  Buffer identity(16 * 16, 1);
  for (int i = 0; i < 16 * 16; ++i) identity.as<std::uint8_t>()[i] = i / 16 == i % 16 ? kE4m3One : 0;
  return identity;
}

// Rows of 16 copies of one code, one row per code.
Buffer every_code() {
  Buffer codes(256 * 16, 1);
  for (int i = 0; i < 256 * 16; ++i) codes.as<std::uint8_t>()[i] = static_cast<std::uint8_t>(i / 16);
  return codes;
}

void expect_same_value(float actual, float expected, int code) {
  if (std::isnan(expected))
    EXPECT_TRUE(std::isnan(actual)) << "code " << code;
  else
    EXPECT_EQ(actual, expected) << "code " << code;
}

// Rows [first, first + rows) of a matrix of 16 columns.
Buffer rows_of(Buffer& matrix, std::int64_t first, std::int64_t rows) {
  Buffer part(rows * 16, 1);
  std::memcpy(part.data(), matrix.data() + first * 16, part.bytes());
  return part;
}

// Rows of A per call: 16 take the blocked path, 1 the path of the dot kernels (which decodes B its own way).
// The codes are covered in several calls of that many rows.
class Decoding : public testing::TestWithParam<std::tuple<Isa, std::int64_t>> {};

// Each decoding path decodes every one of the 256 codes to exactly the value in the E4M3 table, in each of
// 16 positions along K.
TEST_P(Decoding, EveryCodeOfBIsExact) {
  const auto& [isa, rows] = GetParam();
  SKIP_IF_CPU_LACKS(isa);
  ForcedIsa forced(isa);
  Buffer identity = identity_rows(), b = every_code();
  for (std::int64_t first = 0; first < 16; first += rows) {
    Buffer a = rows_of(identity, first, rows);  // D[i][code] = B[code][first + i]
    const std::vector<float> d = multiply_with_unit_scales(a, rows, b, 256);
    for (std::int64_t i = 0; i < rows; ++i)
      for (int code = 0; code < 256; ++code) expect_same_value(d[i * 256 + code], kE4m3.value[code], code);
  }
}

TEST_P(Decoding, EveryCodeOfAIsExact) {
  const auto& [isa, rows] = GetParam();
  SKIP_IF_CPU_LACKS(isa);
  ForcedIsa forced(isa);
  Buffer codes = every_code(), b = identity_rows();
  for (std::int64_t first = 0; first < 256; first += rows) {
    Buffer a = rows_of(codes, first, rows);  // D[i][j] = A[i][j], the code first + i
    const std::vector<float> d = multiply_with_unit_scales(a, rows, b, 16);
    for (std::int64_t i = 0; i < rows; ++i) {
      const int code = static_cast<int>(first + i);
      for (int j = 0; j < 16; ++j) expect_same_value(d[i * 16 + j], kE4m3.value[code], code);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(cpu, Decoding, testing::Combine(testing::ValuesIn(kAllIsas), testing::Values(16, 1)),
                         [](const testing::TestParamInfo<Decoding::ParamType>& info) {
                           return std::string(isa_name(std::get<0>(info.param))) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "_rows";
                         });

// Runs `call`, expecting an fgemm::Error of `kind` whose message holds each of `parts`.
template <class Call>
void expect_error(Call call, ErrorKind kind, std::initializer_list<std::string> parts) {
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), kind) << error.what();
    for (const std::string& part : parts)
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << "'" << part << "' not in: " << error.what();
  }
}

void expect_all_poisoned(Operands& ops, Buffer& d, DType dtype) {
  for (std::int64_t i = 0; i < ops.d_buffer_elements(); ++i) ASSERT_TRUE(poisoned(d, dtype, i)) << "element " << i;
}

class BadExpertIndex : public testing::TestWithParam<std::int32_t> {};

TEST_P(BadExpertIndex, IsAnErrorNamingTheRowAndValueAndWritesNothing) {
  Case c = contiguous({{0, 8}, {1, 8}}, 2, 72, 16, DType::BF16, "bad");
  c.group_array[5] = GetParam();
  Operands ops(c);
  Buffer d = ops.poisoned_d(c.d_dtype);
  expect_error([&] { ops.run(d); }, ErrorKind::InvalidValue,
               {"m_grouped_fp8_gemm_nt_contiguous", "'m_indices'", "row 5", std::to_string(GetParam())});
  expect_all_poisoned(ops, d, c.d_dtype);
}

INSTANTIATE_TEST_SUITE_P(cpu, BadExpertIndex, testing::Values(-2, 2, 1000, INT32_MIN));

// A prefix sum below the one before it, or beyond M_sum (256 rows), at expert 1.
class BadPrefixSum : public testing::TestWithParam<std::int32_t> {};

TEST_P(BadPrefixSum, IsAnErrorNamingTheExpertAndValueAndWritesNothing) {
  Case c = contiguous_psum({100, GetParam(), 256}, 256, 72, 16, DType::BF16, "bad");
  Operands ops(c);
  Buffer d = ops.poisoned_d(c.d_dtype);
  expect_error([&] { ops.run(d); }, ErrorKind::InvalidValue,
               {"m_grouped_fp8_gemm_nt_contiguous", "'m_indices'", "expert 1", std::to_string(GetParam())});
  expect_all_poisoned(ops, d, c.d_dtype);
}

INSTANTIATE_TEST_SUITE_P(cpu, BadPrefixSum, testing::Values(99, -1, 257, INT32_MAX));

class BadMaskedM : public testing::TestWithParam<std::int32_t> {};

TEST_P(BadMaskedM, IsAnErrorNamingTheGroupAndValueAndWritesNothing) {
  Case c = masked({8, GetParam(), 3}, 8, 72, 16, DType::F32);
  Operands ops(c);
  Buffer d = ops.poisoned_d(c.d_dtype);
  expect_error([&] { ops.run(d); }, ErrorKind::InvalidValue,
               {"m_grouped_fp8_gemm_nt_masked", "'masked_m'", "group 1", std::to_string(GetParam())});
  expect_all_poisoned(ops, d, c.d_dtype);
}

INSTANTIATE_TEST_SUITE_P(cpu, BadMaskedM, testing::Values(-1, 9, INT32_MAX));

class EmptyOutput : public testing::TestWithParam<GemmLayout> {};

// No rows: every call returns at once, reading nothing of A, sfa or D (their pointers are null).
TEST_P(EmptyOutput, ReturnsAtOnce) {
  const std::int64_t n = 72, k = 144, groups = 2;
  Buffer b(groups * n * k, 1), sfb(groups * 2, sizeof(float)), masked_m(groups, sizeof(std::int32_t));
  std::fill_n(masked_m.as<std::int32_t>(), groups, 0);
  const TensorView b_grouped = make_tensor_view(b.data(), DType::E4M3, {groups, n, k});
  const TensorView sfb_grouped = make_tensor_view(sfb.data(), DType::F32, {groups, 1, 2});
  switch (GetParam()) {
    case GemmLayout::Normal:
      EXPECT_NO_THROW(
          fp8_gemm_nt(make_tensor_view(nullptr, DType::E4M3, {0, k}), make_tensor_view(nullptr, DType::F32, {0, 2}),
                      make_tensor_view(b.data(), DType::E4M3, {n, k}), make_tensor_view(sfb.data(), DType::F32, {1, 2}),
                      make_tensor_view(nullptr, DType::BF16, {0, n})));
      break;
    case GemmLayout::Contiguous:
      EXPECT_NO_THROW(m_grouped_fp8_gemm_nt_contiguous(
          make_tensor_view(nullptr, DType::E4M3, {0, k}), make_tensor_view(nullptr, DType::F32, {0, 2}), b_grouped,
          sfb_grouped, make_tensor_view(nullptr, DType::BF16, {0, n}), make_tensor_view(nullptr, DType::I32, {0})));
      break;
    case GemmLayout::Masked:
      EXPECT_NO_THROW(m_grouped_fp8_gemm_nt_masked(make_tensor_view(nullptr, DType::E4M3, {groups, 0, k}),
                                                   make_tensor_view(nullptr, DType::F32, {groups, 0, 2}), b_grouped,
                                                   sfb_grouped, make_tensor_view(nullptr, DType::BF16, {groups, 0, n}),
                                                   make_tensor_view(masked_m.data(), DType::I32, {groups}), 1));
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(cpu, EmptyOutput,
                         testing::Values(GemmLayout::Normal, GemmLayout::Contiguous, GemmLayout::Masked),
                         [](const testing::TestParamInfo<GemmLayout>& info) {
                           return std::string(detail::layout_name(info.param));
                         });

}  // namespace
}  // namespace fgemm::cpu
