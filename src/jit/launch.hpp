// Launching a JIT-compiled kernel, in thread-block clusters and with programmatic dependent launch where asked.
#pragma once

#include "driver/cuda_types.hpp"
#include "jit/kernel_cache.hpp"

namespace fgemm::jit {

struct Dim3 {
  unsigned int x = 1;
  unsigned int y = 1;
  unsigned int z = 1;
};

struct LaunchShape {
  Dim3 grid;     // in blocks; each dimension a multiple of the cluster's
  Dim3 block;    // in threads
  Dim3 cluster;  // in blocks; 1 x 1 x 1 launches without clusters
};

// How a launch orders against the previous kernel of its stream.
enum class StreamOrder {
  AfterPrevious,  // the kernel starts once the previous one has completed
  // Programmatic dependent launch: the kernel may start once every block of the previous one has signalled
  // (griddepcontrol.launch_dependents) or exited, and must itself wait (griddepcontrol.wait) before it touches
  // memory the previous kernel reads or writes.
  OverlapPrevious,
};

// Launches `kernel` on `stream` with the dynamic shared memory of its spec. `args` points to each
// kernel parameter, in order (as for cuLaunchKernel). The caller makes a context of the kernel's device
// current (driver::ensure_context). Throws fgemm::Error: InvalidValue for a shape with a zero dimension
// or a grid that is not a whole number of clusters, Runtime when the driver refuses the launch.
void launch(const Kernel& kernel, const LaunchShape& shape, void** args, driver::CUstream stream,
            StreamOrder order = StreamOrder::AfterPrevious);

// The most clusters of `shape.cluster` that the device runs at once with `kernel` (the SMs of a cluster share a
// GPC, so large clusters leave some SMs idle); the grid of `shape` does not matter. Throws like launch().
int max_active_clusters(const Kernel& kernel, const LaunchShape& shape);

}  // namespace fgemm::jit
