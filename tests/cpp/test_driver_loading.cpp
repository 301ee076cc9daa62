#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device.hpp"
#include "driver/nvrtc.hpp"
#include "fgemm/error.hpp"
#include "test_jit_support.hpp"

namespace fgemm::driver {
namespace {

using test::contains;
using test::thrown_error;

// On a machine without a GPU (as in CI) the driver is refused with Unsupported; with one, it loads.
TEST(CudaDriver, LoadsOrIsRefusedCleanly) {
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second call answers the same, from memory
    try {
      const CudaDriver& driver = cuda();
      EXPECT_GE(driver.version, 12000);
      EXPECT_GT(device_count(), 0);
      const DeviceProperties& device = device_properties(0);
      EXPECT_GT(device.sm_count, 0);
      EXPECT_GT(device.l2_cache_bytes, 0);
      EXPECT_FALSE(device.name.empty());
      EXPECT_EQ(&device_properties(0), &device);
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
      EXPECT_TRUE(contains(error.what(), "the CUDA driver cannot be used")) << error.what();
      EXPECT_EQ(device_count(), 0);
    }
  }
}

TEST(CudaDriver, DeviceFunctionsFailCleanlyWithoutADriverOrForABadIndex) {
  const bool has_device = device_count() > 0;
  if (!has_device) {
    EXPECT_EQ(thrown_error([] { ensure_context(0); }).kind(), ErrorKind::Unsupported);
    EXPECT_EQ(thrown_error([] { device_properties(0); }).kind(), ErrorKind::Unsupported);
  }
  const Error error = thrown_error([] { device_handle(-1); });
  EXPECT_EQ(error.kind(), has_device ? ErrorKind::InvalidValue : ErrorKind::Unsupported) << error.what();
}

TEST(CudaDriver, CheckNamesTheCallAndTheResult) {
  EXPECT_NO_THROW(check(CUDA_SUCCESS, "cuInit"));
  const Error error = thrown_error([] { check(CUDA_ERROR_NO_DEVICE, "cuDeviceGet"); });
  EXPECT_EQ(error.kind(), ErrorKind::Runtime);
  EXPECT_TRUE(contains(error.what(), "cuDeviceGet failed")) << error.what();
  EXPECT_TRUE(contains(error.what(), "code 100")) << error.what();
  if (device_count() > 0) {
    EXPECT_TRUE(contains(error.what(), "CUDA_ERROR_NO_DEVICE")) << error.what();
  }
}

TEST(Nvrtc, CandidatesComeInTheDocumentedOrder) {
  const test::ScopedEnvironment path("FGEMM_NVRTC_PATH", "/chosen/libnvrtc.so.13");
  const test::ScopedEnvironment cuda_home("CUDA_HOME", "/opt/cuda");
  add_nvrtc_search_dir("/wheel/lib");
  const std::vector<std::string> candidates = nvrtc_candidates();
  const auto position = [&](const std::string& candidate) {
    const auto found = std::find(candidates.begin(), candidates.end(), candidate);
    EXPECT_NE(found, candidates.end()) << candidate;
    return found - candidates.begin();
  };
  EXPECT_EQ(position("/chosen/libnvrtc.so.13"), 0);
  EXPECT_LT(position("/wheel/lib/libnvrtc.so.13"), position("/wheel/lib/libnvrtc.so.12"));
  EXPECT_LT(position("/wheel/lib/libnvrtc.so"), position("/opt/cuda/lib64/libnvrtc.so.13"));
  EXPECT_LT(position("/opt/cuda/lib64/libnvrtc.so"), position("/usr/local/cuda/lib64/libnvrtc.so.13"));
  EXPECT_LT(position("/usr/local/cuda/lib64/libnvrtc.so"), position("libnvrtc.so.13"));
  EXPECT_EQ(candidates.back(), "libnvrtc.so");
}

TEST(Nvrtc, AFailedSearchListsEveryPlaceTried) {
  const Error error = thrown_error([] { load_nvrtc({"/nonexistent/libnvrtc.so.13", "libm.so.6"}); });
  EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  EXPECT_TRUE(contains(error.what(), "/nonexistent/libnvrtc.so.13: ")) << error.what();
  EXPECT_TRUE(contains(error.what(), "libm.so.6: opened, but it lacks NVRTC's functions")) << error.what();
  EXPECT_TRUE(contains(error.what(), "FGEMM_NVRTC_PATH")) << error.what();
}

// The toolkit, or the nvidia-cuda-nvrtc wheel, is installed wherever the tests run.
TEST(Nvrtc, LoadsAndCanBeLoadedFromItsPath) {
  const Nvrtc& loaded = nvrtc();
  EXPECT_GE(loaded.major, 12);
  EXPECT_EQ(&nvrtc(), &loaded);
  const Nvrtc again = load_nvrtc({"/nonexistent/libnvrtc.so", loaded.path});
  EXPECT_EQ(again.path, loaded.path);
  EXPECT_EQ(again.major, loaded.major);
  EXPECT_EQ(again.minor, loaded.minor);
}

}  // namespace
}  // namespace fgemm::driver
