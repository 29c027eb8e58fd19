// The runtime side of pipelines compiled ahead of time: DLTensors checked and turned into the
// buffers compiled code reads, the pipeline's kernels made ready for the devices once per
// process, and errors kept per thread for aicf_last_error().

#include "backends/cuda/CudaDevice.h"
#include "backends/runtime/AOTABI.h"
#include "backends/runtime/Device.h"
#include "backends/runtime/Runtime.h"
#include "dsl/BufferMemory.h"
#include "dsl/HostMemory.h"
#include "dsl/Target.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IR.h"
#include "lowering/Kernel.h"
#include "lowering/KernelSerialization.h"

#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace aicf {
namespace runtime {
namespace {

thread_local std::string last_error;

std::string type_text(aicf_type_t t) {
    if (t.code > 3) return "an unknown type";
    ir::Type type(static_cast<ir::TypeCode>(t.code), t.bits, t.lanes ? t.lanes : 1);
    return type.is_bool() ? "bool" : ir::to_string(type);
}

// DLPack 0.8's kDLBool, what PyTorch exports a bool tensor as (one byte per element); the
// dlpack.h of Debian 12 (0.6) predates it.
constexpr uint8_t dl_bool_code = 6;

std::string dl_type_text(DLDataType t) {
    std::ostringstream s;
    static const char *const codes[] = {"int",    "uint",    "float", "opaque handle",
                                        "bfloat", "complex", "bool"};
    if (t.code > dl_bool_code) {
        s << "unknown DLPack type code " << int(t.code) << " (" << int(t.bits) << " bits)";
    } else {
        s << codes[t.code] << int(t.bits);
    }
    if (t.lanes != 1) s << "x" << t.lanes;
    return s.str();
}

// Whether a DLPack element type is AICF's `t` (bool: DLPack's bool8, or uint1 or uint8 with
// one byte per element).
bool same_type(DLDataType d, aicf_type_t t) {
    if (d.lanes != 1) return false;
    const ir::Type type(static_cast<ir::TypeCode>(t.code), t.bits, 1);
    if (type.is_bool())
        return (d.code == kDLUInt && (d.bits == 1 || d.bits == 8)) ||
               (d.code == dl_bool_code && d.bits == 8);
    const int code = d.code == kDLBfloat  ? int(ir::TypeCode::BFloat)
                     : d.code <= kDLFloat ? int(d.code)
                                          : -1;
    return code == t.code && d.bits == t.bits;
}

int element_bytes(aicf_type_t t) {
    return t.bits == 1 ? 1 : (t.bits + 7) / 8;
}

// A DLTensor as the buffer compiled code reads, once checked.
struct TensorBuffer {
    aicf_buffer_t buffer{};
    std::vector<aicf_dim_t> dims;
    bool in_cuda_memory = false; // the caller's device memory: used in place, never freed
};

class ArgumentError : public std::exception {
public:
    ArgumentError(ir::RuntimeErrorKind kind, std::string message)
        : code(-int32_t(kind)), message(std::move(message)) {}
    const char *what() const noexcept override { return message.c_str(); }
    int32_t code;
    std::string message;
};

void check_tensor(const aicf_pipeline_metadata_t &p, int index, const DLTensor *t,
                  bool gpu_pipeline, TensorBuffer &out) {
    const aicf_argument_metadata_t &a = p.arguments[index];
    const std::string where =
        std::string(p.name) + ": buffer " + a.name + " (argument " + std::to_string(index) + ")";
    using K = ir::RuntimeErrorKind;
    if (!t) throw ArgumentError(K::BufferNull, where + " is a null DLTensor pointer.");
    const bool on_cpu = t->device.device_type == kDLCPU;
    const bool on_cuda = t->device.device_type == kDLCUDA;
    if (!on_cpu && !(on_cuda && gpu_pipeline)) {
        std::string device =
            on_cuda ? "a CUDA device" : "device type " + std::to_string(int(t->device.device_type));
        throw ArgumentError(K::BufferDevice,
                            where + " is in the memory of " + device + ", but " +
                                (gpu_pipeline ? "the pipeline takes kDLCPU or kDLCUDA tensors."
                                              : "the pipeline runs on the CPU: pass a kDLCPU "
                                                "tensor."));
    }
    if (on_cuda && t->device.device_id != 0) {
        throw ArgumentError(K::BufferDevice, where + " is on CUDA device " +
                                                 std::to_string(t->device.device_id) +
                                                 "; AICF runs kernels on CUDA device 0.");
    }
    if (!same_type(t->dtype, a.type)) {
        throw ArgumentError(K::BufferType, where + " holds " + dl_type_text(t->dtype) +
                                               " elements, but the pipeline expects " +
                                               type_text(a.type) + ".");
    }
    if (t->ndim != a.dimensions) {
        throw ArgumentError(K::BufferDimensions, where + " has " + std::to_string(t->ndim) +
                                                     " dimension" + (t->ndim == 1 ? "" : "s") +
                                                     ", but the pipeline expects " +
                                                     std::to_string(a.dimensions) + ".");
    }
    if (t->ndim > 0 && !t->shape)
        throw ArgumentError(K::BufferNull, where + " has a null shape array.");
    const int bytes = element_bytes(a.type);
    if (t->byte_offset % uint64_t(bytes) != 0) {
        throw ArgumentError(K::BufferMisaligned, where + " starts at byte offset " +
                                                     std::to_string(t->byte_offset) +
                                                     ", which is not a multiple of its " +
                                                     std::to_string(bytes) + "-byte elements.");
    }
    out.dims.resize(size_t(t->ndim));
    int64_t compact = 1, elements = 1;
    for (int axis = t->ndim - 1; axis >= 0; axis--) {
        const int d = t->ndim - 1 - axis; // AICF's dimension: 0 is the innermost
        const std::string dim =
            "dimension " + std::to_string(d) + " (DLPack axis " + std::to_string(axis) + ")";
        const int64_t extent = t->shape[axis];
        if (extent < 0) {
            throw ArgumentError(K::BufferExtentNegative, where + ": " + dim +
                                                             " has a negative extent (" +
                                                             std::to_string(extent) + ").");
        }
        if (extent > INT32_MAX) {
            throw ArgumentError(K::BufferTooLarge, where + ": " + dim + " has extent " +
                                                       std::to_string(extent) +
                                                       "; pipelines address at most 2^31 - 1.");
        }
        // One point along an axis is dense whatever its stride (frameworks give such axes
        // any stride: a (30, 1) slice of a (30, 2) tensor has strides (2, 2)).
        const int64_t stride = !t->strides ? compact : extent == 1 && d == 0 ? 1 : t->strides[axis];
        if (stride < 0 || stride > INT32_MAX) {
            throw ArgumentError(K::BufferStride,
                                where + ": " + dim + " has stride " + std::to_string(stride) +
                                    "; pipelines take strides from 0 to 2^31 - 1 elements.");
        }
        out.dims[size_t(d)] = aicf_dim_t{0, int32_t(extent), int32_t(stride), 0};
        compact *= extent;
        elements *= extent;
    }
    if (!t->data && elements > 0) throw ArgumentError(K::BufferNull, where + " has null data.");
    if (t->data && reinterpret_cast<uintptr_t>(t->data) % uintptr_t(bytes) != 0) {
        throw ArgumentError(K::BufferMisaligned, where + "'s data is not aligned to its " +
                                                     std::to_string(bytes) + "-byte elements.");
    }
    // The last byte the tensor spans, from its data pointer: past 2^57, no memory of this
    // process (user addresses end below 2^57 on every 64-bit system AICF runs on: 2^47 on
    // x86-64, 2^56 with 5-level paging, for host and CUDA unified addresses alike), or
    // wrapped around to memory it was not given.
    uint64_t last = t->byte_offset;
    bool wraps = false;
    if (elements > 0) {
        for (const aicf_dim_t &d : out.dims) {
            uint64_t step = 0;
            wraps = wraps ||
                    __builtin_mul_overflow(uint64_t(d.extent - 1) * uint64_t(d.stride),
                                           uint64_t(bytes), &step) ||
                    __builtin_add_overflow(last, step, &last);
        }
        wraps = wraps || __builtin_add_overflow(last, uint64_t(bytes - 1), &last);
        const uint64_t limit = (uint64_t(1) << 57) - 1;
        wraps = wraps || last > limit || reinterpret_cast<uintptr_t>(t->data) > limit - last;
    }
    if (wraps) {
        throw ArgumentError(K::BufferMisaligned,
                            where + " starts at byte offset " + std::to_string(t->byte_offset) +
                                " from its data pointer, and its elements would reach past 2^57, "
                                "beyond the addresses a process's memory has.");
    }
    if (on_cuda) {
        // Used where it is: the kernels read and write it, nothing is copied.
        out.in_cuda_memory = true;
        out.buffer.device = reinterpret_cast<uint64_t>(t->data) + t->byte_offset;
    } else {
        out.buffer.host = static_cast<uint8_t *>(t->data) + t->byte_offset;
    }
    out.buffer.type = a.type;
    out.buffer.dimensions = t->ndim;
    out.buffer.dim = out.dims.data();
}

// The compiled code reorders the loads and stores of different buffers, and writes each point
// of an output once: an output must not share memory with an input, another output (in the
// same memory: the CPU's, or the CUDA device's) or itself.
void check_outputs_do_not_overlap(const aicf_pipeline_metadata_t &p,
                                  const std::vector<TensorBuffer> &tensors) {
    auto base = [&](int i) {
        const TensorBuffer &t = tensors[size_t(i)];
        return t.in_cuda_memory ? t.buffer.device : reinterpret_cast<uintptr_t>(t.buffer.host);
    };
    auto named = [&](int i) {
        return std::string(p.arguments[i].kind == AICF_ARGUMENT_OUTPUT ? "output" : "input") +
               " buffer " + p.arguments[i].name + " (argument " + std::to_string(i) + ")";
    };
    for (int i = 0; i < p.argument_count; i++) {
        if (p.arguments[i].kind != AICF_ARGUMENT_OUTPUT) continue;
        const TensorBuffer &out = tensors[size_t(i)];
        if (const int32_t d = aicf_buffer_self_overlap(&out.buffer); d >= 0) {
            throw ArgumentError(
                ir::RuntimeErrorKind::BufferOverlap,
                std::string(p.name) + ": the " + named(i) +
                    " may have points that share memory: " + "dimension " + std::to_string(d) +
                    " (DLPack axis " + std::to_string(out.buffer.dimensions - 1 - d) +
                    ") has stride " + std::to_string(out.buffer.dim[d].stride) +
                    ", within the span of the dimensions of smaller strides. Every point of an "
                    "output needs memory of its own: give each dimension a stride beyond the "
                    "span of those with smaller strides.");
        }
        for (int j = 0; j < p.argument_count; j++) {
            if (j == i || p.arguments[j].kind == AICF_ARGUMENT_SCALAR) continue;
            if (p.arguments[j].kind == AICF_ARGUMENT_OUTPUT && j < i) continue; // each pair once
            if (tensors[size_t(j)].in_cuda_memory != out.in_cuda_memory) continue;
            // Views of one array whose elements interleave (a matrix's halves) are distinct.
            if (!buffers_share_memory(&out.buffer, base(i), &tensors[size_t(j)].buffer, base(j)))
                continue;
            throw ArgumentError(ir::RuntimeErrorKind::BufferOverlap,
                                std::string(p.name) + ": the " + named(i) +
                                    " shares memory with the " + named(j) +
                                    ". A pipeline's outputs must not overlap its inputs or one "
                                    "another: the compiled code reorders the loads and stores of "
                                    "different buffers. Pass a separate buffer.");
        }
    }
}

// `message` ("Buffer in is too small: dimension 0 must cover ...") with the DLPack axis of
// the dimension it names after it, when it names a buffer argument of the pipeline.
std::string with_dlpack_axis(const aicf_pipeline_metadata_t &p, const std::string &given) {
    // A Tuple's buffers are "f.0", "f.1" inside AICF and arguments f_0, f_1 of the C
    // function: the message names them as the header does.
    std::string message = given;
    for (int i = 0; i < p.argument_count; i++) {
        if (p.arguments[i].kind != AICF_ARGUMENT_OUTPUT) continue;
        const std::string c_name = p.arguments[i].name;
        const size_t bar = c_name.rfind('_');
        if (bar == std::string::npos || bar == 0 || bar + 1 == c_name.size() ||
            c_name.find_first_not_of("0123456789", bar + 1) != std::string::npos)
            continue;
        const std::string inside = c_name.substr(0, bar) + "." + c_name.substr(bar + 1);
        auto name_char = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
        };
        for (size_t at = message.find(inside); at != std::string::npos;
             at = message.find(inside, at + 1)) {
            const size_t end = at + inside.size();
            if ((at == 0 || !name_char(message[at - 1])) &&
                (end == message.size() || !std::isdigit(static_cast<unsigned char>(message[end]))))
                message.replace(at, inside.size(), c_name);
        }
    }
    // The buffer the message is about: "Buffer NAME ...", or else the first buffer argument
    // it names (the buffers of a Tuple-valued output that differ, all of one rank).
    const std::string lead = "Buffer ";
    int rank = -1;
    if (message.rfind(lead, 0) == 0) {
        const std::string name =
            message.substr(lead.size(), message.find(' ', lead.size()) - lead.size());
        for (int i = 0; i < p.argument_count; i++)
            if (p.arguments[i].kind != AICF_ARGUMENT_SCALAR && name == p.arguments[i].name)
                rank = p.arguments[i].dimensions;
    } else {
        auto word_char = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        };
        size_t first = std::string::npos;
        for (int i = 0; i < p.argument_count; i++) {
            if (p.arguments[i].kind == AICF_ARGUMENT_SCALAR) continue;
            const std::string name = p.arguments[i].name;
            for (size_t at = message.find(name); at != std::string::npos;
                 at = message.find(name, at + 1)) {
                const size_t end = at + name.size();
                if ((at > 0 && word_char(message[at - 1])) ||
                    (end < message.size() && word_char(message[end])))
                    continue;
                if (at < first) first = at, rank = p.arguments[i].dimensions;
                break;
            }
        }
    }
    const size_t at = message.find("dimension ");
    if (rank < 0 || at == std::string::npos) return message;
    size_t end = at + 10;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end])))
        end++;
    if (end == at + 10) return message;
    const int d = std::atoi(message.c_str() + at + 10);
    if (d < 0 || d >= rank) return message;
    return message.substr(0, end) + " (DLPack axis " + std::to_string(rank - 1 - d) + ")" +
           message.substr(end);
}

