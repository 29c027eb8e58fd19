#ifndef AICF_BACKENDS_RUNTIME_DEVICE_H
#define AICF_BACKENDS_RUNTIME_DEVICE_H

// A device runs kernels and owns device memory: `sim` (the SIMT simulator, always present)
// and `cuda` (a GPU, through the driver API). Pipelines pick one when they run.

#include "backends/runtime/CompiledKernel.h"
#include "dsl/BufferABI.h"

#include <array>
#include <string>

namespace aicf {
namespace runtime {

class Device {
public:
    virtual ~Device() = default;
    virtual const char *name() const = 0;
    // The memory operations buffers use to reach this device.
    virtual const aicf_device_interface_t *memory() const = 0;
    // Runs `kernel` over `grid`. `args` follow kernel.params: an aicf_buffer_t * whose data
    // is on this device for buffers, a pointer to the value for scalars. Raises RuntimeError.
    virtual void launch(const CompiledKernel &kernel, const std::array<int, 3> &grid,
                        void *const *args) = 0;
};

// The device named by AICF_DEVICE: `sim` or `cuda`; when unset, the GPU if this machine
// has one (a CUDA driver and a device), else the simulator. Raises RuntimeError for a
// device that is not available here, and CompileError for a name that is not a device.
Device &device_from_environment();

// The CUDA stream (a CUstream) the kernels this thread launches run on, as the caller of a
// compiled pipeline set it (aicf_set_cuda_stream); null: the default stream.
void *cuda_stream_of_this_thread();
void set_cuda_stream_of_this_thread(void *stream);

// Makes `b`'s data current on `device` (allocating there and copying from the host when
// needed). Raises RuntimeError when the device fails or the buffer cannot live there.
void prepare_on_device(Device &device, aicf_buffer_t *b, const char *name);

} // namespace runtime
} // namespace aicf

#endif
