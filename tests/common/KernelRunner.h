#ifndef AICF_TESTS_KERNEL_RUNNER_H
#define AICF_TESTS_KERNEL_RUNNER_H

// Kernels written directly in kernel IR, run as one block on the device AICF_DEVICE names
// (the simulator, or a GPU through the driver, which compiles them to PTX for sm_80 unless the
// test names another target), with buffers copied there and back: for tests of single
// instructions and their checks.

#include "backends/cuda/CudaDevice.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "backends/runtime/CompiledKernel.h"
#include "backends/runtime/Device.h"
#include "dsl/aicf.h"
#include "lowering/Kernel.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace aicf_test {

using namespace aicf;
using namespace aicf::ir;

// The thread's index in x (kernels of one warp: its lane).
inline Expr lane() {
    return Call::make(Int(32), Intrinsic::gpu_thread_index, {Expr(0)}, Call::PureIntrinsic);
}

inline lowering::KernelArgument buffer_arg(const std::string &name, Type elem, bool written) {
    lowering::KernelArgument a;
    a.name = name;
    a.is_buffer = true;
    a.type = elem;
    a.read = true;
    a.written = written;
    return a;
}

// A buffer argument's bytes on the host.
struct HostBuffer {
    std::string name;
    std::vector<uint8_t> bytes;
    bool written = false;
    template <typename T> static HostBuffer of(const std::string &name, const std::vector<T> &v) {
        HostBuffer b;
        b.name = name;
        b.bytes.resize(v.size() * sizeof(T));
        std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
        return b;
    }
    template <typename T> std::vector<T> as() const {
        std::vector<T> v(bytes.size() / sizeof(T));
        std::memcpy(v.data(), bytes.data(), bytes.size());
        return v;
    }
};

// Runs `k` (one block), with `buffers` (in k.args order) copied to the device and the written
// ones back; a GPU runs its PTX for `target`.
inline void run_kernel(const lowering::LoweredKernel &k, std::vector<HostBuffer> &buffers,
                       const Target &target = Target("host-cuda-sm_80")) {
    runtime::Device &device = runtime::device_from_environment();
    auto ir = std::make_shared<lowering::LoweredKernel>(k);
    runtime::CompiledKernel c(
        ir, [ir, target] { return backends::compile_kernels_to_ptx({*ir}, target); });
    c.name = k.name;
    c.id = lowering::new_kernel_id();
    c.threads = k.threads;
    c.shared_bytes = k.shared_bytes;
    c.min_compute_capability = target.cuda_capability();
    c.check_names = lowering::kernel_check_names(k.body);
    std::vector<aicf_buffer_t> raw(buffers.size());
    std::vector<aicf_dim_t> dims(buffers.size());
    std::vector<void *> args;
    // The device copies are freed however the launch ends (the checks raise KernelFault).
    struct FreeDeviceCopies {
        std::vector<aicf_buffer_t> &raw;
        ~FreeDeviceCopies() {
            for (aicf_buffer_t &b : raw) {
                if (!b.device) continue;
                static_cast<const aicf_device_interface_t *>(b.device_interface)->device_free(&b);
            }
        }
    } free_device_copies{raw};
    for (size_t i = 0; i < buffers.size(); i++) {
        runtime::KernelParameter p;
        p.name = k.args[i].name;
        p.is_buffer = true;
        p.written = k.args[i].written;
        c.params.push_back(p);
        dims[i] = aicf_dim_t{0, int32_t(buffers[i].bytes.size()), 1, 0};
        raw[i].host = buffers[i].bytes.data();
        raw[i].type = aicf_type_t{uint8_t(TypeCode::UInt), 8, 1};
        raw[i].dimensions = 1;
        raw[i].dim = &dims[i];
        raw[i].flags = AICF_BUFFER_HOST_DIRTY;
        runtime::prepare_on_device(device, &raw[i], buffers[i].name.c_str());
        args.push_back(&raw[i]);
    }
    device.launch(c, {1, 1, 1}, args.data());
    char error[256] = "";
    for (size_t i = 0; i < buffers.size(); i++) {
        auto *memory = static_cast<const aicf_device_interface_t *>(raw[i].device_interface);
        if (k.args[i].written) {
            ASSERT_EQ(memory->copy_to_host(&raw[i], int64_t(buffers[i].bytes.size()), error,
                                           sizeof error),
                      0)
                << error;
        }
    }
}

inline bool on_simulator() {
    return std::string(runtime::device_from_environment().name()) == "sim";
}

// Whether the test device runs kernels built for `t`: the simulator any target; a GPU those of
// its architecture or an earlier one, and an architecture-specific target (sm_90a, wgmma) only
// on its own architecture.
inline bool device_runs(const aicf::Target &t) {
    if (on_simulator()) return true;
    const std::string d = backends::cuda::cuda_device_description();
    const size_t at = d.rfind("sm_");
    const int sm = at == std::string::npos ? 0 : std::atoi(d.c_str() + at + 3);
    return t.is_arch_specific() ? sm == t.cuda_capability() : sm >= t.cuda_capability();
}

} // namespace aicf_test

#endif
