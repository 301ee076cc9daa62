// The GPU backend: runs a validated problem on an sm90 (Hopper) device with JIT-compiled kernels.
#pragma once

#include "core/problem.hpp"
#include "cuda/heuristics.hpp"
#include "driver/device.hpp"
#include "fgemm/fgemm.hpp"
#include "jit/kernel_spec.hpp"

namespace fgemm::cuda {

void gemm(const detail::GemmProblem& problem, Stream stream);

// The limits the heuristics choose for on `device` (a Hopper device, use_hopper_device): its SMs (or
// set_num_sms's), its shared memory, its DRAM bandwidth.
DeviceLimits gemm_device_limits(int device);

// The device's peak DRAM bytes per SM clock cycle: two transfers per memory clock over the whole bus (an H100 SXM's
// 2619 MHz x 5120 bits, 1693 bytes per cycle of its 1980 MHz SMs; an H200's 3201 MHz x 6016 bits, 2431), or 0
// where the driver reports no clocks.
double dram_bytes_per_cycle_of(const driver::DeviceProperties& properties);

// The configuration force_config imposes (all 0: none).
BlockShape forced_config();

// The source and launch needs of the kernel of `config`.
jit::KernelSpec gemm_kernel_spec(const KernelConfig& config);

// Multiprocessors of the current device, or 0 where no GPU can be used.
int device_sm_count();

// For tuning and tests: run every later GEMM with this tile shape, cluster shape (cluster 0 x 0: the heuristics
// pick it; the grid is always theirs), split-K (0: the heuristics' choice without a forced tile, no split with
// one), for GEMMs with a C of their own, ring of C (0: the heuristics' choice), and stages (0: the most that fit),
// or with the heuristics' choice again when all are 0. A later GEMM throws fgemm::Error(InvalidValue) if the
// kernel cannot run the shape there.
void force_config(int block_m, int block_n, int cluster_m, int cluster_n, int split_k, int c_slots, int num_stages);

}  // namespace fgemm::cuda
