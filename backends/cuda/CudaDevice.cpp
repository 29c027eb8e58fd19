#include "backends/cuda/CudaDevice.h"

#include "backends/runtime/Runtime.h"
#include "dsl/base/Error.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>

namespace aicf {
namespace backends {
namespace cuda {

namespace {

// The few driver API types and constants used, as cuda.h defines them (the toolkit's
// headers are not needed to build AICF).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
const CUresult CUDA_SUCCESS = 0;
const int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
const int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
const int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
const int CU_JIT_ERROR_LOG_BUFFER = 5;
const int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// The driver's entry points. cuda.h maps several names to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2); these are the symbols those macros name.
struct Driver {
    void *library = nullptr;
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuDeviceGetCount)(int *) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice) = nullptr;
    CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
    CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
    CUresult (*cuCtxPopCurrent)(CUcontext *) = nullptr;
    CUresult (*cuCtxSynchronize)() = nullptr;
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
    CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
    CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
    CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
    CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **) = nullptr;
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *) = nullptr;
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **) = nullptr;
    CUresult (*cuGetErrorName)(CUresult, const char **) = nullptr;
    CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;

    CUdevice device = 0;
    CUcontext context = nullptr;
    int capability = 0; // 10 * major + minor
    std::string name;
    std::string failure; // why the driver cannot be used, if it cannot

    std::string describe(CUresult r) const {
        const char *n = nullptr, *s = nullptr;
        if (cuGetErrorName) cuGetErrorName(r, &n);
        if (cuGetErrorString) cuGetErrorString(r, &s);
        return std::string(n ? n : "CUDA error " + std::to_string(r)) +
               (s ? std::string(" (") + s + ")" : "");
    }
};

template <typename F> bool resolve(Driver &d, F &field, const char *symbol) {
    field = reinterpret_cast<F>(dlsym(d.library, symbol));
    if (!field) d.failure = std::string("the driver has no ") + symbol;
    return field != nullptr;
}

Driver &driver() {
    static Driver *d = [] {
        auto *d = new Driver;
        // AICF_CUDA_DRIVER names another driver library (a compatibility driver's path, say).
        const char *env = std::getenv("AICF_CUDA_DRIVER");
        std::string library = env && *env ? env : "libcuda.so.1";
        d->library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!d->library) {
            const char *why = dlerror();
            d->failure =
                "the CUDA driver (" + library + ") could not be loaded: " + (why ? why : "?");
            return d;
        }
        bool ok = resolve(*d, d->cuInit, "cuInit") &&
                  resolve(*d, d->cuDeviceGetCount, "cuDeviceGetCount") &&
                  resolve(*d, d->cuDeviceGet, "cuDeviceGet") &&
                  resolve(*d, d->cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
                  resolve(*d, d->cuDeviceGetName, "cuDeviceGetName") &&
                  resolve(*d, d->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
                  resolve(*d, d->cuCtxPushCurrent, "cuCtxPushCurrent_v2") &&
                  resolve(*d, d->cuCtxPopCurrent, "cuCtxPopCurrent_v2") &&
                  resolve(*d, d->cuCtxSynchronize, "cuCtxSynchronize") &&
                  resolve(*d, d->cuMemAlloc, "cuMemAlloc_v2") &&
                  resolve(*d, d->cuMemFree, "cuMemFree_v2") &&
                  resolve(*d, d->cuMemcpyHtoD, "cuMemcpyHtoD_v2") &&
                  resolve(*d, d->cuMemcpyDtoH, "cuMemcpyDtoH_v2") &&
                  resolve(*d, d->cuMemcpyDtoD, "cuMemcpyDtoD_v2") &&
                  resolve(*d, d->cuModuleLoadDataEx, "cuModuleLoadDataEx") &&
                  resolve(*d, d->cuModuleGetFunction, "cuModuleGetFunction") &&
                  resolve(*d, d->cuFuncSetAttribute, "cuFuncSetAttribute") &&
                  resolve(*d, d->cuLaunchKernel, "cuLaunchKernel") &&
                  resolve(*d, d->cuGetErrorName, "cuGetErrorName") &&
                  resolve(*d, d->cuGetErrorString, "cuGetErrorString");
        if (!ok) return d;
        CUresult r = d->cuInit(0);
        int count = 0;
        if (r == CUDA_SUCCESS) r = d->cuDeviceGetCount(&count);
        if (r != CUDA_SUCCESS || count == 0) {
            d->failure =
                r != CUDA_SUCCESS ? "cuInit failed: " + d->describe(r) : "the driver sees no GPU";
            return d;
        }
        int major = 0, minor = 0;
        char name[256] = {0};
        r = d->cuDeviceGet(&d->device, 0);
        if (r == CUDA_SUCCESS)
            r = d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        d->device);
        if (r == CUDA_SUCCESS)
            r = d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                        d->device);
        if (r == CUDA_SUCCESS) r = d->cuDeviceGetName(name, sizeof name - 1, d->device);
        if (r == CUDA_SUCCESS) r = d->cuDevicePrimaryCtxRetain(&d->context, d->device);
        if (r != CUDA_SUCCESS) {
            d->failure = "setting up the GPU failed: " + d->describe(r);
            return d;
        }
        d->capability = major * 10 + minor;
        d->name = name;
        return d;
    }();
    return *d;
}

