// fgemm on host memory: quantize two FP32 matrices to FP8 E4M3 with DeepSeek-V3's fine-grained scales
// (A per 1x128 block, B per 128x128 block), multiply them with fgemm::fp8_gemm_nt into BF16, and compare
// with the FP32 product of the original matrices.
//
//   gemm_cpu [M N K]      (default 256 1024 2048; K a multiple of 16)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "fgemm/fgemm.hpp"

namespace {

constexpr std::int64_t kBlock = 128;
constexpr float kE4m3Max = 448.0f;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The nearest E4M3 byte to x (|x| <= 448), ties to even.
std::uint8_t to_e4m3(float x) {
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float magnitude = std::min(std::fabs(x), kE4m3Max);
  if (magnitude < std::ldexp(1.0f, -6))  // subnormal: a multiple of 2^-9 (8 * 2^-9 is the smallest normal)
    return sign | static_cast<std::uint8_t>(std::nearbyint(std::ldexp(magnitude, 9)));
  int exponent = std::ilogb(magnitude);
  int mantissa = static_cast<int>(std::nearbyint(std::ldexp(magnitude, 3 - exponent))) - 8;
  if (mantissa == 8) mantissa = 0, ++exponent;
  return sign | static_cast<std::uint8_t>(((exponent + 7) << 3) | mantissa);
}

float from_bf16(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// x [rows, cols] (row-major) quantized in blocks of block_rows x 128: each block scaled so that its largest
// magnitude maps to 448; scales [ceil(rows / block_rows), ceil(cols / 128)].
void quantize(const std::vector<float>& x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
              std::vector<std::uint8_t>& codes, std::vector<float>& scales) {
  const std::int64_t row_blocks = ceil_div(rows, block_rows), col_blocks = ceil_div(cols, kBlock);
  codes.assign(rows * cols, 0);
  scales.assign(row_blocks * col_blocks, 1.0f);
  for (std::int64_t rb = 0; rb < row_blocks; ++rb)
    for (std::int64_t cb = 0; cb < col_blocks; ++cb) {
      const std::int64_t r1 = std::min(rows, (rb + 1) * block_rows), c1 = std::min(cols, (cb + 1) * kBlock);
      float amax = 0.0f;
      for (std::int64_t r = rb * block_rows; r < r1; ++r)
        for (std::int64_t c = cb * kBlock; c < c1; ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
      const float scale = amax > 0.0f ? amax / kE4m3Max : 1.0f;
      scales[rb * col_blocks + cb] = scale;
      for (std::int64_t r = rb * block_rows; r < r1; ++r)
        for (std::int64_t c = cb * kBlock; c < c1; ++c) codes[r * cols + c] = to_e4m3(x[r * cols + c] / scale);
    }
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t m = argc > 3 ? std::atoll(argv[1]) : 256;
  const std::int64_t n = argc > 3 ? std::atoll(argv[2]) : 1024;
  const std::int64_t k = argc > 3 ? std::atoll(argv[3]) : 2048;

  std::mt19937 random(2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(m * k), b(n * k);
  for (float& x : a) x = normal(random);
  for (float& x : b) x = normal(random);

  std::vector<std::uint8_t> a_fp8, b_fp8;
  std::vector<float> sfa, sfb;
  quantize(a, m, k, 1, a_fp8, sfa);       // activations: one scale per row and 128 values of K
  quantize(b, n, k, kBlock, b_fp8, sfb);  // weights: one scale per 128 x 128 block
  std::vector<std::uint16_t> d(m * n);    // BF16

  const std::int64_t k_blocks = ceil_div(k, kBlock);
  const auto start = std::chrono::steady_clock::now();
  try {
    fgemm::fp8_gemm_nt(fgemm::make_tensor_view(a_fp8.data(), fgemm::DType::E4M3, {m, k}),
                       fgemm::make_tensor_view(sfa.data(), fgemm::DType::F32, {m, k_blocks}),
                       fgemm::make_tensor_view(b_fp8.data(), fgemm::DType::E4M3, {n, k}),
                       fgemm::make_tensor_view(sfb.data(), fgemm::DType::F32, {ceil_div(n, kBlock), k_blocks}),
                       fgemm::make_tensor_view(d.data(), fgemm::DType::BF16, {m, n}));
  } catch (const fgemm::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // calc_diff of ARCHITECTURE.md (Semantics) against the FP32 inputs before quantization (double sums).
  double cross = 0.0, squares = 0.0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double exact = 0.0;
      for (std::int64_t l = 0; l < k; ++l) exact += static_cast<double>(a[i * k + l]) * b[j * k + l];
      const double got = from_bf16(d[i * n + j]);
      cross += got * exact;
      squares += got * got + exact * exact;
    }
  std::printf("D = A * B^T, M=%lld N=%lld K=%lld, FP8 E4M3 inputs, BF16 output, on the CPU\n",
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k));
  std::printf("D[0, :4] =");
  for (std::int64_t j = 0; j < std::min<std::int64_t>(n, 4); ++j) std::printf(" %.4f", from_bf16(d[j]));
  std::printf("\n");
  std::printf("calc_diff against the unquantized FP32 product: %.2e\n", 1.0 - 2.0 * cross / squares);
  std::printf("time: %.2f ms (%.1f GFLOPS, first call included)\n", seconds * 1e3, 2.0 * m * n * k / seconds / 1e9);
  return 0;
}
