// Which instruction set the CPU backend runs: the best one the CPU has, or the one FGEMM_CPU_ISA names.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "cpu/isa.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::cpu {

// Found by argument-dependent lookup, so it must live in Isa's own namespace.
void PrintTo(Isa isa, std::ostream* out) { *out << isa_name(isa); }

namespace {

bool has_everything(Isa) { return true; }
bool has_up_to_avx2(Isa isa) { return isa == Isa::Scalar || isa == Isa::Avx2; }
bool has_scalar_only(Isa isa) { return isa == Isa::Scalar; }

// Sets FGEMM_CPU_ISA for as long as it lives.
class ScopedIsaVariable {
 public:
  explicit ScopedIsaVariable(const char* value) { setenv("FGEMM_CPU_ISA", value, 1); }
  ~ScopedIsaVariable() { unsetenv("FGEMM_CPU_ISA"); }
};

// The message of the fgemm::Error `call` throws, after checking that it throws one of `kind`.
template <class Call>
std::string error_message(Call call, ErrorKind kind) {
  try {
    call();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), kind) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

testing::AssertionResult mentions(const std::string& message, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts)
    if (message.find(part) == std::string::npos)
      return testing::AssertionFailure() << "'" << part << "' not in: " << message;
  return testing::AssertionSuccess();
}

std::string isa_test_name(const testing::TestParamInfo<Isa>& info) { return isa_name(info.param); }

class IsaByName : public testing::TestWithParam<Isa> {};

TEST_P(IsaByName, IsChosenWhenTheCpuHasIt) { EXPECT_EQ(resolve_isa(isa_name(GetParam()), has_everything), GetParam()); }

INSTANTIATE_TEST_SUITE_P(cpu, IsaByName, testing::ValuesIn(kAllIsas), isa_test_name);

class IsaTheCpuLacks : public testing::TestWithParam<Isa> {};

TEST_P(IsaTheCpuLacks, IsAnUnsupportedErrorListingWhatTheCpuHas) {
  const std::string message =
      error_message([] { resolve_isa(isa_name(GetParam()), has_scalar_only); }, ErrorKind::Unsupported);
  EXPECT_TRUE(mentions(message, {"FGEMM_CPU_ISA", isa_name(GetParam()), "supports: scalar"}));
}

INSTANTIATE_TEST_SUITE_P(cpu, IsaTheCpuLacks, testing::Values(Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16, Isa::AmxBf16), isa_test_name);

struct Cpu {
  const char* name;
  bool (*supported)(Isa);
  Isa best;
};

void PrintTo(const Cpu& cpu, std::ostream* out) { *out << cpu.name; }

class DefaultIsa : public testing::TestWithParam<Cpu> {};

TEST_P(DefaultIsa, IsTheBestTheCpuHasWhenNoneIsNamed) {
  EXPECT_EQ(resolve_isa(nullptr, GetParam().supported), GetParam().best);
  EXPECT_EQ(resolve_isa("", GetParam().supported), GetParam().best);
}

INSTANTIATE_TEST_SUITE_P(cpu, DefaultIsa,
                         testing::Values(Cpu{"everything", has_everything, Isa::AmxBf16},
                                         Cpu{"up_to_avx2", has_up_to_avx2, Isa::Avx2},
                                         Cpu{"scalar_only", has_scalar_only, Isa::Scalar}),
                         [](const testing::TestParamInfo<Cpu>& info) { return std::string(info.param.name); });

class UnknownIsaName : public testing::TestWithParam<const char*> {};

TEST_P(UnknownIsaName, IsAnInvalidValueErrorListingTheNames) {
  const std::string message = error_message([] { resolve_isa(GetParam(), has_everything); }, ErrorKind::InvalidValue);
  EXPECT_TRUE(mentions(message, {"FGEMM_CPU_ISA", GetParam(), "amx_bf16, avx512_bf16, avx512, avx2, scalar"}));
}

// The public operation reports it too, before touching anything.
TEST_P(UnknownIsaName, MakesTheCpuBackendThrow) {
  alignas(16) std::uint8_t a[16] = {}, b[16 * 16] = {};
  alignas(16) float sfa[1] = {1.0f}, sfb[1] = {1.0f}, d[16] = {};
  const ScopedIsaVariable variable(GetParam());
  const std::string message = error_message(
      [&] {
        fp8_gemm_nt(make_tensor_view(a, DType::E4M3, {1, 16}), make_tensor_view(sfa, DType::F32, {1, 1}),
                    make_tensor_view(b, DType::E4M3, {16, 16}), make_tensor_view(sfb, DType::F32, {1, 1}),
                    make_tensor_view(d, DType::F32, {1, 16}));
      },
      ErrorKind::InvalidValue);
  EXPECT_TRUE(mentions(message, {"FGEMM_CPU_ISA", GetParam()}));
}

INSTANTIATE_TEST_SUITE_P(cpu, UnknownIsaName, testing::Values("avx9", "AVX512", "avx512 ", "sse4"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           std::string name;
                           for (const char* c = info.param; *c; ++c) name += std::isalnum(*c) ? *c : '_';
                           return name + "_" + std::to_string(info.index);
                         });

class EnvironmentVariable : public testing::TestWithParam<Isa> {};

TEST_P(EnvironmentVariable, SelectsTheIsaItNames) {
  if (!cpu_supports(GetParam())) GTEST_SKIP() << "this CPU lacks the instruction set " << isa_name(GetParam());
  const ScopedIsaVariable variable(isa_name(GetParam()));
  EXPECT_EQ(selected_isa(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(cpu, EnvironmentVariable, testing::ValuesIn(kAllIsas), isa_test_name);

}  // namespace
}  // namespace fgemm::cpu