Driver &usable_driver() {
    Driver &d = driver();
    if (!d.failure.empty()) {
        runtime_error_report << "AICF_DEVICE=cuda, but " << d.failure
                             << ". Run the kernels on the simulator instead with AICF_DEVICE=sim.";
    }
    return d;
}

// Makes the primary context current for the scope.
class ContextScope {
public:
    explicit ContextScope(Driver &d) : d(d) { d.cuCtxPushCurrent(d.context); }
    ~ContextScope() {
        CUcontext popped;
        d.cuCtxPopCurrent(&popped);
    }

private:
    Driver &d;
};

void set_error(char *error, size_t size, const std::string &what) {
    std::snprintf(error, size, "%s", what.c_str());
}

int cuda_malloc(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size);
void cuda_free(aicf_buffer_t *b);
int cuda_copy_to_device(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size);
int cuda_copy_to_host(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size);

const aicf_device_interface_t interface = {"cuda", cuda_malloc, cuda_free, cuda_copy_to_device,
                                           cuda_copy_to_host};

int cuda_malloc(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size) {
    Driver &d = driver();
    if (!d.failure.empty()) {
        set_error(error, error_size, d.failure);
        return 1;
    }
    ContextScope scope(d);
    CUdeviceptr p = 0;
    CUresult r = bytes < 0 ? 1 : d.cuMemAlloc(&p, size_t(std::max<int64_t>(bytes, 1)));
    if (r != CUDA_SUCCESS) {
        set_error(error, error_size,
                  "cuMemAlloc of " + std::to_string(bytes) + " bytes failed: " + d.describe(r));
        return 1;
    }
    b->device = p;
    b->device_interface = const_cast<aicf_device_interface_t *>(&interface);
    return 0;
}

void cuda_free(aicf_buffer_t *b) {
    Driver &d = driver();
    if (b->device && d.failure.empty()) {
        ContextScope scope(d);
        d.cuMemFree(CUdeviceptr(b->device));
    }
    b->device = 0;
    b->device_interface = nullptr;
    b->flags &= ~uint64_t(AICF_BUFFER_DEVICE_DIRTY | AICF_BUFFER_HOST_DIRTY);
}

int cuda_copy_to_device(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size) {
    Driver &d = driver();
    ContextScope scope(d);
    CUresult r = d.cuMemcpyHtoD(CUdeviceptr(b->device), b->host, size_t(bytes));
    if (r != CUDA_SUCCESS) set_error(error, error_size, "cuMemcpyHtoD failed: " + d.describe(r));
    return r != CUDA_SUCCESS;
}

int cuda_copy_to_host(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size) {
    Driver &d = driver();
    ContextScope scope(d);
    CUresult r = d.cuMemcpyDtoH(b->host, CUdeviceptr(b->device), size_t(bytes));
    if (r != CUDA_SUCCESS) set_error(error, error_size, "cuMemcpyDtoH failed: " + d.describe(r));
    return r != CUDA_SUCCESS;
}

class CudaDevice : public runtime::Device {
public:
    const char *name() const override { return "cuda"; }
    const aicf_device_interface_t *memory() const override { return &interface; }

