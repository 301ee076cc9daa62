// How the GPU kernels are ordered against the previous kernel of their stream.
#pragma once

#include "jit/launch.hpp"

namespace fgemm::cuda {

// OverlapPrevious where fgemm::set_pdl asks, else AfterPrevious. Every kernel of the backend waits for the
// previous grid (griddepcontrol.wait: gemm_kernel.cuh, and the quantizers' entry points) before it touches global
// memory, so each may be launched to overlap it.
jit::StreamOrder kernel_stream_order();

}  // namespace fgemm::cuda
