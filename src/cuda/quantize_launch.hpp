// What the host sides of the quantization kernels share (quantize.cpp: FP8 and the scales' copy;
// quantize_int8.cpp: INT8): the kernels' view of a matrix stack, the grid and its limits, when the kernels may
// move 16 bytes at a time, the generated entry point, and the launch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/quantize_problem.hpp"
#include "fgemm/fgemm.hpp"
#include "fgemm/quantize_params.cuh"
#include "jit/kernel_spec.hpp"
#include "jit/launch.hpp"

namespace fgemm::cuda {

// The largest grid: 2^31 - 1 CTAs along x, 65535 along y and z.
constexpr std::int64_t kMaxGridX = 0x7fffffff;
constexpr std::int64_t kMaxGridYZ = 65535;

// The kernels' view of a validated matrix stack, `data` being its base pointer as the kernel types it.
template <typename T, typename U>
quant::Stack<T> kernel_stack(const detail::StridedStack<U>& strided, T* data) {
  return {data, strided.group_stride, strided.row_stride, strided.col_stride};
}

// Throws fgemm::Error(InvalidValue): "fgemm.<op>: argument '<arg>' <what>, more than the GPU kernel's grid holds".
[[noreturn]] void too_large(const char* op, const char* arg, const std::string& what);

// The grid (ctas, groups) of a kernel over `groups` matrices of rows x cols: throws naming `op` and the input
// `arg` where the grid or the kernel's 32-bit indices cannot hold the problem.
jit::Dim3 quantize_grid(std::int64_t ctas, std::int64_t groups, std::int64_t rows, std::int64_t cols, const char* op,
                        const char* arg);

// Whether the kernels may move 16 bytes at a time: every thread's 16 elements start 16-byte aligned in x and in
// the codes (one byte each), and K is a multiple of 16.
bool can_vectorize(DType input, std::int64_t groups, std::int64_t rows, std::int64_t cols,
                   const detail::StridedStack<const void>& x, const void* codes, std::int64_t codes_row_stride,
                   std::int64_t codes_group_stride);

// The name of the kernels' input type for `input` (BF16, F16 or F32): "Bf16", "F16" or "F32".
const char* kernel_input_type(DType input);

const char* cpp_bool(bool value);

// The source of the kernel `symbol`: a comment naming it, #include of each of `headers`, and an entry point of
// kThreadsPerCta threads whose body waits for the previous grid and lets the next one start (programmatic
// dependent launch), then runs `call`, given `const fgemm::quant::<params_type> params`. With
// `min_ctas_per_sm` > 0, the entry point's launch bounds tell ptxas so many CTAs per SM suffice (it may then
// give each thread more registers).
jit::KernelSpec quantize_kernel_source(const std::string& name, const char* symbol,
                                       std::initializer_list<const char*> headers, const char* params_type,
                                       const std::string& call, int min_ctas_per_sm = 0);

// Makes `device` current (an sm_90 GPU), gets the kernel `name` (built from make_spec() on its first use) and
// launches it on `stream` with kThreadsPerCta threads per CTA and the parameter block at `params` as its one
// argument, to overlap the previous kernel where fgemm::set_pdl asks.
void launch_quantize_kernel(int device, const std::string& name, const std::function<jit::KernelSpec()>& make_spec,
                            const jit::Dim3& grid, void* params, Stream stream);

}  // namespace fgemm::cuda
