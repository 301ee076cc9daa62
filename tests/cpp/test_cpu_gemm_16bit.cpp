// The CPU backend's BF16 and FP16 GEMMs on every instruction set this CPU has, through the public API, held to
// the FP64 reference in every layout, storage order and output type: calc_diff (DeepGEMM's measure) below
// 1e-5, every element within the rounding errors of an FP32 sum, and nothing written outside what the call
// computes (padding and skipped rows of D, the rest of the wider tensors D lies in).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/validate.hpp"
#include "cpu/bf16.hpp"
#include "cpu/f16.hpp"
#include "cpu/isa.hpp"
#include "cpu/reference.hpp"
#include "fgemm/gemm_16bit.hpp"

namespace fgemm::cpu {

// Found by argument-dependent lookup, so it must live in Isa's own namespace.
void PrintTo(Isa isa, std::ostream* out) { *out << isa_name(isa); }

namespace {

using detail::GemmLayout;
using detail::GemmProblem;

constexpr std::uint32_t kPoisonF32 = 0x7FBADBADu;  // NaNs that no computation produces
constexpr std::uint16_t kPoison16 = 0x7FBAu;       // (in BF16 and in FP16 alike)
constexpr std::uint16_t kNanBf16 = 0x7FC0u, kNanF16 = 0x7E00u;

// Sets FGEMM_CPU_ISA for as long as it lives.
class ForcedIsa {
 public:
  explicit ForcedIsa(Isa isa) { setenv("FGEMM_CPU_ISA", isa_name(isa), 1); }
  ~ForcedIsa() { unsetenv("FGEMM_CPU_ISA"); }
};

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
std::int64_t element_bytes(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

// A tensor in host memory, 64-byte aligned: `groups` matrices of `rows` rows of `stride` elements, of which
// the first `cols` are the tensor's; every element starts as `fill`.
class Matrix {
 public:
  Matrix() = default;
  Matrix(DType dtype, std::int64_t groups, std::int64_t rows, std::int64_t cols, std::int64_t stride)
      : dtype_(dtype), groups_(groups), rows_(rows), cols_(cols), stride_(stride),
        storage_(groups * rows * stride * element_bytes(dtype) + 64) {}

  void* data() {
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    return storage_.data() + (64 - address % 64) % 64;
  }
  std::int64_t elements() const { return groups_ * rows_ * stride_; }
  std::int64_t index(std::int64_t g, std::int64_t r, std::int64_t c) const { return (g * rows_ + r) * stride_ + c; }
  bool inside(std::int64_t i) const { return i % stride_ < cols_; }

  std::uint16_t& bits16(std::int64_t i) { return static_cast<std::uint16_t*>(data())[i]; }
  std::uint32_t bits32(std::int64_t i) {
    std::uint32_t bits;
    std::memcpy(&bits, static_cast<std::uint32_t*>(data()) + i, 4);
    return bits;
  }
  void set_bits32(std::int64_t i, std::uint32_t bits) {
    std::memcpy(static_cast<std::uint32_t*>(data()) + i, &bits, 4);
  }

  double value(std::int64_t i) {
    switch (dtype_) {
      case DType::F32: return static_cast<float*>(data())[i];
      case DType::F16: return float_from_f16(bits16(i));
      default: return float_from_bf16(bits16(i));
    }
  }
  void set_value(std::int64_t i, float value) {
    switch (dtype_) {
      case DType::F32: static_cast<float*>(data())[i] = value; break;
      case DType::F16: bits16(i) = f16_from_float(value); break;
      default: bits16(i) = bf16_from_float(value); break;
    }
  }
  bool poisoned(std::int64_t i) { return dtype_ == DType::F32 ? bits32(i) == kPoisonF32 : bits16(i) == kPoison16; }
  void poison() {
    for (std::int64_t i = 0; i < elements(); ++i) {
      if (dtype_ == DType::F32)
        set_bits32(i, kPoisonF32);
      else
        bits16(i) = kPoison16;
    }
  }

  // A view of the matrices: [rows, cols], or [groups, rows, cols] where `grouped`.
  TensorView view(bool grouped) {
    TensorView v = grouped ? make_tensor_view(data(), dtype_, {groups_, rows_, cols_})
                           : make_tensor_view(data(), dtype_, {rows_, cols_});
    v.strides[v.ndim - 2] = stride_;
    if (grouped) v.strides[0] = rows_ * stride_;
    return v;
  }

  // A copy with every element's magnitude, as FP32 (NaN stays NaN).
  Matrix magnitudes() {
    Matrix out(DType::F32, groups_, rows_, cols_, stride_);
    for (std::int64_t i = 0; i < elements(); ++i) out.set_value(i, static_cast<float>(std::fabs(value(i))));
    return out;
  }
  // The same elements, converted to `dtype` (exactly where the values allow).
  Matrix as(DType dtype) {
    Matrix out(dtype, groups_, rows_, cols_, stride_);
    for (std::int64_t i = 0; i < elements(); ++i) out.set_value(i, static_cast<float>(value(i)));
    return out;
  }

 private:
  DType dtype_ = DType::F32;
  std::int64_t groups_ = 0, rows_ = 0, cols_ = 0, stride_ = 0;
  std::vector<unsigned char> storage_;
};

enum class COperand { None, Separate, IsD };

struct Case {
  std::string name;
  GemmLayout layout = GemmLayout::Normal;
  DType input = DType::BF16;
  DType output = DType::BF16;
  bool a_mn_major = false;
  bool b_mn_major = false;
  std::int64_t m = 0;  // M, M_sum, M_max or each expert's M (k-grouped)
  std::int64_t n = 0;
  std::int64_t k = 0;  // the sum of the experts' K where k-grouped
  std::int64_t groups = 1;
  COperand c = COperand::None;
  DType c_type = DType::F32;  // of a C apart from D: FP32 or D's 16-bit type
  bool padded = false;  // every tensor a slice of a wider one: 16 more bytes after each row (than the 16-byte
                        // multiple that rows of odd lengths need anyway)
  ContiguousLayout form = ContiguousLayout::MIndices;
  std::vector<std::int32_t> group_array;  // m_indices, psum, masked_m or ks
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

const char* type_name(DType dtype) { return dtype == DType::F32 ? "f32" : dtype == DType::F16 ? "fp16" : "bf16"; }

// The name of the public operation of a case.
std::string operation_name(const Case& c) {
  const std::string type = c.input == DType::BF16 ? "bf16" : "fp16";
  const std::string letters = std::string(c.a_mn_major ? "t" : "n") + (c.b_mn_major ? "n" : "t");
  switch (c.layout) {
    case GemmLayout::Normal: return type + "_gemm_" + letters;
    case GemmLayout::Contiguous: return "m_grouped_" + type + "_gemm_" + letters + "_contiguous";
    case GemmLayout::Masked: return "m_grouped_" + type + "_gemm_nt_masked";
    case GemmLayout::KGrouped: return "k_grouped_" + type + "_gemm_tn_contiguous";
  }
  return "";
}

// The operands of one case. Elements of A and B past their rows' ends hold NaN, so that reading past an
// operand would show in D.
class Operands {
 public:
  explicit Operands(const Case& c) : case_(c), random_(std::hash<std::string>()(c.name)) {
    const std::int64_t pad = c.padded ? 8 : 0;  // 16 bytes of 16-bit elements
    const bool grouped_a = c.layout == GemmLayout::Masked;
    const bool grouped_b = c.layout == GemmLayout::Contiguous || c.layout == GemmLayout::Masked;
    const bool grouped_d = c.layout == GemmLayout::Masked || c.layout == GemmLayout::KGrouped;
    const std::int64_t a_rows = c.a_mn_major ? c.k : c.m, a_cols = c.a_mn_major ? c.m : c.k;
    const std::int64_t b_rows = c.b_mn_major ? c.k : c.n, b_cols = c.b_mn_major ? c.n : c.k;
    a_ = random_matrix(grouped_a ? c.groups : 1, a_rows, a_cols, round_up(a_cols, 8) + pad);
    b_ = random_matrix(grouped_b ? c.groups : 1, b_rows, b_cols, round_up(b_cols, 8) + pad);
    d_groups_ = grouped_d ? c.groups : 1;
    d_stride_ = round_up(c.n, 8) + pad;
    if (c.c == COperand::Separate) {
      c_ = Matrix(c.c_type, d_groups_, c.m, c.n, d_stride_ + 16 / element_bytes(c.c_type) * (c.padded ? 1 : 0));
      for (std::int64_t i = 0; i < c_.elements(); ++i) c_.set_value(i, c_.inside(i) ? value(random_) : NAN);
    }
  }

  // D poisoned, or for C = D holding C's values (and poison elsewhere).
  Matrix initial_d() {
    Matrix d(case_.output, d_groups_, case_.m, case_.n, d_stride_);
    d.poison();
    if (case_.c == COperand::IsD) {
      std::mt19937 random(7);
      for (std::int64_t i = 0; i < d.elements(); ++i)
        if (d.inside(i)) d.set_value(i, value(random));
    }
    return d;
  }

  void run(Matrix& d) {
    const Views v = views(d);
    const Case& c = case_;
    const bool bf16 = c.input == DType::BF16;
    switch (c.layout) {
      case GemmLayout::Normal: {
        using Dense =
            void (*)(const TensorView&, const TensorView&, const TensorView&, const std::optional<TensorView>&, Stream);
        const Dense bf16_ops[2][2] = {{bf16_gemm_nt, bf16_gemm_nn}, {bf16_gemm_tt, bf16_gemm_tn}};
        const Dense fp16_ops[2][2] = {{fp16_gemm_nt, fp16_gemm_nn}, {fp16_gemm_tt, fp16_gemm_tn}};
        (bf16 ? bf16_ops : fp16_ops)[c.a_mn_major][c.b_mn_major](v.a, v.b, v.d, v.c, nullptr);
        break;
      }
      case GemmLayout::Contiguous:
        if (c.b_mn_major)
          (bf16 ? m_grouped_bf16_gemm_nn_contiguous : m_grouped_fp16_gemm_nn_contiguous)(v.a, v.b, v.d, v.group_array,
                                                                                         c.form, nullptr);
        else
          (bf16 ? m_grouped_bf16_gemm_nt_contiguous : m_grouped_fp16_gemm_nt_contiguous)(v.a, v.b, v.d, v.group_array,
                                                                                         c.form, nullptr);
        break;
      case GemmLayout::Masked:
        (bf16 ? m_grouped_bf16_gemm_nt_masked : m_grouped_fp16_gemm_nt_masked)(v.a, v.b, v.d, v.group_array, c.m,
                                                                               nullptr);
        break;
      case GemmLayout::KGrouped:
        (bf16 ? k_grouped_bf16_gemm_tn_contiguous : k_grouped_fp16_gemm_tn_contiguous)(v.a, v.b, v.d, ks(),
                                                                                       v.group_array, v.c, nullptr);
        break;
    }
  }

  // The validated problem of the case with output `d` (and C = `d` where the case's C is D).
  GemmProblem problem(Matrix& d) {
    const Views v = views(d);
    const Case& c = case_;
    // (The names of the other storage orders matter only to messages.)
    const detail::Gemm16Op operation{operation_name_.c_str(), c.input, nullptr, nullptr};
    switch (c.layout) {
      case GemmLayout::Normal:
        return detail::validate_dense_16bit(operation, c.a_mn_major, c.b_mn_major, v.a, v.b, v.d, v.c);
      case GemmLayout::Contiguous:
        return detail::validate_contiguous_16bit(operation, c.b_mn_major, v.a, v.b, v.d, v.group_array, c.form);
      case GemmLayout::Masked: return detail::validate_masked_16bit(operation, v.a, v.b, v.d, v.group_array, c.m);
      case GemmLayout::KGrouped:
        return detail::validate_k_grouped_16bit(operation, v.a, v.b, v.d, ks(), v.group_array, v.c);
    }
    return {};
  }

  // |C| + sum_k |A B| for every element of D, laid out like D (FP32): the scale of the rounding errors that
  // any order of FP32 summation makes. `initial` is D before the call (C, where C is D).
  Matrix magnitudes(Matrix& initial) {
    Matrix out = initial.magnitudes();
    Matrix a = a_.magnitudes().as(case_.input), b = b_.magnitudes().as(case_.input);
    Matrix c = case_.c == COperand::Separate ? c_.magnitudes() : Matrix();
    // The case's problem, pointed at FP32 magnitudes of its operands (C = D: of D as it was, in place).
    GemmProblem p = problem(initial);
    p.a = static_cast<const std::uint8_t*>(a.data());
    p.b = static_cast<const std::uint8_t*>(b.data());
    p.d = out.data(), p.d_dtype = DType::F32;
    if (case_.c == COperand::Separate) p.c = c.data(), p.c_dtype = DType::F32;
    if (case_.c == COperand::IsD) p.c = out.data(), p.c_dtype = DType::F32;
    reference_gemm(p);
    return out;
  }

  // Whether the call computes row `row` of group `group` of D.
  bool row_written(std::int64_t group, std::int64_t row) const {
    const std::vector<std::int32_t>& array = case_.group_array;
    switch (case_.layout) {
      case GemmLayout::Normal:
      case GemmLayout::KGrouped: return true;
      case GemmLayout::Masked: return row < array[group];
      case GemmLayout::Contiguous:
        if (case_.form == ContiguousLayout::MIndices) return array[row] >= 0;
        for (std::size_t g = 0; g < array.size(); ++g)
          if (row >= (g == 0 ? 0 : round_up(array[g - 1], 128)) && row < array[g]) return true;
        return false;
    }
    return false;
  }

  std::int64_t d_groups() const { return d_groups_; }
  std::int64_t d_index(std::int64_t g, std::int64_t r, std::int64_t j) const {
    return (g * case_.m + r) * d_stride_ + j;
  }

 private:
  struct Views {
    TensorView a, b, d, group_array;
    std::optional<TensorView> c;
  };

  Views views(Matrix& d) {
    const Case& c = case_;
    Views v;
    v.a = a_.view(c.layout == GemmLayout::Masked);
    v.b = b_.view(c.layout == GemmLayout::Contiguous || c.layout == GemmLayout::Masked);
    const bool grouped_d = c.layout == GemmLayout::Masked || c.layout == GemmLayout::KGrouped;
    v.d = d.view(grouped_d);
    if (c.c == COperand::Separate) v.c = c_.view(grouped_d);
    if (c.c == COperand::IsD) v.c = v.d;
    if (!c.group_array.empty())
      v.group_array =
          make_tensor_view(group_array_.data(), DType::I32, {static_cast<std::int64_t>(group_array_.size())});
    return v;
  }

  std::vector<std::int64_t> ks() const { return {case_.group_array.begin(), case_.group_array.end()}; }

  Matrix random_matrix(std::int64_t groups, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
    Matrix matrix(case_.input, groups, rows, cols, stride);
    const std::uint16_t nan = case_.input == DType::BF16 ? kNanBf16 : kNanF16;
    for (std::int64_t i = 0; i < matrix.elements(); ++i) {
      if (matrix.inside(i))
        matrix.set_value(i, value(random_));
      else
        matrix.bits16(i) = nan;
    }
    return matrix;
  }

  static float value(std::mt19937& random) { return std::uniform_real_distribution<float>(-2.0f, 2.0f)(random); }

  Case case_;
  std::string operation_name_ = operation_name(case_);
  std::mt19937 random_;
  Matrix a_, b_, c_;
  std::vector<std::int32_t> group_array_ = case_.group_array;  // what the call reads (ks_tensor where k-grouped)
  std::int64_t d_groups_ = 1, d_stride_ = 0;
};

// DeepGEMM's measure of agreement: 1 - 2 sum(x y) / sum(x^2 + y^2).
double calc_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double cross = 0, squares = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    cross += x[i] * y[i];
    squares += x[i] * x[i] + y[i] * y[i];
  }
  return squares == 0 ? 0 : 1 - 2 * cross / squares;
}

// Runs the case on `isa` and compares it with the reference.
void expect_matches_reference(Isa isa, const Case& c) {
  Operands ops(c);
  Matrix fast = ops.initial_d(), reference = ops.initial_d(), initial = ops.initial_d();
  {
    ForcedIsa forced(isa);
    ops.run(fast);
  }
  reference_gemm(ops.problem(reference));
  Matrix magnitude = ops.magnitudes(initial);
  // FP32 sums of up to K products and C: at most K + 2 roundings of 2^-24 of the magnitude on each side; then
  // the output's rounding of half an ulp on each side (ulp: 2^-7 of the binade's start in BF16, 2^-10 in
  // FP16, whose subnormals have an ulp of 2^-24).
  const double sum_bound = 2.0 * (c.k + 2) * std::ldexp(1.0, -24);
  const auto output_ulp = [&](double value) {
    if (c.output == DType::F32 || value == 0) return 0.0;
    return c.output == DType::BF16 ? std::ldexp(1.0, std::ilogb(value) - 7)
                                   : std::ldexp(1.0, std::max(std::ilogb(value) - 10, -24));
  };
  std::vector<bool> in_d(fast.elements(), false);
  std::vector<double> actual, expected;
  int failures = 0;
  for (std::int64_t g = 0; g < ops.d_groups(); ++g)
    for (std::int64_t r = 0; r < c.m; ++r)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const std::int64_t i = ops.d_index(g, r, j);
        in_d[i] = true;
        if (!ops.row_written(g, r)) {
          if (!fast.poisoned(i) && failures++ < 8)
            ADD_FAILURE() << "wrote D[" << g << ", " << r << ", " << j << "], a row the call must skip";
          continue;
        }
        actual.push_back(fast.value(i));
        expected.push_back(reference.value(i));
        const double tolerance = sum_bound * magnitude.value(i) +
                                 output_ulp(std::max(std::fabs(actual.back()), std::fabs(expected.back())));
        if (!(std::fabs(actual.back() - expected.back()) <= tolerance) && failures++ < 8)
          ADD_FAILURE() << "D[" << g << ", " << r << ", " << j << "] = " << actual.back() << ", reference "
                        << expected.back() << ", tolerance " << tolerance;
      }
  for (std::int64_t i = 0; i < fast.elements(); ++i)
    if (!in_d[i] && !fast.poisoned(i) && failures++ < 8) ADD_FAILURE() << "wrote element " << i << ", outside D";
  EXPECT_EQ(failures, 0);
  if (!actual.empty()) EXPECT_LT(calc_diff(actual, expected), 1e-5);
}

// ---- the cases ------------------------------------------------------------------------------------------

Case make_case(GemmLayout layout, DType input, DType output, std::int64_t m, std::int64_t n, std::int64_t k) {
  Case c;
  c.layout = layout, c.input = input, c.output = output, c.m = m, c.n = n, c.k = k;
  return c;
}

std::string shape_name(const Case& c) {
  std::string name = std::string(type_name(c.input)) + "_to_" + type_name(c.output) + "_m" + std::to_string(c.m) +
                     "_n" + std::to_string(c.n) + "_k" + std::to_string(c.k);
  if (c.c == COperand::Separate) name += c.c_type == DType::F32 ? "_c" : std::string("_c_") + type_name(c.c_type);
  if (c.c == COperand::IsD) name += "_c_is_d";
  if (c.padded) name += "_padded";
  return name;
}

const DType kInputs[] = {DType::BF16, DType::F16};

// Every storage order, input and output type, C or none or D itself, an FP32 C or one of D's 16-bit type, on
// shapes that take the dot kernels' path (few rows) and the blocked one; N and K multiples of neither 64 nor 128,
// K odd where the rows are padded to 16 bytes, K beyond one packed span (1024).
std::vector<Case> dense_cases() {
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{1, 72, 40}, {5, 200, 37}, {37, 100, 136}, {130, 136, 272}, {64, 24, 1100}, {3, 40, 9}};
  std::vector<Case> cases;
  int variant = 0;
  for (DType input : kInputs)
    for (DType output : {input, DType::F32})
      for (int letters = 0; letters < 4; ++letters, ++variant) {
        const Shape& shape = shapes[variant % std::size(shapes)];
        Case c = make_case(GemmLayout::Normal, input, output, shape.m, shape.n, shape.k);
        c.a_mn_major = letters & 2;
        c.b_mn_major = letters & 1;
        if (output == DType::F32) {
          c.c = variant % 3 == 0 ? COperand::None : variant % 3 == 1 ? COperand::Separate : COperand::IsD;
        } else {
          // Each storage order of a 16-bit D takes one C: none, FP32, D itself, one of D's type.
          const COperand operands[] = {COperand::None, COperand::Separate, COperand::IsD, COperand::Separate};
          c.c = operands[letters];
          if (letters == 3) c.c_type = output;
        }
        c.padded = variant % 2 == 1;
        c.name = std::string("dense_") + (c.a_mn_major ? "t" : "n") + (c.b_mn_major ? "n" : "t") + "_" + shape_name(c);
        cases.push_back(c);
      }
  return cases;
}

