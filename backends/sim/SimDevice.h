#ifndef AICF_BACKENDS_SIM_SIM_DEVICE_H
#define AICF_BACKENDS_SIM_SIM_DEVICE_H

#include "backends/runtime/Device.h"

namespace aicf {
namespace backends {
namespace sim {

// The simulator as a device: device memory is separate host memory (so a missing copy
// between host and device shows up as wrong data, as on a GPU), and kernels run on the
// SIMT interpreter.
runtime::Device &sim_device();

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