// What a compiled pipeline needs from this process, made at its first call.
struct PipelineState {
    Target target;
    // Its kernels as the devices take them.
    std::vector<CompiledKernel> kernels;
    // The intermediates' large blocks, kept from one call to the next.
    mutable HostMemoryPool pool;
};

const PipelineState &state_of(const aicf_pipeline_metadata_t &p) {
    // Every call asks: each thread remembers what it found, so that calls after the first take
    // no lock (states live as long as the process).
    thread_local std::map<const aicf_pipeline_metadata_t *, const PipelineState *> seen;
    auto known = seen.find(&p);
    if (known != seen.end()) return *known->second;
    static std::mutex lock;
    static std::map<const aicf_pipeline_metadata_t *, std::unique_ptr<PipelineState>> made;
    std::lock_guard<std::mutex> guard(lock);
    auto &state = made[&p];
    if (state) {
        seen[&p] = state.get();
        return *state;
    }
    auto made_now = std::make_unique<PipelineState>();
    made_now->target = Target(p.target);
    std::vector<CompiledKernel> *list = &made_now->kernels;
    for (int i = 0; i < p.kernel_count; i++) {
        const aicf_kernel_metadata_t &k = p.kernels[i];
        std::shared_ptr<const lowering::LoweredKernel> ir =
            lowering::deserialize_kernel(k.kernel_ir, size_t(k.kernel_ir_size));
        const bool has_ptx = k.ptx != nullptr;
        std::string ptx = has_ptx ? k.ptx : "", name = k.name;
        CompiledKernel c(ir, [has_ptx, ptx, name] {
            if (!has_ptx) {
                runtime_error_report << "Kernel " << name << " was compiled without PTX (the "
                                     << "CUDA toolkit's libdevice, which its math needs, was not "
                                     << "found when it was generated), so it runs on the "
                                     << "simulator only.";
            }
            return ptx;
        });
        c.name = k.name;
        c.id = lowering::new_kernel_id();
        c.funcs = ir->funcs;
        c.threads = {k.threads[0], k.threads[1], k.threads[2]};
        c.shared_bytes = k.shared_bytes;
        c.min_compute_capability = k.min_compute_capability;
        c.check_names = lowering::kernel_check_names(ir->body);
        for (int j = 0; j < k.cubin_count; j++) {
            const aicf_cubin_t &cubin = k.cubins[j];
            c.cubins.push_back(
                {cubin.compute_capability,
                 std::string(reinterpret_cast<const char *>(cubin.data), size_t(cubin.size))});
        }
        for (int j = 0; j < k.parameter_count; j++) {
            KernelParameter param;
            param.name = k.parameters[j].name;
            param.is_buffer = k.parameters[j].is_buffer != 0;
            param.scalar_bytes = k.parameters[j].scalar_bytes;
            param.written = k.parameters[j].written != 0;
            c.params.push_back(param);
        }
        list->push_back(std::move(c));
    }
    state = std::move(made_now);
    seen[&p] = state.get();
    return *state;
}