// m_indices with padding (-1) runs and an expert with no rows; the prefix sums with unaligned ends, an empty
// expert (a sum equal to the one before) and padding after the last expert.
std::vector<Case> contiguous_cases() {
  std::vector<std::int32_t> m_indices;
  for (auto [expert, rows] :
       std::vector<std::pair<int, int>>{{2, 100}, {-1, 28}, {0, 128}, {-1, 128}, {3, 3}, {-1, 125}, {2, 1}, {-1, 3}})
    m_indices.insert(m_indices.end(), rows, expert);
  // Experts 0 [0, 100), 1 none, 2 [128, 300), 3 none (it would start at 384), 4 [384, 385), 5 [512, 530);
  // rows [100, 128), [300, 384), [385, 512) and from 530 on are padding.
  const std::vector<std::int32_t> psum = {100, 128, 300, 300, 385, 530};
  std::vector<Case> cases;
  int variant = 0;
  for (DType input : kInputs)
    for (DType output : {input, DType::F32})
      for (bool b_mn_major : {false, true})
        for (ContiguousLayout form : {ContiguousLayout::MIndices, ContiguousLayout::Psum}) {
          const bool psum_form = form == ContiguousLayout::Psum;
          Case c = make_case(GemmLayout::Contiguous, input, output, psum_form ? 560 : m_indices.size(),
                             variant % 2 ? 72 : 100, variant % 3 ? 144 : 57);
          c.groups = psum_form ? psum.size() : 4;
          c.b_mn_major = b_mn_major;
          c.form = form;
          c.group_array = psum_form ? psum : m_indices;
          c.padded = ++variant % 2 == 0;
          c.name = std::string("contiguous_") + (b_mn_major ? "nn_" : "nt_") + (psum_form ? "psum_" : "m_indices_") +
                   shape_name(c);
          cases.push_back(c);
        }
  return cases;
}