    void launch(const runtime::CompiledKernel &k, const std::array<int, 3> &grid,
                void *const *args) override {
        Driver &d = usable_driver();
        ContextScope scope(d);
        CUfunction f = function_for(d, k);
        std::vector<CUdeviceptr> pointers(k.params.size());
        std::vector<void *> params(k.params.size());
        for (size_t i = 0; i < k.params.size(); i++) {
            if (k.params[i].is_buffer) {
                pointers[i] = CUdeviceptr(static_cast<aicf_buffer_t *>(args[i])->device);
                // Kernels access a thread's 16 consecutive bytes as one aligned vector where
                // the launch's mins and strides allow: buffers start on 16-byte boundaries.
                if (pointers[i] % 16 != 0) {
                    throw RuntimeError("kernel " + k.name + ": buffer " + k.params[i].name +
                                       " starts at a device address that is not a multiple of "
                                       "16 bytes; device buffers must be 16-byte aligned");
                }
                params[i] = &pointers[i];
            } else {
                params[i] = args[i];
            }
        }
        CheckSlot slot(*this, d, k);
        if (slot.pointer) params.push_back(&slot.pointer);
        CUresult r = d.cuLaunchKernel(
            f, unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]), unsigned(k.threads[0]),
            unsigned(k.threads[1]), unsigned(k.threads[2]), unsigned(k.shared_bytes),
            static_cast<CUstream>(runtime::cuda_stream_of_this_thread()), params.data(), nullptr);
        // Waiting for each kernel lets an error name the kernel that caused it.
        if (r == CUDA_SUCCESS) r = d.cuCtxSynchronize();
        if (r != CUDA_SUCCESS) {
            std::string funcs;
            for (const std::string &fn : k.funcs)
                funcs += (funcs.empty() ? "" : ", ") + fn;
            runtime_error_report << "Kernel " << k.name << " (computing " << funcs << ") failed on "
                                 << d.name << ": " << d.describe(r) << ".";
        }
        slot.raise_if_failed();
    }