// Why the GPU kernels of `p` do not run here, or "" when they do (AOTABI.h's rule).
std::string gpu_refusal(const PipelineState &p) {
    const char *env = std::getenv("AICF_DEVICE");
    if (env && std::string(env) == "sim") return "";
    int capability = 0;
    try {
        capability = backends::cuda::cuda_compute_capability();
    } catch (const RuntimeError &) {
        return "no CUDA GPU here";
    }
    const int needed = p.target.cuda_capability();
    if (capability < needed || (p.target.is_arch_specific() && capability != needed)) {
        return "the GPU has compute capability " + std::to_string(capability / 10) + "." +
               std::to_string(capability % 10);
    }
    return "";
}

const aicf_pipeline_metadata_t *choose(const aicf_pipeline_metadata_t *const *builds, int count,
                                       const aicf_pipeline_metadata_t **chosen) {
    if (const aicf_pipeline_metadata_t *c = __atomic_load_n(chosen, __ATOMIC_ACQUIRE)) return c;
    const aicf_pipeline_metadata_t *result = nullptr, *fallback = nullptr;
    std::string reasons;
    for (int i = 0; i < count && !result; i++) {
        const aicf_pipeline_metadata_t *b = builds[i];
        const PipelineState &state = state_of(*b);
        const std::string missing = state.target.missing_cpu_features();
        std::string why = missing.empty() ? "" : "the CPU lacks " + missing;
        if (why.empty()) {
            fallback = b;
            if (b->kernel_count > 0) why = gpu_refusal(state);
        }
        if (why.empty()) result = b;
        reasons += std::string(reasons.empty() ? "" : "; ") + b->target + ": " + why;
    }
    if (!result) result = fallback;
    if (!result) {
        throw ArgumentError(ir::RuntimeErrorKind::TargetUnsupported,
                            std::string(count > 0 ? builds[0]->name : "a pipeline") +
                                ": none of its builds runs on this machine (" + reasons + ").");
    }
    __atomic_store_n(chosen, result, __ATOMIC_RELEASE);
    return result;
}

