// The one check that a device can run the sm90 kernels, made before any of them is chosen or compiled.
#pragma once

namespace fgemm::cuda {

// Makes `device`'s primary context current (unless a context of it is) and throws fgemm::Error(Unsupported)
// unless it is an sm_90 (Hopper) device: the kernels are compiled for sm_90a, which runs there only.
void use_hopper_device(int device);

}  // namespace fgemm::cuda
