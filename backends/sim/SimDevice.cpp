#include "backends/sim/SimDevice.h"

#include "backends/sim/Simulator.h"
#include "dsl/base/Error.h"

#include <cstdio>
#include <cstring>
#include <new>

namespace aicf {
namespace backends {
namespace sim {

namespace {

// One device allocation; the buffer's `device` field points at it.
struct Allocation {
    uint8_t *data = nullptr;
    int64_t bytes = 0;
};

// Device memory beyond this is refused, as a GPU without that much memory would.
const int64_t max_allocation_bytes = int64_t(1) << 36;

int sim_malloc(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size) {
    uint8_t *data = nullptr;
    if (bytes >= 0 && bytes <= max_allocation_bytes) {
        data = new (std::nothrow) uint8_t[size_t(std::max<int64_t>(bytes, 1))];
    }
    if (!data) {
        std::snprintf(error, error_size, "the sim device cannot allocate %lld bytes",
                      static_cast<long long>(bytes));
        return 1;
    }
    // Fresh device memory holds garbage on a GPU: all-ones bytes read as NaN or -1.
    std::memset(data, 0xff, size_t(std::max<int64_t>(bytes, 1)));
    b->device = reinterpret_cast<uint64_t>(new Allocation{data, bytes});
    b->device_interface = const_cast<aicf_device_interface_t *>(sim_device().memory());
    return 0;
}

void sim_free(aicf_buffer_t *b) {
    auto *a = reinterpret_cast<Allocation *>(b->device);
    if (a) {
        delete[] a->data;
        delete a;
    }
    b->device = 0;
    b->device_interface = nullptr;
    b->flags &= ~uint64_t(AICF_BUFFER_DEVICE_DIRTY | AICF_BUFFER_HOST_DIRTY);
}

int sim_copy(aicf_buffer_t *b, int64_t bytes, bool to_device, char *error, size_t error_size) {
    auto *a = reinterpret_cast<Allocation *>(b->device);
    if (!a || !b->host || bytes < 0 || bytes > a->bytes) {
        std::snprintf(error, error_size, "cannot copy %lld bytes %s a device allocation of %lld",
                      static_cast<long long>(bytes), to_device ? "to" : "from",
                      static_cast<long long>(a ? a->bytes : 0));
        return 1;
    }
    if (to_device) {
        std::memcpy(a->data, b->host, size_t(bytes));
    } else {
        std::memcpy(b->host, a->data, size_t(bytes));
    }
    return 0;
}

int sim_copy_to_device(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size) {
    return sim_copy(b, bytes, true, error, error_size);
}
int sim_copy_to_host(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size) {
    return sim_copy(b, bytes, false, error, error_size);
}

const aicf_device_interface_t interface = {"sim", sim_malloc, sim_free, sim_copy_to_device,
                                           sim_copy_to_host};

class SimDevice : public runtime::Device {
public:
    const char *name() const override { return "sim"; }
    const aicf_device_interface_t *memory() const override { return &interface; }

    void launch(const runtime::CompiledKernel &kernel, const std::array<int, 3> &grid,
                void *const *args) override {
        std::vector<LaunchArgument> values(kernel.params.size());
        for (size_t i = 0; i < kernel.params.size(); i++) {
            const runtime::KernelParameter &a = kernel.params[i];
            if (a.is_buffer) {
                auto *b = static_cast<aicf_buffer_t *>(args[i]);
                auto *alloc = reinterpret_cast<Allocation *>(b->device);
                internal_assert(alloc && b->device_interface == &interface)
                    << "sim launch: buffer " << a.name << " is not on the sim device";
                values[i].data = alloc->data;
                values[i].bytes = alloc->bytes;
            } else {
                std::memcpy(&values[i].bits, args[i], size_t(a.scalar_bytes));
            }
        }
        sim::launch(kernel.ir(), grid, values);
    }
};

} // namespace

runtime::Device &sim_device() {
    static SimDevice *device = new SimDevice;
    return *device;
}

} // namespace sim
} // namespace backends
} // namespace aicf