int32_t run(const aicf_pipeline_metadata_t &p, void *const *args) {
    const PipelineState &state = state_of(p);
    // Checked at every call (a few instructions): AICF_CPU_LEVEL may change between calls.
    const std::string missing = state.target.missing_cpu_features();
    if (!missing.empty()) {
        throw ArgumentError(ir::RuntimeErrorKind::TargetUnsupported,
                            std::string(p.name) + " was compiled for " + p.target +
                                ", but this machine's CPU lacks " + missing +
                                ". Build it for a lower x86-64 level, or with several targets.");
    }
    const int n = p.argument_count;
    std::vector<TensorBuffer> tensors(static_cast<size_t>(n));
    std::vector<void *> pointers(size_t(n), nullptr);
    for (int i = 0; i < n; i++) {
        if (p.arguments[i].kind == AICF_ARGUMENT_SCALAR) {
            if (!args[i]) {
                throw ArgumentError(ir::RuntimeErrorKind::BufferNull,
                                    std::string(p.name) + ": scalar " + p.arguments[i].name +
                                        " (argument " + std::to_string(i) + ") is a null pointer.");
            }
            pointers[size_t(i)] = args[i];
            continue;
        }
        check_tensor(p, i, static_cast<const DLTensor *>(args[i]), p.kernel_count > 0,
                     tensors[size_t(i)]);
        pointers[size_t(i)] = &tensors[size_t(i)].buffer;
    }
    check_outputs_do_not_overlap(p, tensors);
    RunContext ctx;
    ctx.kernels = p.kernel_count > 0 ? &state.kernels : nullptr;
    ctx.pool = &state.pool;
    for (int i = 0; i < n; i++) {
        TensorBuffer &t = tensors[size_t(i)];
        if (!t.in_cuda_memory) continue;
        if (!ctx.device) ctx.device = &device_from_environment();
        if (std::string(ctx.device->name()) != "cuda") {
            throw ArgumentError(ir::RuntimeErrorKind::BufferDevice,
                                std::string(p.name) + ": buffer " + p.arguments[i].name +
                                    " (argument " + std::to_string(i) +
                                    ") is in CUDA memory, but this process runs kernels on the " +
                                    ctx.device->name() +
                                    " device (no GPU here, or AICF_DEVICE says so): pass kDLCPU "
                                    "tensors.");
        }
        t.buffer.device_interface = const_cast<aicf_device_interface_t *>(ctx.device->memory());
    }
    int32_t code = p.entry(&ctx, pointers.data());
    // Outputs computed on a device come back to the caller's CPU memory; the device copies the
    // run made of the caller's CPU buffers go (the DLTensors have no place to keep them).
    for (int i = 0; i < n && code == 0; i++) {
        if (p.arguments[i].kind == AICF_ARGUMENT_OUTPUT && !tensors[size_t(i)].in_cuda_memory)
            code = aicf_buffer_copy_to_host(&ctx, &tensors[size_t(i)].buffer, 0);
    }
    for (TensorBuffer &t : tensors) {
        auto *memory = static_cast<const aicf_device_interface_t *>(t.buffer.device_interface);
        if (t.buffer.device && memory && !t.in_cuda_memory) memory->device_free(&t.buffer);
    }
    if (code != 0) {
        // The checks of the generated code name the buffer and AICF's dimension; the
        // pipeline's name goes first and the DLPack axis beside the dimension, as in the
        // runtime's own checks.
        last_error = ctx.error.empty()
                         ? std::string(p.name) + " failed with code " + std::to_string(code) + "."
                         : std::string(p.name) + ": " + with_dlpack_axis(p, ctx.error);
    }
    return code;
}

} // namespace
} // namespace runtime
} // namespace aicf