private:
    std::mutex lock;
    std::map<uint64_t, CUfunction> functions; // by CompiledKernel::id
    std::vector<CUdeviceptr> free_slots;      // zeroed check slots, reused by launches

    // A launch's check slot (runtime::CheckSlotWord), for a kernel with run-time checks:
    // taken zeroed from the free ones, given back zeroed.
    struct CheckSlot {
        CudaDevice &device;
        Driver &d;
        const runtime::CompiledKernel &k;
        CUdeviceptr pointer = 0;

        CheckSlot(CudaDevice &device, Driver &d, const runtime::CompiledKernel &k)
            : device(device), d(d), k(k) {
            if (k.check_names.empty()) return;
            {
                std::lock_guard<std::mutex> guard(device.lock);
                if (!device.free_slots.empty()) {
                    pointer = device.free_slots.back();
                    device.free_slots.pop_back();
                    return;
                }
            }
            const int64_t zeros[runtime::kCheckSlotWords] = {};
            CUresult r = d.cuMemAlloc(&pointer, sizeof zeros);
            if (r == CUDA_SUCCESS) r = d.cuMemcpyHtoD(pointer, zeros, sizeof zeros);
            if (r != CUDA_SUCCESS) {
                if (pointer) d.cuMemFree(pointer);
                pointer = 0;
                runtime_error_report << "Kernel " << k.name << ": allocating its check slot on "
                                     << d.name << " failed: " << d.describe(r) << ".";
            }
        }
        ~CheckSlot() {
            if (!pointer) return;
            std::lock_guard<std::mutex> guard(device.lock);
            device.free_slots.push_back(pointer);
        }

        // After the launch: raises the message of the check that failed, if one did.
        void raise_if_failed() {
            if (!pointer) return;
            int64_t words[runtime::kCheckSlotWords] = {};
            CUresult r = d.cuMemcpyDtoH(words, pointer, sizeof words);
            if (r != CUDA_SUCCESS) {
                runtime_error_report << "Kernel " << k.name << ": reading its check slot on "
                                     << d.name << " failed: " << d.describe(r) << ".";
            }
            if (words[runtime::kCheckSlotFailed] == 0) return;
            const int64_t zeros[runtime::kCheckSlotWords] = {};
            if (d.cuMemcpyHtoD(pointer, zeros, sizeof zeros) != CUDA_SUCCESS) {
                d.cuMemFree(pointer); // not given back: it may still say that a check failed
                pointer = 0;
            }
            const int64_t name = words[runtime::kCheckSlotName];
            internal_assert(name >= 0 && name < int64_t(k.check_names.size()))
                << "kernel " << k.name << " reported check " << name << " of "
                << k.check_names.size();
            auto triple = [&](int first) {
                return "(" + std::to_string(words[first]) + ", " +
                       std::to_string(words[first + 1]) + ", " + std::to_string(words[first + 2]) +
                       ")";
            };
            throw KernelFault(
                "kernel " + k.name + ": an assertion failed in thread " +
                triple(runtime::kCheckSlotThread) + " of block " +
                triple(runtime::kCheckSlotBlock) + ": " +
                runtime::describe_runtime_error(int32_t(words[runtime::kCheckSlotKind]),
                                                k.check_names[size_t(name)].c_str(),
                                                &words[runtime::kCheckSlotDetails]));
        }
    };

    CUfunction function_for(Driver &d, const runtime::CompiledKernel &k) {
        std::lock_guard<std::mutex> guard(lock);
        auto it = functions.find(k.id);
        if (it != functions.end()) return it->second;
        if (d.capability < k.min_compute_capability) {
            runtime_error_report << "Kernel " << k.name << " was compiled for sm_"
                                 << k.min_compute_capability << ", but the GPU (" << d.name
                                 << ") has compute capability " << d.capability / 10 << "."
                                 << d.capability % 10 << ".";
        }
        const std::string *image = nullptr; // a cubin for this GPU, else the PTX
        for (const auto &cubin : k.cubins)
            if (cubin.first == d.capability) image = &cubin.second;
        if (!image) image = &k.ptx();
        char log[8192] = {0};
        int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof log))};
        CUmodule module = nullptr;
        CUresult r = d.cuModuleLoadDataEx(&module, image->c_str(), 2, options, values);
        if (r != CUDA_SUCCESS) {
            runtime_error_report << "Loading kernel " << k.name << " on " << d.name
                                 << " failed: " << d.describe(r) << "\n"
                                 << log;
        }
        CUfunction f = nullptr;
        r = d.cuModuleGetFunction(&f, module, k.name.c_str());
        internal_assert(r == CUDA_SUCCESS) << "kernel " << k.name << " not found in its module";
        // Above 48 KiB of dynamic shared memory a kernel must opt in.
        if (k.shared_bytes > 48 * 1024) {
            r = d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     int(k.shared_bytes));
            if (r != CUDA_SUCCESS) {
                runtime_error_report << "Kernel " << k.name << " needs " << k.shared_bytes
                                     << " bytes of shared memory, which " << d.name
                                     << " refuses: " << d.describe(r) << ".";
            }
        }
        functions[k.id] = f;
        return f;
    }
};

} // namespace

std::string cuda_device_description() {
    Driver &d = usable_driver();
    return d.name + ", sm_" + std::to_string(d.capability);
}

int cuda_compute_capability() {
    return usable_driver().capability;
}

double cuda_copy_ms(int64_t bytes, int runs) {
    Driver &d = usable_driver();
    ContextScope scope(d);
    CUdeviceptr a = 0, b = 0;
    CUresult r = d.cuMemAlloc(&a, size_t(bytes));
    if (r == CUDA_SUCCESS) r = d.cuMemAlloc(&b, size_t(bytes));
    std::vector<double> times;
    for (int i = 0; r == CUDA_SUCCESS && i <= runs; i++) {
        auto start = std::chrono::steady_clock::now();
        r = d.cuMemcpyDtoD(b, a, size_t(bytes));
        if (r == CUDA_SUCCESS) r = d.cuCtxSynchronize();
        auto end = std::chrono::steady_clock::now();
        if (i > 0) times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    if (a) d.cuMemFree(a);
    if (b) d.cuMemFree(b);
    if (r != CUDA_SUCCESS)
        runtime_error_report << "Timing a device copy failed: " << d.describe(r) << ".";
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

runtime::Device &cuda_device() {
    static CudaDevice *device = new CudaDevice;
    usable_driver();
    return *device;
}

} // namespace cuda
} // namespace backends
} // namespace aicf