std::vector<Case> masked_cases() {
  std::vector<Case> cases;
  for (DType input : kInputs)
    for (DType output : {input, DType::F32}) {
      Case c = make_case(GemmLayout::Masked, input, output, 48, 100, output == DType::F32 ? 200 : 52);
      c.groups = 4;
      c.group_array = {0, 48, 3, 16};
      c.padded = output == DType::F32;
      c.name = "masked_" + shape_name(c);
      cases.push_back(c);
    }
  return cases;
}

// Experts with no rows of K among others (first, middle, last), with C, without, and with C = D.
std::vector<Case> k_grouped_cases() {
  std::vector<Case> cases;
  for (DType input : kInputs)
    for (COperand c_operand : {COperand::None, COperand::Separate, COperand::IsD}) {
      Case c = make_case(GemmLayout::KGrouped, input, DType::F32, input == DType::BF16 ? 40 : 72, 100, 0);
      c.group_array = c_operand == COperand::IsD ? std::vector<std::int32_t>{0, 256, 128, 0}
                                                 : std::vector<std::int32_t>{128, 0, 384, 0, 128};
      for (std::int32_t k : c.group_array) c.k += k;
      c.groups = static_cast<std::int64_t>(c.group_array.size());
      c.a_mn_major = c.b_mn_major = true;  // a [sum(ks), M], b [sum(ks), N]
      c.c = c_operand;
      c.padded = c_operand != COperand::Separate;
      c.name = "k_grouped_" + shape_name(c);
      cases.push_back(c);
    }
  return cases;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (auto make : {dense_cases, contiguous_cases, masked_cases, k_grouped_cases})
    for (Case& c : make()) cases.push_back(std::move(c));
  return cases;
}

