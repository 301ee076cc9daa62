// One small FP8 GEMM on the CPU through fgemm's public header, checked element by element. The operands are
// chosen so that every product and sum is exact in FP32: D[m, n] = sfa[m] * sfb * 128 * 1 * (n + 1).
#include <cstdint>
#include <cstdio>
#include <vector>

#include <fgemm/fgemm.hpp>

int main() {
  constexpr std::int64_t m = 3, n = 4, k = 128;
  // E4M3 codes of 1, 2, 3 and 4: B's row n holds n + 1 everywhere; A holds 1 everywhere.
  const std::uint8_t e4m3_of[n] = {0x38, 0x40, 0x44, 0x48};
  std::vector<std::uint8_t> a(m * k, e4m3_of[0]), b(n * k);
  for (std::int64_t row = 0; row < n; ++row)
    for (std::int64_t col = 0; col < k; ++col) b[row * k + col] = e4m3_of[row];
  std::vector<float> sfa = {1.0f, 2.0f, 0.25f};  // [M, K / 128]
  std::vector<float> sfb = {0.5f};               // [N / 128, K / 128], rounded up
  std::vector<float> d(m * n, -1.0f);

  fgemm::fp8_gemm_nt(fgemm::make_tensor_view(a.data(), fgemm::DType::E4M3, {m, k}),
                     fgemm::make_tensor_view(sfa.data(), fgemm::DType::F32, {m, 1}),
                     fgemm::make_tensor_view(b.data(), fgemm::DType::E4M3, {n, k}),
                     fgemm::make_tensor_view(sfb.data(), fgemm::DType::F32, {1, 1}),
                     fgemm::make_tensor_view(d.data(), fgemm::DType::F32, {m, n}));

  int wrong = 0;
  for (std::int64_t row = 0; row < m; ++row)
    for (std::int64_t col = 0; col < n; ++col) {
      const float expected = sfa[row] * sfb[0] * static_cast<float>(k * (col + 1));
      if (d[row * n + col] != expected) {
        std::printf("D[%lld, %lld] = %g, expected %g\n", static_cast<long long>(row), static_cast<long long>(col),
                    d[row * n + col], expected);
        ++wrong;
      }
    }
  std::printf("fgemm::fp8_gemm_nt on the CPU, %lldx%lldx%lld: %s\n", static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k), wrong == 0 ? "correct" : "WRONG");
  return wrong == 0 ? 0 : 1;
}
