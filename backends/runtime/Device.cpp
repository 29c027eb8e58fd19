#include "backends/runtime/Device.h"

#include "backends/cuda/CudaDevice.h"
#include "backends/sim/SimDevice.h"
#include "dsl/BufferMemory.h"
#include "dsl/base/Error.h"

#include <cstdlib>
#include <cstring>

namespace aicf {
namespace runtime {

Device &device_from_environment() {
    const char *env = std::getenv("AICF_DEVICE");
    std::string name = env && *env ? env : "";
    if (name == "sim") return backends::sim::sim_device();
    if (name == "cuda") return backends::cuda::cuda_device();
    user_assert(name.empty()) << "AICF_DEVICE=" << name << " is not a device. Valid devices: sim "
                              << "(the simulator) and cuda (the first CUDA GPU).";
    // Unset: the GPU when there is one, the simulator otherwise.
    try {
        return backends::cuda::cuda_device();
    } catch (const RuntimeError &) {
        return backends::sim::sim_device();
    }
}

namespace {
thread_local void *cuda_stream = nullptr;
} // namespace

void *cuda_stream_of_this_thread() {
    return cuda_stream;
}

void set_cuda_stream_of_this_thread(void *stream) {
    cuda_stream = stream;
}

void prepare_on_device(Device &device, aicf_buffer_t *b, const char *name) {
    const aicf_device_interface_t *mem = device.memory();
    char error[512] = {0};
    int64_t bytes = aicf_buffer_footprint(b);
    if (b->device && b->device_interface != mem) {
        auto *other = static_cast<const aicf_device_interface_t *>(b->device_interface);
        runtime_error_report << "Buffer " << name << " holds data on the " << other->name
                             << " device, but the pipeline runs on " << device.name()
                             << ". Copy it to the host first (copy_to_host).";
    }
    if (!b->device) {
        // The device copy mirrors the span of the elements: refuse one that is mostly gaps
        // (two rows 2^31 elements apart would take gigabytes for a few bytes of data).
        const int64_t elements = buffer_elements(b), data = elements * buffer_element_bytes(b);
        if (bytes > (int64_t(64) << 20) && bytes / 64 > data) {
            runtime_error_report << "Buffer " << name << ": its " << elements << " elements ("
                                 << data << " bytes) lie spread over " << bytes
                                 << " bytes of memory, and a GPU pipeline keeps a device copy of "
                                 << "that whole span. Pass a compact copy of the data.";
        }
        if (bytes < 0) {
            runtime_error_report << "Buffer " << name << " has a negative stride; GPU devices "
                                 << "need buffers laid out with non-negative strides.";
        }
        if (mem->device_malloc(b, bytes, error, sizeof error) != 0) {
            runtime_error_report << "Buffer " << name << ": " << error << ".";
        }
        // The device copy starts as the host data.
        if (b->host) b->flags |= AICF_BUFFER_HOST_DIRTY;
    }
    if ((b->flags & AICF_BUFFER_HOST_DIRTY) && b->host) {
        if (mem->copy_to_device(b, bytes, error, sizeof error) != 0) {
            runtime_error_report << "Buffer " << name << ": copying to the " << device.name()
                                 << " device failed: " << error << ".";
        }
    }
    b->flags &= ~uint64_t(AICF_BUFFER_HOST_DIRTY);
}

} // namespace runtime
} // namespace aicf