class FastPath16 : public testing::TestWithParam<std::tuple<Isa, Case>> {};

TEST_P(FastPath16, MatchesReference) {
  const auto& [isa, c] = GetParam();
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU lacks the instruction set " << isa_name(isa);
  expect_matches_reference(isa, c);
}

INSTANTIATE_TEST_SUITE_P(cpu, FastPath16, testing::Combine(testing::ValuesIn(kAllIsas), testing::ValuesIn(all_cases())),
                         [](const testing::TestParamInfo<FastPath16::ParamType>& info) {
                           return std::string(isa_name(std::get<0>(info.param))) + "_" + std::get<1>(info.param).name;
                         });

// The group arrays are read on the CPU: a bad value is an error naming the 16-bit operation, the argument,
// the position and the value, and D is left as it was.
struct BadGroupArray {
  std::string name;
  Case c;
  std::vector<std::string> message_parts;
};

void PrintTo(const BadGroupArray& bad, std::ostream* out) { *out << bad.name; }

std::vector<BadGroupArray> bad_group_arrays() {
  Case m_indices = make_case(GemmLayout::Contiguous, DType::BF16, DType::BF16, 16, 72, 64);
  m_indices.groups = 2;
  m_indices.group_array = {0, 0, 0, 0, 0, 2, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1};
  m_indices.name = "m_indices";
  Case psum = make_case(GemmLayout::Contiguous, DType::F16, DType::F32, 256, 72, 64);
  psum.b_mn_major = true;
  psum.form = ContiguousLayout::Psum;
  psum.groups = 3;
  psum.group_array = {200, 100, 256};
  psum.name = "psum";
  Case psum_past_end = psum;
  psum_past_end.group_array = {100, 200, 257};
  Case masked = make_case(GemmLayout::Masked, DType::BF16, DType::F32, 8, 72, 64);
  masked.groups = 2;
  masked.group_array = {3, 9};
  masked.name = "masked";
  return {
      {"m_indices_past_the_experts",
       m_indices,
       {"m_grouped_bf16_gemm_nt_contiguous", "'grouped_layout'", "row 5", "2"}},
      {"psum_decreasing", psum, {"m_grouped_fp16_gemm_nn_contiguous", "'grouped_layout'", "expert 1", "100"}},
      {"psum_past_m_sum", psum_past_end, {"m_grouped_fp16_gemm_nn_contiguous", "'grouped_layout'", "expert 2", "257"}},
      {"masked_m_past_m_max", masked, {"m_grouped_bf16_gemm_nt_masked", "'masked_m'", "group 1", "9"}},
  };
}

class BadGroupArrays : public testing::TestWithParam<BadGroupArray> {};

TEST_P(BadGroupArrays, AreErrorsNamingThePositionAndWriteNothing) {
  const BadGroupArray& bad = GetParam();
  Operands ops(bad.c);
  Matrix d = ops.initial_d();
  try {
    ops.run(d);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
    for (const std::string& part : bad.message_parts)
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << "'" << part << "' not in: " << error.what();
  }
  for (std::int64_t i = 0; i < d.elements(); ++i) ASSERT_TRUE(d.poisoned(i)) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(cpu, BadGroupArrays, testing::ValuesIn(bad_group_arrays()),
                         [](const testing::TestParamInfo<BadGroupArray>& info) { return info.param.name; });

}  // namespace
}  // namespace fgemm::cpu
