// Process-wide settings of the public API.
#pragma once

namespace fgemm::detail {

// 0 means "all SMs of the device".
int requested_num_sms();

}  // namespace fgemm::detail
