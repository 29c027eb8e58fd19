#ifndef AICF_APPS_AOT_CALL_H
#define AICF_APPS_AOT_CALL_H

// What the GPU apps need to run a kernel compiled ahead of time beside the JIT: the target
// their generated libraries are compiled for (AICF_APPS_AOT_TARGET, set once in
// apps/CMakeLists.txt), under which the JIT gives the same bits, and a DLTensor over a
// Buffer's host data or its device copy.

#include "GPUDevice.h"
#include "dsl/aicf.h"

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace aicf_apps {

inline const aicf::Target &aot_target() {
    static const aicf::Target t(AICF_APPS_AOT_TARGET);
    return t;
}

// What `f` computes under the libraries' target (or `library_target`), on the host, for comparison
// with a library's output: `done` itself where the JIT computed it under that target already, else
// a new buffer of its type and shape (kernels for another architecture, or without fused
// multiply-adds, round differently).
inline aicf::Buffer<> jit_under_aot_target(aicf::Func f, const aicf::Buffer<> &done,
                                           const aicf::Target &done_target,
                                           const aicf::Target &library_target = aot_target()) {
    aicf::Buffer<> b = done;
    if (library_target.to_string() != done_target.to_string()) {
        std::vector<int> sizes;
        for (int d = 0; d < done.dimensions(); d++)
            sizes.push_back(done.extent(d));
        b = aicf::Buffer<>(done.type(), sizes, done.name() + "_aot_target");
        f.realize(b, library_target);
    }
    b.copy_to_host();
    return b;
}

// A DLTensor over `b` (dimension 0 innermost, so the DLPack shape is reversed): its host data
// (brought back from the device first), or (on_device) its device copy, where a JIT run on a
// CUDA GPU left it.
struct DLView {
    std::vector<int64_t> shape;
    DLTensor t{};
    DLView(const aicf::Buffer<> &b, bool on_device) {
        for (int d = b.dimensions() - 1; d >= 0; d--)
            shape.push_back(b.extent(d));
        t.device = {on_device ? kDLCUDA : kDLCPU, 0};
        t.data = on_device ? reinterpret_cast<void *>(b.raw_buffer()->device) : b.raw_data();
        t.ndim = b.dimensions();
        const aicf::Type type = b.type();
        const DLDataTypeCode code = type.is_bfloat()  ? kDLBfloat
                                    : type.is_float() ? kDLFloat
                                    : type.is_uint()  ? kDLUInt
                                                      : kDLInt;
        t.dtype = {uint8_t(code), uint8_t(type.bits), 1};
        t.shape = shape.data();
    }
    DLView(const DLView &) = delete; // t.shape points into this object
};

// Whether `b` has a CUDA device copy a kernel can use in place (a JIT run on a CUDA GPU left
// one; the simulator's device copies are its own).
inline bool has_device_copy(const aicf::Buffer<> &b) {
    return b.raw_buffer()->device != 0 && on_cuda_gpu();
}

} // namespace aicf_apps

#endif
