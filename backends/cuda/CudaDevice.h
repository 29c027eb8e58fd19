#ifndef AICF_BACKENDS_CUDA_CUDA_DEVICE_H
#define AICF_BACKENDS_CUDA_CUDA_DEVICE_H

#include "backends/runtime/Device.h"

#include <cstdint>
#include <string>

namespace aicf {
namespace backends {
namespace cuda {

// The first CUDA GPU, through the driver API: libcuda.so.1 (or the library AICF_CUDA_DRIVER
// names) is loaded with dlopen when this is first called (never linked), and its primary context is
// used, so buffers and kernels share memory with other CUDA libraries in the process. Kernels are
// compiled to PTX for their target on first launch and loaded once. Raises RuntimeError, saying to
// use AICF_DEVICE=sim, when there is no driver or no GPU.
runtime::Device &cuda_device();

// The GPU's name and compute capability ("NVIDIA H200, sm_90"); RuntimeError without one.
std::string cuda_device_description();
// Its compute capability as 10 * major + minor (90 for sm_90); RuntimeError without one.
int cuda_compute_capability();

// The median time of a device-to-device copy of `bytes` by the driver (cuMemcpyDtoD), in
// milliseconds: the bandwidth peer for GPU benchmarks.
double cuda_copy_ms(int64_t bytes, int runs);

} // namespace cuda
} // namespace backends
} // namespace aicf

#endif
