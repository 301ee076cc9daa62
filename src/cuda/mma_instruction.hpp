// The wgmma instructions the sm90 kernels use, generated from one table of input types, accumulator types and
// valid N: wgmma names each accumulator register, so every (type, N) pair is an asm statement of its own.
#pragma once

#include <string>

namespace fgemm::cuda {

enum class MmaType {
  E4m3F32,  // FP8 E4M3 x E4M3 into FP32, k32
  Bf16F32,  // BF16 x BF16 into FP32, k16
  F16F32,   // FP16 x FP16 into FP32, k16
  S8S32,    // INT8 x INT8 into INT32, k32
};

// Whether wgmma m64nNk* exists for the type (the PTX ISA's list of N).
bool mma_n_is_valid(MmaType type, int n);

// The source of `struct fgemm::sm90::Wgmma`, one m64nNk* wgmma with both operands read from shared memory
// through descriptors: static members N and K, and mma(d, desc_a, desc_b, accumulate). A 16-bit operand may be
// MN-major (transposed); FP8 and INT8 operands are K-major. Throws fgemm::Error(InvalidValue) for an N the
// instruction lacks or a transpose the type cannot take.
std::string mma_struct_source(MmaType type, int n, bool transpose_a = false, bool transpose_b = false);

}  // namespace fgemm::cuda
