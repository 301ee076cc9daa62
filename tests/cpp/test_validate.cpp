// The contract of ARCHITECTURE.md (Semantics), checked through the public C++ API: each broken rule throws fgemm::Error
// of the right kind, naming the operation and the argument.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fgemm/fgemm.hpp"
#include "fgemm/gemm_16bit.hpp"

namespace fgemm {
namespace {

enum class Layout { Normal, Contiguous, Masked };

constexpr std::int64_t kM = 8, kN = 136, kK = 256, kGroups = 2;  // N = 136: 272-byte BF16 rows

// Zeroed host memory, 16-byte aligned, large enough for any operand below.
struct alignas(64) Storage {
  std::uint8_t a[kGroups * kM * kK];
  std::uint8_t b[kGroups * kN * kK];
  float sfa[kGroups * kM * 2];
  float sfb[kGroups * 2 * 2];
  float d[kGroups * kM * kN];
  float c[kM * kN];
  std::int32_t group_array[kM];
};

// The arguments of one call, valid until a test breaks one of them.
struct Call {
  Layout layout;
  TensorView a, sfa, b, sfb, d, group_array;
  std::optional<TensorView> c;
  std::int64_t expected_m = 4;

  void run() const {
    switch (layout) {
      case Layout::Normal: fp8_gemm_nt(a, sfa, b, sfb, d, c); break;
      case Layout::Contiguous: m_grouped_fp8_gemm_nt_contiguous(a, sfa, b, sfb, d, group_array); break;
      case Layout::Masked: m_grouped_fp8_gemm_nt_masked(a, sfa, b, sfb, d, group_array, expected_m); break;
    }
  }
};

Call valid_call(Layout layout) {
  static Storage storage{};
  Call call;
  call.layout = layout;
  Storage& s = storage;
  switch (layout) {
    case Layout::Normal:
      call.a = make_tensor_view(s.a, DType::E4M3, {kM, kK});
      call.sfa = make_tensor_view(s.sfa, DType::F32, {kM, 2});
      call.b = make_tensor_view(s.b, DType::E4M3, {kN, kK});
      call.sfb = make_tensor_view(s.sfb, DType::F32, {2, 2});
      call.d = make_tensor_view(s.d, DType::BF16, {kM, kN});
      call.c = make_tensor_view(s.c, DType::F32, {kM, kN});
      break;
    case Layout::Contiguous:
      call.a = make_tensor_view(s.a, DType::E4M3, {kM, kK});
      call.sfa = make_tensor_view(s.sfa, DType::F32, {kM, 2});
      call.b = make_tensor_view(s.b, DType::E4M3, {kGroups, kN, kK});
      call.sfb = make_tensor_view(s.sfb, DType::F32, {kGroups, 2, 2});
      call.d = make_tensor_view(s.d, DType::BF16, {kM, kN});
      call.group_array = make_tensor_view(s.group_array, DType::I32, {kM});
      break;
    case Layout::Masked:
      call.a = make_tensor_view(s.a, DType::E4M3, {kGroups, kM, kK});
      call.sfa = make_tensor_view(s.sfa, DType::F32, {kGroups, kM, 2});
      call.b = make_tensor_view(s.b, DType::E4M3, {kGroups, kN, kK});
      call.sfb = make_tensor_view(s.sfb, DType::F32, {kGroups, 2, 2});
      call.d = make_tensor_view(s.d, DType::F32, {kGroups, kM, kN});
      call.group_array = make_tensor_view(s.group_array, DType::I32, {kGroups});
      break;
  }
  return call;
}

const char* operation(Layout layout) {
  switch (layout) {
    case Layout::Normal: return "fp8_gemm_nt";
    case Layout::Contiguous: return "m_grouped_fp8_gemm_nt_contiguous";
    case Layout::Masked: return "m_grouped_fp8_gemm_nt_masked";
  }
  return "";
}

struct Violation {
  const char* name;
  Layout layout;
  void (*breaks)(Call&);
  ErrorKind kind;
  const char* argument;
};

void PrintTo(const Violation& violation, std::ostream* out) { *out << violation.name; }

void reshape(TensorView& view, std::initializer_list<std::int64_t> shape) {
  view = make_tensor_view(view.data, view.dtype, shape, view.device);
}

constexpr Device kGpu{DeviceType::CUDA, 0};
constexpr ErrorKind kType = ErrorKind::InvalidType, kValue = ErrorKind::InvalidValue;

const Violation kViolations[] = {
    // Element types.
    {"a_not_e4m3", Layout::Normal, [](Call& c) { c.a.dtype = DType::BF16; }, kType, "a"},
    {"b_not_e4m3", Layout::Normal, [](Call& c) { c.b.dtype = DType::F32; }, kType, "b"},
    {"sfa_not_f32", Layout::Normal, [](Call& c) { c.sfa.dtype = DType::BF16; }, kType, "sfa"},
    {"sfb_not_f32", Layout::Masked, [](Call& c) { c.sfb.dtype = DType::I32; }, kType, "sfb"},
    {"d_not_bf16_or_f32", Layout::Normal, [](Call& c) { c.d.dtype = DType::E4M3; }, kType, "d"},
    {"c_neither_f32_nor_ds_type", Layout::Normal, [](Call& c) { c.c->dtype = DType::F16; }, kType, "c"},
    {"c_16bit_beside_f32_d", Layout::Normal,
     [](Call& c) {
       c.d.dtype = DType::F32;
       c.c->dtype = DType::BF16;
     },
     kType, "c"},
    {"m_indices_not_i32", Layout::Contiguous, [](Call& c) { c.group_array.dtype = DType::F32; }, kType, "m_indices"},
    {"masked_m_not_i32", Layout::Masked, [](Call& c) { c.group_array.dtype = DType::F32; }, kType, "masked_m"},
    // Numbers of dimensions.
    {"a_3d", Layout::Normal, [](Call& c) { reshape(c.a, {1, kM, kK}); }, kValue, "a"},
    {"b_3d", Layout::Normal, [](Call& c) { reshape(c.b, {1, kN, kK}); }, kValue, "b"},
    {"b_2d_for_groups", Layout::Contiguous, [](Call& c) { reshape(c.b, {kN, kK}); }, kValue, "b"},
    {"a_2d_for_masked", Layout::Masked, [](Call& c) { reshape(c.a, {kM, kK}); }, kValue, "a"},
    // Shapes.
    {"k_of_b_differs", Layout::Normal, [](Call& c) { reshape(c.b, {kN, kK - 16}); }, kValue, "b"},
    {"sfa_k_blocks_wrong", Layout::Normal, [](Call& c) { reshape(c.sfa, {kM, 1}); }, kValue, "sfa"},
    {"sfa_rows_wrong", Layout::Contiguous, [](Call& c) { reshape(c.sfa, {kM - 1, 2}); }, kValue, "sfa"},
    {"sfb_n_blocks_wrong", Layout::Normal, [](Call& c) { reshape(c.sfb, {1, 2}); }, kValue, "sfb"},
    {"sfb_without_groups", Layout::Contiguous, [](Call& c) { reshape(c.sfb, {2, 2}); }, kValue, "sfb"},
    {"d_columns_wrong", Layout::Normal, [](Call& c) { reshape(c.d, {kM, kN + 8}); }, kValue, "d"},
    {"d_groups_wrong", Layout::Masked, [](Call& c) { reshape(c.d, {kGroups - 1, kM, kN}); }, kValue, "d"},
    {"b_groups_differ", Layout::Masked, [](Call& c) { reshape(c.b, {kGroups - 1, kN, kK}); }, kValue, "b"},
    {"c_shape_wrong", Layout::Normal, [](Call& c) { reshape(*c.c, {kM, kN - 8}); }, kValue, "c"},
    {"m_indices_length_wrong", Layout::Contiguous, [](Call& c) { reshape(c.group_array, {kM - 1}); }, kValue,
     "m_indices"},
    {"masked_m_length_wrong", Layout::Masked, [](Call& c) { reshape(c.group_array, {kGroups + 1}); }, kValue,
     "masked_m"},
    {"k_not_multiple_of_16", Layout::Normal,
     [](Call& c) {
       reshape(c.a, {kM, 40});
       reshape(c.b, {kN, 40});
       reshape(c.sfa, {kM, 1});
       reshape(c.sfb, {2, 1});
     },
     kValue, "a"},
    // Strides and alignment.
    {"a_last_stride_not_1", Layout::Normal, [](Call& c) { c.a.strides[1] = 2; }, kValue, "a"},
    {"d_last_stride_not_1", Layout::Contiguous, [](Call& c) { c.d.strides[1] = 2; }, kValue, "d"},
    {"a_row_stride_not_16_bytes", Layout::Normal, [](Call& c) { c.a.strides[0] = kK + 8; }, kValue, "a"},
    {"b_row_stride_not_16_bytes", Layout::Masked, [](Call& c) { c.b.strides[1] = kK + 4; }, kValue, "b"},
    {"d_row_stride_not_16_bytes", Layout::Normal, [](Call& c) { c.d.strides[0] = kN + 4; }, kValue, "d"},
    {"c_row_stride_not_16_bytes", Layout::Normal, [](Call& c) { c.c->strides[0] = kN + 2; }, kValue, "c"},
    {"a_start_not_16_bytes", Layout::Normal, [](Call& c) { c.a.data = static_cast<std::uint8_t*>(c.a.data) + 8; },
     kValue, "a"},
    {"sfa_negative_stride", Layout::Normal, [](Call& c) { c.sfa.strides[0] = -2; }, kValue, "sfa"},
    {"m_indices_not_contiguous", Layout::Contiguous, [](Call& c) { c.group_array.strides[0] = 2; }, kValue,
     "m_indices"},
    {"d_rows_overlap", Layout::Normal, [](Call& c) { c.d.strides[0] = 0; }, kValue, "d"},
    {"d_groups_overlap", Layout::Masked, [](Call& c) { c.d.strides[0] = kN; }, kValue, "d"},
    {"m_negative", Layout::Normal,
     [](Call& c) {
       for (TensorView* t : {&c.a, &c.sfa, &c.d, &*c.c}) t->shape[0] = -1;
     },
     kValue, "a"},
    // Devices and pointers.
    {"b_on_another_device", Layout::Normal, [](Call& c) { c.b.device = kGpu; }, kValue, "b"},
    {"c_on_another_device", Layout::Normal, [](Call& c) { c.c->device = kGpu; }, kValue, "c"},
    {"m_indices_on_another_device", Layout::Contiguous, [](Call& c) { c.group_array.device = kGpu; }, kValue,
     "m_indices"},
    {"sfb_null", Layout::Normal, [](Call& c) { c.sfb.data = nullptr; }, kValue, "sfb"},
    // Scalars.
    {"expected_m_zero", Layout::Masked, [](Call& c) { c.expected_m = 0; }, kValue, "expected_m"},
    {"expected_m_negative", Layout::Masked, [](Call& c) { c.expected_m = -3; }, kValue, "expected_m"},
};

// Runs a broken call, expecting an fgemm::Error of `kind` whose message starts with the operation, names the
// argument and says `also_said`.
template <class BrokenCall>
void expect_error(const BrokenCall& call, ErrorKind kind, const char* op, const char* argument,
                  const char* also_said = "") {
  try {
    call.run();
    FAIL() << "no error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.kind(), kind) << message;
    EXPECT_EQ(message.rfind(std::string("fgemm.") + op + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(std::string("argument '") + argument + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(also_said), std::string::npos) << message;
  }
}

class BrokenRule : public testing::TestWithParam<Violation> {};

TEST_P(BrokenRule, ThrowsTheRightKindNamingTheArgument) {
  const Violation& violation = GetParam();
  Call call = valid_call(violation.layout);
  violation.breaks(call);
  expect_error(call, violation.kind, operation(violation.layout), violation.argument);
}

INSTANTIATE_TEST_SUITE_P(Validate, BrokenRule, testing::ValuesIn(kViolations),
                         [](const testing::TestParamInfo<Violation>& info) { return std::string(info.param.name); });

class ValidCall : public testing::TestWithParam<Layout> {};

// The baseline every violation starts from is accepted (so each error above comes from its one change).
TEST_P(ValidCall, IsAccepted) { EXPECT_NO_THROW(valid_call(GetParam()).run()); }

INSTANTIATE_TEST_SUITE_P(Validate, ValidCall, testing::Values(Layout::Normal, Layout::Contiguous, Layout::Masked),
                         [](const testing::TestParamInfo<Layout>& info) { return std::string(operation(info.param)); });

// ---- the BF16 and FP16 GEMMs ------------------------------------------------------------------------------

enum class Op16 { Bf16Nt, Fp16Nt, Bf16Tn, ContiguousBf16Nt, ContiguousFp16NnPsum, MaskedFp16, KGroupedBf16 };

constexpr std::int64_t kK16 = 128;

struct alignas(64) Storage16 {
  std::uint16_t a[kGroups * kM * kK16];
  std::uint16_t b[kGroups * kN * kK16];
  float d[kGroups * kM * kN];
  float c[kGroups * kM * kN];
  std::int32_t m_indices[kM];
  std::int32_t psum[kGroups];
  std::int32_t masked_m[kGroups];
  std::int32_t ks[kGroups];
};

// The arguments of one 16-bit call, valid until a test breaks one of them.
struct Call16 {
  Op16 op;
  TensorView a, b, d, group_array;
  std::optional<TensorView> c;
  std::vector<std::int64_t> ks;
  std::int64_t expected_m = 4;

  void run() const {
    switch (op) {
      case Op16::Bf16Nt: bf16_gemm_nt(a, b, d, c); break;
      case Op16::Fp16Nt: fp16_gemm_nt(a, b, d, c); break;
      case Op16::Bf16Tn: bf16_gemm_tn(a, b, d, c); break;
      case Op16::ContiguousBf16Nt: m_grouped_bf16_gemm_nt_contiguous(a, b, d, group_array); break;
      case Op16::ContiguousFp16NnPsum:
        m_grouped_fp16_gemm_nn_contiguous(a, b, d, group_array, ContiguousLayout::Psum);
        break;
      case Op16::MaskedFp16: m_grouped_fp16_gemm_nt_masked(a, b, d, group_array, expected_m); break;
      case Op16::KGroupedBf16: k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, group_array, c); break;
    }
  }
};

const char* operation(Op16 op) {
  switch (op) {
    case Op16::Bf16Nt: return "bf16_gemm_nt";
    case Op16::Fp16Nt: return "fp16_gemm_nt";
    case Op16::Bf16Tn: return "bf16_gemm_tn";
    case Op16::ContiguousBf16Nt: return "m_grouped_bf16_gemm_nt_contiguous";
    case Op16::ContiguousFp16NnPsum: return "m_grouped_fp16_gemm_nn_contiguous";
    case Op16::MaskedFp16: return "m_grouped_fp16_gemm_nt_masked";
    case Op16::KGroupedBf16: return "k_grouped_bf16_gemm_tn_contiguous";
  }
  return "";
}

// Zeroed operands: m_indices put every row in expert 0, the prefix sums [0, kM] give expert 1 every row,
// masked_m computes nothing, ks = {128, 0}.
Call16 valid_call(Op16 op) {
  static Storage16 storage{};
  Storage16& s = storage;
  Call16 call;
  call.op = op;
  const DType type = op == Op16::Fp16Nt || op == Op16::ContiguousFp16NnPsum || op == Op16::MaskedFp16 ? DType::F16
                                                                                                      : DType::BF16;
  switch (op) {
    case Op16::Bf16Nt:
    case Op16::Fp16Nt:
      call.a = make_tensor_view(s.a, type, {kM, kK16});
      call.b = make_tensor_view(s.b, type, {kN, kK16});
      call.d = make_tensor_view(s.d, type, {kM, kN});
      call.c = make_tensor_view(s.c, DType::F32, {kM, kN});
      break;
    case Op16::Bf16Tn:
      call.a = make_tensor_view(s.a, type, {kK16, kM});
      call.b = make_tensor_view(s.b, type, {kK16, kN});
      call.d = make_tensor_view(s.d, DType::F32, {kM, kN});
      break;
    case Op16::ContiguousBf16Nt:
      call.a = make_tensor_view(s.a, type, {kM, kK16});
      call.b = make_tensor_view(s.b, type, {kGroups, kN, kK16});
      call.d = make_tensor_view(s.d, type, {kM, kN});
      call.group_array = make_tensor_view(s.m_indices, DType::I32, {kM});
      break;
    case Op16::ContiguousFp16NnPsum:
      s.psum[1] = kM;
      call.a = make_tensor_view(s.a, type, {kM, kK16});
      call.b = make_tensor_view(s.b, type, {kGroups, kK16, kN});
      call.d = make_tensor_view(s.d, DType::F32, {kM, kN});
      call.group_array = make_tensor_view(s.psum, DType::I32, {kGroups});
      break;
    case Op16::MaskedFp16:
      call.a = make_tensor_view(s.a, type, {kGroups, kM, kK16});
      call.b = make_tensor_view(s.b, type, {kGroups, kN, kK16});
      call.d = make_tensor_view(s.d, type, {kGroups, kM, kN});
      call.group_array = make_tensor_view(s.masked_m, DType::I32, {kGroups});
      break;
    case Op16::KGroupedBf16:
      call.a = make_tensor_view(s.a, type, {kK16, kM});
      call.b = make_tensor_view(s.b, type, {kK16, kN});
      call.d = make_tensor_view(s.d, DType::F32, {kGroups, kM, kN});
      call.c = make_tensor_view(s.c, DType::F32, {kGroups, kM, kN});
      call.ks = {kK16, 0};
      s.ks[0] = kK16;
      call.group_array = make_tensor_view(s.ks, DType::I32, {kGroups});
      break;
  }
  return call;
}

struct Violation16 {
  const char* name;
  Op16 op;
  void (*breaks)(Call16&);
  ErrorKind kind;
  const char* argument;
  const char* also_said = "";  // more of the message that must be there
};

void PrintTo(const Violation16& violation, std::ostream* out) { *out << violation.name; }

// A view of the same memory with the last two dimensions swapped: what `x.t()` passes.
void transpose(TensorView& view) {
  std::swap(view.shape[view.ndim - 1], view.shape[view.ndim - 2]);
  std::swap(view.strides[view.ndim - 1], view.strides[view.ndim - 2]);
}

const Violation16 kViolations16[] = {
    // Element types.
    {"fp16_a_with_bf16_b", Op16::Fp16Nt, [](Call16& c) { c.b.dtype = DType::BF16; }, kType, "b", "float16"},
    {"fp16_a_for_bf16", Op16::Bf16Nt, [](Call16& c) { c.a.dtype = DType::F16; }, kType, "a", "bfloat16"},
    {"d_of_the_other_16bit_type", Op16::Bf16Nt, [](Call16& c) { c.d.dtype = DType::F16; }, kType, "d"},
    {"d_not_f32_for_k_grouped", Op16::KGroupedBf16, [](Call16& c) { c.d.dtype = DType::BF16; }, kType, "d"},
    {"c_neither_f32_nor_ds_type", Op16::Bf16Nt, [](Call16& c) { c.c->dtype = DType::F16; }, kType, "c",
     "expected dtype float32 or d's bfloat16, got float16"},
    {"c_16bit_beside_f32_d", Op16::Bf16Tn, [](Call16& c) { c.c = make_tensor_view(c.d.data, DType::BF16, {kM, kN}); },
     kType, "c", "expected dtype float32, got bfloat16"},
    {"c_of_ds_type_overlapping_d", Op16::Bf16Nt,
     [](Call16& c) {
       c.c = c.d;
       c.c->data = static_cast<std::uint16_t*>(c.d.data) + 8;  // 16 bytes on
     },
     kValue, "c", "not overlap d"},
    // A transposed view passed to the letter of the other storage order.
    {"a_transposed_for_n", Op16::Bf16Nt,
     [](Call16& c) {
       c.a = make_tensor_view(c.a.data, c.a.dtype, {kK16, kM});
       transpose(c.a);
     },
     kValue, "a", "bf16_gemm_tt"},
    {"b_transposed_for_t", Op16::Bf16Nt,
     [](Call16& c) {
       c.b = make_tensor_view(c.b.data, c.b.dtype, {kK16, kN});
       transpose(c.b);
     },
     kValue, "b", "bf16_gemm_nn"},
    {"b_transposed_for_n", Op16::Bf16Tn,
     [](Call16& c) {
       c.b = make_tensor_view(c.b.data, c.b.dtype, {kN, kK16});
       transpose(c.b);
     },
     kValue, "b", "bf16_gemm_tt"},
    {"grouped_b_transposed_for_n", Op16::ContiguousFp16NnPsum,
     [](Call16& c) {
       c.b = make_tensor_view(c.b.data, c.b.dtype, {kGroups, kN, kK16});
       transpose(c.b);
     },
     kValue, "b", "m_grouped_fp16_gemm_nt_contiguous"},
    // Shapes.
    {"k_of_b_differs", Op16::Fp16Nt,
     [](Call16& c) {
       reshape(c.b, {kN, kK16 - 8});
     },
     kValue, "b"},
    {"k_of_b_differs_mn_major", Op16::Bf16Tn,
     [](Call16& c) {
       reshape(c.b, {kK16 - 8, kN});
     },
     kValue, "b"},
    {"k_of_grouped_b_differs", Op16::ContiguousBf16Nt,
     [](Call16& c) {
       reshape(c.b, {kGroups, kN, kK16 + 8});
     },
     kValue, "b"},
    {"d_shape_wrong", Op16::Bf16Tn,
     [](Call16& c) {
       reshape(c.d, {kM, kN - 8});
     },
     kValue, "d"},
    {"psum_length_wrong", Op16::ContiguousFp16NnPsum, [](Call16& c) { reshape(c.group_array, {kGroups + 1}); }, kValue,
     "grouped_layout"},
    {"m_indices_length_wrong", Op16::ContiguousBf16Nt, [](Call16& c) { reshape(c.group_array, {kM - 1}); }, kValue,
     "grouped_layout"},
    // The k-grouped layout's counts.
    {"ks_sum_not_rows_of_a", Op16::KGroupedBf16,
     [](Call16& c) {
       c.ks = {kK16, kK16};
     },
     kValue, "ks", "but a and b have 128 rows"},
    {"ks_not_multiple_of_128", Op16::KGroupedBf16,
     [](Call16& c) {
       c.ks = {64, 64};
     },
     kValue, "ks", "multiples of 128"},
    {"ks_negative", Op16::KGroupedBf16,
     [](Call16& c) {
       c.ks = {256, -128};
     },
     kValue, "ks"},
    {"ks_one_per_expert", Op16::KGroupedBf16, [](Call16& c) { c.ks = {kK16}; }, kValue, "ks"},
    {"ks_tensor_length_wrong", Op16::KGroupedBf16, [](Call16& c) { reshape(c.group_array, {kGroups + 1}); }, kValue,
     "ks_tensor"},
    {"b_rows_not_a_rows_k", Op16::KGroupedBf16, [](Call16& c) { reshape(c.b, {kK16 - 8, kN}); }, kValue, "b"},
    // Scalars.
    {"expected_m_zero", Op16::MaskedFp16, [](Call16& c) { c.expected_m = 0; }, kValue, "expected_m"},
    {"expected_m_negative", Op16::MaskedFp16, [](Call16& c) { c.expected_m = -1; }, kValue, "expected_m"},
};

class BrokenRule16 : public testing::TestWithParam<Violation16> {};

TEST_P(BrokenRule16, ThrowsTheRightKindNamingTheArgument) {
  const Violation16& violation = GetParam();
  Call16 call = valid_call(violation.op);
  violation.breaks(call);
  expect_error(call, violation.kind, operation(violation.op), violation.argument, violation.also_said);
}

INSTANTIATE_TEST_SUITE_P(Validate, BrokenRule16, testing::ValuesIn(kViolations16),
                         [](const testing::TestParamInfo<Violation16>& info) { return std::string(info.param.name); });

class ValidCall16 : public testing::TestWithParam<Op16> {};

TEST_P(ValidCall16, IsAccepted) { EXPECT_NO_THROW(valid_call(GetParam()).run()); }

// C of D's 16-bit type, as DeepGEMM's C = D: apart from D, or D itself (accumulation in place).
TEST(Validate16, TakesACOfDsTypeApartFromDOrAsDItself) {
  Call16 apart = valid_call(Op16::Fp16Nt);
  apart.c->dtype = DType::F16;
  EXPECT_NO_THROW(apart.run());
  Call16 in_place = valid_call(Op16::Bf16Nt);
  in_place.c = in_place.d;
  EXPECT_NO_THROW(in_place.run());
}

INSTANTIATE_TEST_SUITE_P(Validate, ValidCall16,
                         testing::Values(Op16::Bf16Nt, Op16::Fp16Nt, Op16::Bf16Tn, Op16::ContiguousBf16Nt,
                                         Op16::ContiguousFp16NnPsum, Op16::MaskedFp16, Op16::KGroupedBf16),
                         [](const testing::TestParamInfo<Op16>& info) { return std::string(operation(info.param)); });

}  // namespace
}  // namespace fgemm
