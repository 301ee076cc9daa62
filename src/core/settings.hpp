// Process-wide settings of the public API, read by the backends.
#pragma once

namespace fgemm::detail {

// The SMs the GPU kernels may use; 0 means "all SMs of the device".
int requested_num_sms();
// Sets it; the caller (fgemm::set_num_sms) has checked that num_sms >= 0.
void request_num_sms(int num_sms);

// Whether the GEMM and quantization kernels are launched with programmatic dependent launch (fgemm::set_pdl).
bool programmatic_dependent_launch();
void request_programmatic_dependent_launch(bool enable);

}  // namespace fgemm::detail
