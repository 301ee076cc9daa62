#include "jit/launch.hpp"

#include <string>

#include "driver/cuda_driver.hpp"
#include "fgemm/error.hpp"

namespace fgemm::jit {
namespace {

std::string to_string(const Dim3& dim) {
  return "(" + std::to_string(dim.x) + ", " + std::to_string(dim.y) + ", " + std::to_string(dim.z) + ")";
}

bool has_zero(const Dim3& dim) { return dim.x == 0 || dim.y == 0 || dim.z == 0; }

// The message is built only for a bad shape: launches are on every GEMM call's path.
void validate(const Kernel& kernel, const LaunchShape& shape) {
  const auto launch_of = [&] { return "fgemm: launch of kernel '" + kernel.name + "': "; };
  if (has_zero(shape.grid) || has_zero(shape.block) || has_zero(shape.cluster))
    throw Error(ErrorKind::InvalidValue, launch_of() +
                                             "grid, block and cluster dimensions must be >= 1, got grid " +
                                             to_string(shape.grid) + ", block " + to_string(shape.block) +
                                             ", cluster " + to_string(shape.cluster));
  if (shape.grid.x % shape.cluster.x != 0 || shape.grid.y % shape.cluster.y != 0 ||
      shape.grid.z % shape.cluster.z != 0)
    throw Error(ErrorKind::InvalidValue,
                launch_of() + "the grid must be a multiple of the cluster in each dimension, got grid " +
                    to_string(shape.grid) + " and cluster " + to_string(shape.cluster));
}

// The launch attributes a launch needs: its cluster's dimensions, and programmatic dependent launch.
struct LaunchAttributes {
  driver::CUlaunchAttribute values[2];
  unsigned int count = 0;
};

// The driver's description of a launch of `kernel` in `shape` on `stream`, whose attributes `attributes` holds.
driver::CUlaunchConfig launch_config(const Kernel& kernel, const LaunchShape& shape, driver::CUstream stream,
                                     StreamOrder order, LaunchAttributes& attributes) {
  attributes = LaunchAttributes{};
  if (shape.cluster.x * shape.cluster.y * shape.cluster.z > 1) {
    driver::CUlaunchAttribute& cluster = attributes.values[attributes.count++];
    cluster.id = driver::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = shape.cluster.x;
    cluster.value.clusterDim.y = shape.cluster.y;
    cluster.value.clusterDim.z = shape.cluster.z;
  }
  if (order == StreamOrder::OverlapPrevious) {
    driver::CUlaunchAttribute& overlap = attributes.values[attributes.count++];
    overlap.id = driver::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmaticStreamSerializationAllowed = 1;
  }

  driver::CUlaunchConfig config{};
  config.gridDimX = shape.grid.x;
  config.gridDimY = shape.grid.y;
  config.gridDimZ = shape.grid.z;
  config.blockDimX = shape.block.x;
  config.blockDimY = shape.block.y;
  config.blockDimZ = shape.block.z;
  config.sharedMemBytes = static_cast<unsigned int>(kernel.dynamic_smem_bytes);
  config.hStream = stream;
  config.attrs = attributes.count > 0 ? attributes.values : nullptr;
  config.numAttrs = attributes.count;
  return config;
}

}  // namespace

void launch(const Kernel& kernel, const LaunchShape& shape, void** args, driver::CUstream stream, StreamOrder order) {
  validate(kernel, shape);
  LaunchAttributes attributes;
  const driver::CUlaunchConfig config = launch_config(kernel, shape, stream, order, attributes);
  const driver::CUresult result = driver::cuda().cuLaunchKernelEx(&config, kernel.function, args, nullptr);
  if (result != driver::CUDA_SUCCESS)
    driver::check(result, ("cuLaunchKernelEx of kernel " + kernel.name).c_str());
}

int max_active_clusters(const Kernel& kernel, const LaunchShape& shape) {
  validate(kernel, shape);
  LaunchAttributes attributes;
  const driver::CUlaunchConfig config = launch_config(kernel, shape, nullptr, StreamOrder::AfterPrevious, attributes);
  int clusters = 0;
  driver::check(driver::cuda().cuOccupancyMaxActiveClusters(&clusters, kernel.function, &config),
                ("cuOccupancyMaxActiveClusters of kernel " + kernel.name).c_str());
  return clusters;
}

}  // namespace fgemm::jit