extern "C" {

int aicf_run_pipeline(const aicf_pipeline_metadata_t *pipeline, void *const *args) {
    return aicf_run_chosen_pipeline(&pipeline, 1, nullptr, args);
}

int aicf_run_chosen_pipeline(const aicf_pipeline_metadata_t *const *builds, int32_t count,
                             const aicf_pipeline_metadata_t **chosen, void *const *args) {
    using namespace aicf::runtime;
    last_error.clear();
    const char *name = builds && count > 0 && builds[0] ? builds[0]->name : "aicf_run_pipeline";
    try {
        if (!builds || count <= 0 || !builds[0]) {
            last_error = "aicf_run_pipeline: null pipeline.";
            return -int32_t(aicf::ir::RuntimeErrorKind::BufferNull);
        }
        const aicf_pipeline_metadata_t *p = chosen ? choose(builds, count, chosen) : builds[0];
        if (!args && p->argument_count > 0) {
            last_error = std::string(name) + ": null argument array.";
            return -int32_t(aicf::ir::RuntimeErrorKind::BufferNull);
        }
        return run(*p, args);
    } catch (const ArgumentError &e) {
        last_error = e.message;
        return e.code;
    } catch (const aicf::Error &e) {
        last_error = e.what();
    } catch (const std::bad_alloc &) {
        last_error = std::string(name) + ": out of memory.";
    } catch (const std::exception &e) {
        last_error = std::string(name) + ": " + e.what();
    }
    return -int32_t(aicf::ir::RuntimeErrorKind::DeviceError);
}

const aicf_pipeline_metadata_t *aicf_choose_pipeline(const aicf_pipeline_metadata_t *const *builds,
                                                     int32_t count,
                                                     const aicf_pipeline_metadata_t **chosen) {
    using namespace aicf::runtime;
    // The metadata functions call this: a choice that succeeds leaves the last error as it was.
    try {
        if (!builds || count <= 0) {
            last_error = "aicf_choose_pipeline: no builds to choose from.";
            return nullptr;
        }
        if (!chosen) {
            last_error = "aicf_choose_pipeline: `chosen` is a null pointer; it must point to "
                         "where the library keeps its choice.";
            return nullptr;
        }
        return choose(builds, count, chosen);
    } catch (const std::exception &e) {
        last_error = e.what();
    }
    return nullptr;
}

const char *aicf_last_error(void) {
    return aicf::runtime::last_error.c_str();
}

void aicf_set_cuda_stream(void *stream) {
    aicf::runtime::set_cuda_stream_of_this_thread(stream);
}
}
