#ifndef AICF_APPS_GPU_DEVICE_H
#define AICF_APPS_GPU_DEVICE_H

// What the GPU benchmarks need to know of the device they run on: the target to compile for,
// a line that names the device, and the copy bandwidth their rates are compared with.

#include "backends/cuda/CudaDevice.h"
#include "dsl/aicf.h"

#include <cstdlib>
#include <optional>
#include <string>

namespace aicf_apps {

// host-cuda-sm_XX-fma for the GPU this process sees (its compute capability as the driver
// reports it, "NVIDIA H200, sm_90"), capped at sm_90, the newest LLVM 19 targets; sm_80 when
// there is no GPU (the simulator).
inline const aicf::Target &device_target() {
    static const aicf::Target t = [] {
        int sm = 80;
        try {
            std::string d = aicf::backends::cuda::cuda_device_description();
            size_t at = d.rfind("sm_");
            if (at != std::string::npos) sm = std::atoi(d.c_str() + at + 3);
        } catch (const aicf::RuntimeError &) {
        }
        const int known[] = {80, 86, 89, 90};
        int chosen = 80;
        for (int k : known)
            if (k <= sm) chosen = k;
        return aicf::Target("host-cuda-sm_" + std::to_string(chosen) + "-fma");
    }();
    return t;
}

// Whether kernels run on a CUDA GPU (not the simulator).
inline bool on_cuda_gpu() {
    const char *device = std::getenv("AICF_DEVICE");
    if (device && std::string(device) == "sim") return false;
    try {
        aicf::backends::cuda::cuda_device_description();
        return true;
    } catch (const aicf::RuntimeError &) {
        return false;
    }
}

// The target of Hopper's own instructions (wgmma), sm_90a, where the device runs them: an
// sm_90 GPU, or the simulator; none on other GPUs (sm_90a code runs on sm_90 only).
inline std::optional<aicf::Target> hopper_target() {
    if (on_cuda_gpu() && device_target().cuda_capability() != 90) return std::nullopt;
    return aicf::Target("host-cuda-sm_90a-fma");
}

// " (NVIDIA H200, sm_90)", or " (no CUDA GPU: the simulator)".
inline std::string device_description() {
    try {
        return " (" + aicf::backends::cuda::cuda_device_description() + ")";
    } catch (const aicf::RuntimeError &) {
        return " (no CUDA GPU: the simulator)";
    }
}

// The copy peer: the driver's device-to-device copy of `bytes`, in ms; -1 without a GPU.
inline double copy_peer_ms(int64_t bytes, int runs) {
    try {
        return aicf::backends::cuda::cuda_copy_ms(bytes, runs);
    } catch (const aicf::RuntimeError &) {
        return -1;
    }
}

} // namespace aicf_apps

#endif
