#include "backends/runtime/Runtime.h"

#include "backends/runtime/Device.h"
#include "backends/runtime/ThreadPool.h"
#include "dsl/BufferMemory.h"
#include "dsl/HostMemory.h"
#include "dsl/base/Error.h"

#include "dsl/ir/IR.h"
#include "dsl/ir/Type.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <sstream>

namespace aicf {
namespace runtime {

RunContext::RunContext() {
    static std::atomic<uint64_t> next_id{1};
    id = next_id++;
}

RunContext::Allocations &RunContext::thread_allocations() {
    thread_local uint64_t cached_id = 0;
    thread_local Allocations *cached = nullptr;
    if (cached_id == id) return *cached;
    std::lock_guard<std::mutex> guard(lock);
    allocations.push_back(std::make_unique<Allocations>());
    cached_id = id;
    cached = allocations.back().get();
    return *cached;
}

void *RunContext::reuse(size_t bytes) {
    Allocations &own = thread_allocations();
    for (auto it = own.spare.rbegin(); it != own.spare.rend(); ++it) {
        if (it->bytes >= bytes && it->bytes / 2 <= bytes) {
            Block b = *it;
            own.live.push_back(b); // first: if it throws, nothing has changed
            own.spare.erase(std::next(it).base());
            own.spare_bytes -= b.bytes;
            return b.p;
        }
    }
    return nullptr;
}

bool RunContext::forget(void *p) {
    // Compiled code frees an allocation on the thread that made it (a parallel loop's body
    // allocates and frees within one iteration), usually last in, first out. Anything else
    // is looked for in the other threads' lists, under the lock.
    Allocations &own = thread_allocations();
    for (auto it = own.live.rbegin(); it != own.live.rend(); ++it) {
        if (it->p == p) {
            Block b = *it;
            own.live.erase(std::next(it).base());
            // At most a few blocks and 1 MiB per thread stay for reuse.
            constexpr size_t most_spare_bytes = size_t(1) << 20;
            if (b.bytes >= pooled_allocation_threshold || own.spare.size() >= 8 ||
                own.spare_bytes + b.bytes > most_spare_bytes)
                return false;
            try {
                own.spare.push_back(b);
            } catch (const std::bad_alloc &) {
                return false;
            }
            own.spare_bytes += b.bytes;
            return true;
        }
    }
    std::lock_guard<std::mutex> guard(lock);
    for (auto &list : allocations) {
        auto it = std::find_if(list->live.begin(), list->live.end(),
                               [&](const Block &b) { return b.p == p; });
        if (it != list->live.end()) {
            list->live.erase(it);
            return false;
        }
    }
    return false;
}

RunContext::~RunContext() {
    for (auto &list : allocations) {
        for (const Block &b : list->live)
            if (!pool || !pool->release(b.p)) host_free(b.p);
        for (const Block &b : list->spare)
            host_free(b.p);
    }
    for (void *p : live_device_buffers) {
        auto *b = static_cast<aicf_buffer_t *>(p);
        auto *mem = static_cast<const aicf_device_interface_t *>(b->device_interface);
        if (b->device && mem) mem->device_free(b);
        delete[] b->dim;
        delete b;
    }
}

namespace {

int32_t record_error(void *ctx, const std::string &message,
                     RunContext::ErrorType type = RunContext::ErrorType::Runtime) {
    auto *rc = static_cast<RunContext *>(ctx);
    std::lock_guard<std::mutex> guard(rc->lock);
    if (rc->error.empty()) {
        rc->error = message;
        rc->error_type = type;
    }
    return -int32_t(ir::RuntimeErrorKind::DeviceError);
}

RunContext::ErrorType error_type(const Error &e) {
    using Type = RunContext::ErrorType;
    return dynamic_cast<const KernelFault *>(&e)     ? Type::KernelFault
           : dynamic_cast<const InternalError *>(&e) ? Type::Internal
                                                     : Type::Runtime;
}

// Runs the body of a function that compiled code calls, so that no exception crosses into
// compiled code (which has no way to pass one on): an error, a failed allocation included,
// becomes the run's error message and a nonzero code. `what` says what was running.
template <typename F> int32_t at_c_boundary(void *ctx, const char *what, F &&body) {
    try {
        return body();
    } catch (const Error &e) {
        return record_error(ctx, e.what(), error_type(e));
    } catch (const std::bad_alloc &) {
        return record_error(ctx, std::string("Out of memory while ") + what + ".");
    } catch (const std::exception &e) {
        return record_error(ctx, std::string("While ") + what + ": " + e.what());
    }
}

std::string type_name(int64_t code, int64_t bits) {
    if (code < 0 || code > 4) return "an unknown type";
    return ir::to_string(ir::Type(static_cast<ir::TypeCode>(code), static_cast<int>(bits)));
}

std::string describe(int32_t kind, const char *name, const int64_t *v) {
    std::ostringstream s;
    std::string n = name ? name : "?";
    switch (static_cast<ir::RuntimeErrorKind>(kind)) {
    case ir::RuntimeErrorKind::BufferNull:
        s << "Buffer " << n << " has no host memory.";
        break;
    case ir::RuntimeErrorKind::BufferType:
        s << "Buffer " << n << " holds " << type_name(v[0], v[1]) << " elements, but the pipeline "
          << "expects " << type_name(v[2], v[3]) << ".";
        break;
    case ir::RuntimeErrorKind::BufferDimensions:
        s << "Buffer " << n << " has " << v[0] << " dimension" << (v[0] == 1 ? "" : "s")
          << ", but the pipeline expects " << v[1] << ".";
        break;
    case ir::RuntimeErrorKind::BufferTooSmall:
        s << "Buffer " << n << " is too small: dimension " << v[0] << " must cover [" << v[1]
          << ", " << v[2] << "], but it covers [" << v[3] << ", " << v[4] << "].";
        break;
    case ir::RuntimeErrorKind::OutputTooSmall:
        s << "Buffer " << n << " is too small: dimension " << v[0] << " must cover [" << v[1]
          << ", " << v[2] << "], but it covers [" << v[3] << ", " << v[4] << "].";
        if (v[5] & 1) {
            s << " The schedule of " << n << " bounds dimension " << v[0] << " (bound()): "
              << "its buffer must cover that region.";
        }
        if (v[5] & 2) {
            s << " An update of " << n << " writes at points other than its own (a shifted "
              << "point, or a histogram's bin computed from data, which may lie anywhere its "
              << "type allows): clamp them into the buffer's region, or give the buffer every "
              << "point they reach.";
        }
        if (v[5] & 4) {
            s << " The schedule of " << n << " aligns dimension " << v[0]
              << " (align_bounds()), so it computes whole aligned runs: give its buffer a "
              << "region that starts and ends on them, or realize " << n << ".in() instead, "
              << "with " << n << " computed at the root (an intermediate, allocated over its "
              << "aligned region).";
        }
        if (v[5] & 16) {
            s << " An update of " << n << " reads " << n << " at points outside the ones it "
              << "writes (a scan's " << n << "(r - 1) at its first r, say): start its reduction "
              << "domain where those points are in the buffer, or give the buffer them.";
        }
        if (!v[5] || (v[5] & 8)) {
            s << " The schedule of " << n
              << " writes whole tiles: a split with ShiftInwards (what split, tile, "
                 "vectorize(x, n), unroll(x, n) and parallel(x, n) do by default) needs an "
                 "extent of at least its factor, and "
                 "RoundUp writes up to a multiple of it. Split with GuardWithIf, or by a "
                 "smaller factor.";
        }
        break;
    case ir::RuntimeErrorKind::InputTooSmall: {
        // "buffer\x1freaders", then "\x1fpart" where the region is what a part of the
        // pipeline reads (one iteration of a loop, one block of a kernel).
        size_t sep = n.find('\x1f');
        std::string buffer = n.substr(0, sep),
                    readers = sep == std::string::npos ? "" : n.substr(sep + 1), part;
        if (size_t at = readers.find('\x1f'); at != std::string::npos) {
            part = readers.substr(at + 1);
            readers = readers.substr(0, at);
        }
        s << "Buffer " << buffer << " is too small: dimension " << v[0] << " must cover [" << v[1]
          << ", " << v[2] << "]" << (part.empty() ? "" : " (what " + part + " reads)")
          << ", but it covers [" << v[3] << ", " << v[4] << "].";
        if (!readers.empty()) {
            bool one = readers.find(',') == std::string::npos;
            s << " It is read by " << (one ? "Func " : "Funcs ") << readers << "; "
              << (one ? "its definition and schedule decide"
                      : "their definitions and schedules decide")
              << " how far (the points read, and whole tiles where a split shifts its tail "
                 "inwards or rounds it up).";
        }
        break;
    }
    case ir::RuntimeErrorKind::TupleShapesDiffer: {
        size_t sep = n.find('\x1f');
        std::string first = n.substr(0, sep),
                    other = sep == std::string::npos ? "" : n.substr(sep + 1);
        s << "The buffers of a Tuple-valued output differ in dimension " << v[0] << ": " << first
          << " covers [" << v[1] << ", " << v[2] << "] and " << other << " covers [" << v[3] << ", "
          << v[4] << "]. The elements of a Tuple are realized over one region: give "
          << "their buffers the same mins and extents.";
        break;
    }
    case ir::RuntimeErrorKind::BufferExtentNegative:
        s << "Buffer " << n << ": dimension " << v[0] << " has a negative extent (" << v[1] << ").";
        break;
    case ir::RuntimeErrorKind::BufferTooLarge:
        s << "Buffer " << n << " spans " << v[0] << " elements; pipelines address at most "
          << "2^31 - 1 elements per buffer.";
        break;
    case ir::RuntimeErrorKind::OutOfMemory:
        s << "Could not allocate " << v[0] << " bytes for " << n << ".";
        break;
    case ir::RuntimeErrorKind::ParamOutOfRange:
        s << "Param " << n << " is " << v[0] << ", outside [" << v[1] << ", " << v[2] << "].";
        break;
    case ir::RuntimeErrorKind::BufferStride:
        s << "Buffer " << n << " has stride " << v[0] << " in dimension 0; pipelines expect "
          << "dimension 0 to be dense (stride 1). An interleaved layout is indexed with the "
          << "interleaved dimension first: RGB pixels as (c, x, y), with c of stride 1.";
        break;
    case ir::RuntimeErrorKind::BufferStrideChanged:
        s << "Buffer " << n << " has stride " << v[0] << " in dimension " << v[1]
          << ", but the pipeline was compiled for a buffer of stride " << v[2]
          << " there (a concrete Buffer's strides are constants of the compiled code).";
        break;
    case ir::RuntimeErrorKind::FuncBoundTooSmall:
        // v[5]: 1 for the update definitions' region, 16 for an align_bounds() after the
        // bound (both: either), 4 for the whole tiles its own loops write, 8 for an output's
        // buffer, 2 for a bound_extent.
        {
            const char *reach = (v[5] & 17) == 17 ? "its update definitions and an align_bounds() "
                                                    "called after the bound reach"
                                : (v[5] & 1)      ? "its update definitions write and read"
                                : (v[5] & 16)
                                    ? "an align_bounds() called after the bound rounds its "
                                      "region out to"
                                : (v[5] & 4) ? "its own loops write"
                                : (v[5] & 8) ? "its output buffer covers"
                                             : "its consumers need";
            const char *extent_from =
                (v[5] & 2) ? ", its bound_extent from the first point needed" : "";
            s << "Func " << n << " is bound to ";
            if (v[4] < v[3]) // an extent from a Param, known only now
                s << "an extent of " << v[4] - v[3] + 1 << " in dimension " << v[0] << " (from "
                  << v[3] << extent_from << "): an extent must be positive, and " << reach;
            else
                s << "[" << v[3] << ", " << v[4] << "] in dimension " << v[0]
                  << ((v[5] & 2) ? " (its bound_extent from the first point needed)" : "")
                  << ", but " << reach;
            s << " [" << v[1] << ", " << v[2] << "].";
        }
        if (v[5] & 17) {
            s << " Its storage and the points its pure definition computes are exactly the "
              << "bound: bound it to cover "
              << ((v[5] & 1) ? "what the updates reach, or keep their points inside"
                             : "the aligned region");
            if (v[5] & 16)
                s << ((v[5] & 1) ? "; " : ", ")
                  << "give it a min and an extent the alignment keeps, or call align_bounds() "
                     "before bound() (a later bound replaces its rounding)";
            s << ".";
        }
        if (v[5] & 4) {
            s << " Its storage is exactly the bound, and a split of its loops writes whole "
              << "tiles: one that shifts its tail inwards (ShiftInwards, the default) needs an "
              << "extent of at least its factor, and one that rounds it up (RoundUp) writes up "
              << "to a multiple of it. Split by a factor that divides the bound's extent, or "
              << "with TailStrategy::GuardWithIf.";
        }
        break;
    case ir::RuntimeErrorKind::FuncRegionTooLarge:
        s << "Func " << n << ": align_bounds rounds its region in dimension " << v[0]
          << " out to a "
          << "multiple of " << v[3] << ", [" << v[1] << ", " << v[2]
          << "], past what 32-bit indices "
          << "address. Align to a smaller modulus.";
        break;
    case ir::RuntimeErrorKind::StoragePaddingTooLarge:
        s << "Func " << n << ": align_storage pads its storage in dimension " << v[0] << " from "
          << v[1] << " to a multiple of " << v[2] << ", " << v[3] << " elements, past what 32-bit "
          << "indices address. Pad to a smaller alignment.";
        break;
    case ir::RuntimeErrorKind::FuncRegionSpan:
        s << "Func " << n << " would be computed over [" << v[1] << ", " << v[2]
          << "] in dimension " << v[0]
          << ", more than 2^31 - 1 points, which 32-bit loops cannot count. ";
        if (v[3] > 0) {
            s << "Its align_bounds rounds that dimension out to a multiple of " << v[3]
              << "; align to a smaller modulus.";
        } else {
            s << "A bound() or a consumer's reach makes it that large.";
        }
        break;
    case ir::RuntimeErrorKind::FuncStorageTooLarge:
        s << "The storage of Func " << n << " would hold "
          << (v[0] == INT64_MAX ? "more than 2^63 - 1" : std::to_string(v[0]))
          << " elements; pipelines address at "
          << "most 2^31 - 1 elements per Func. Compute it over smaller regions (compute_at a loop "
          << "further in) or with smaller split and alignment factors.";
        break;
    case ir::RuntimeErrorKind::BufferEndTooLarge:
        s << "Buffer " << n << ": dimension " << v[0] << " starts at " << v[1] << " and has extent "
          << v[2] << ", so it ends past 2^31 - 2, the last coordinate 32-bit loops reach. Give it "
          << "a smaller min.";
        break;
    case ir::RuntimeErrorKind::RDomEndTooLarge:
        if (v[2] > 0) {
            s << "The reduction loop " << n << " runs from " << v[0] << " over " << v[1]
              << " points, split by " << v[2] << " with a guarded tail: its last tile reaches "
              << "past 2^31 - 1, which 32-bit loops cannot count. Split it by a factor that "
                 "divides the extent, or give its RDom a smaller min or extent.";
            break;
        }
        s << "The reduction variable " << n << " runs from " << v[0] << " over " << v[1]
          << " points, past 2^31 - 2, the last coordinate 32-bit loops reach. Give its RDom a "
             "smaller min or extent.";
        break;
    case ir::RuntimeErrorKind::FuncRegionOutOfRange:
        s << "Func " << n << " would be computed over [" << v[1] << ", " << v[2]
          << "] in dimension " << v[0]
          << ", past the coordinates 32-bit loops reach ([-2^31, 2^31 - 2]): its consumers read "
             "it that far. Realize the output at coordinates further from the int32 limits, or "
             "read the Func at smaller offsets.";
        break;
    case ir::RuntimeErrorKind::RDomExtentNegative: {
        // The name: the variable, then '\x1f', the stage using it, '\x1f' and the extent.
        size_t a = n.find('\x1f'), b = a == std::string::npos ? a : n.find('\x1f', a + 1);
        s << "The reduction variable " << n.substr(0, a);
        if (b != std::string::npos)
            s << " of " << n.substr(a + 1, b - a - 1) << " has the extent " << n.substr(b + 1)
              << ", which is " << v[0] << " here";
        else
            s << " has a negative extent (" << v[0] << ")";
        s << "; an RDom's extent must be at least 0.";
        break;
    }
    case ir::RuntimeErrorKind::RDomBoundWraps: {
        size_t sep = n.find('\x1f');
        s << "The reduction variable " << n.substr(0, sep) << " has a bound, "
          << (sep == std::string::npos ? "" : n.substr(sep + 1))
          << ", that passes the 32-bit range as it is computed (a part of it is " << v[0]
          << "), so its loop would run over a wrapped count. Give the RDom smaller bounds, or "
          << "fuse fewer points into one variable.";
        break;
    }
    case ir::RuntimeErrorKind::FusedLoopTooLong:
        s << "The loop " << n << " fuses loops of " << v[0] << " and " << v[1]
          << " iterations: " << v[0] * v[1] << " in all, more than the 2^31 - 1 a 32-bit loop "
          << "counts. Fuse loops whose extents multiply to less (split one first and fuse a "
          << "part of it), or keep them apart.";
        break;
    case ir::RuntimeErrorKind::ScheduleValueNotPositive:
        s << "The " << n << " is " << v[0] << "; it must be positive.";
        break;
    case ir::RuntimeErrorKind::SplitFactorNotPositive:
        s << "The loop " << n << " is split by " << v[0] << "; a split factor must be positive.";
        break;
    default:
        s << "Unknown runtime error " << kind << " about " << n << ".";
    }
    return s.str();
}

} // namespace

std::string describe_runtime_error(int32_t kind, const char *name, const int64_t *details) {
    return describe(kind, name, details);
}

} // namespace runtime
} // namespace aicf

extern "C" {

int32_t aicf_runtime_error(void *ctx, int32_t kind, const char *name, int64_t a, int64_t b,
                           int64_t c, int64_t d, int64_t e, int64_t f) {
    auto *rc = static_cast<aicf::runtime::RunContext *>(ctx);
    const int64_t v[] = {a, b, c, d, e, f};
    if (rc) {
        std::lock_guard<std::mutex> guard(rc->lock);
        if (rc->error.empty()) rc->error = aicf::runtime::describe(kind, name, v);
    }
    return -kind;
}

void *aicf_malloc(void *ctx, const char *name, int64_t bytes) {
    auto *rc = static_cast<aicf::runtime::RunContext *>(ctx);
    void *p = nullptr;
    if (bytes >= 0 && static_cast<uint64_t>(bytes) < (uint64_t(1) << 46)) {
        if (rc && size_t(bytes) < aicf::pooled_allocation_threshold) {
            int32_t failed = aicf::runtime::at_c_boundary(ctx, "reusing a heap allocation", [&] {
                p = rc->reuse(size_t(bytes));
                return 0;
            });
            if (failed) return nullptr;
            if (p) return p;
        }
        p = rc && rc->pool && size_t(bytes) >= aicf::pooled_allocation_threshold
                ? rc->pool->allocate(size_t(bytes))
                : aicf::host_allocate(size_t(bytes));
    }
    if (!p) {
        aicf_runtime_error(ctx, int32_t(aicf::ir::RuntimeErrorKind::OutOfMemory), name, bytes, 0, 0,
                           0, 0, 0);
        return nullptr;
    }
    int32_t kept = aicf::runtime::at_c_boundary(ctx, "recording a heap allocation", [&] {
        if (rc) rc->thread_allocations().live.push_back({p, size_t(bytes)});
        return 0;
    });
    if (kept != 0) {
        if (!rc || !rc->pool || !rc->pool->release(p)) aicf::host_free(p);
        return nullptr;
    }
    return p;
}

void aicf_free(void *ctx, void *p) {
    auto *rc = static_cast<aicf::runtime::RunContext *>(ctx);
    if (rc && rc->forget(p)) return; // kept for this thread's next allocation
    if (rc && rc->pool && rc->pool->release(p)) return;
    aicf::host_free(p);
}

int32_t aicf_parallel_for(void *ctx, aicf_parallel_body body, int32_t min, int32_t extent,
                          void *closure) {
    return aicf::runtime::parallel_for(body, ctx, min, extent, closure);
}

int32_t aicf_gpu_launch(void *ctx, int32_t kernel, int32_t gx, int32_t gy, int32_t gz,
                        void *const *args) {
    auto *rc = static_cast<aicf::runtime::RunContext *>(ctx);
    const aicf::runtime::CompiledKernel &k = rc->kernels->at(size_t(kernel));
    auto launch = [&]() -> int32_t {
        if (gx <= 0 || gy <= 0 || gz <= 0) return 0; // nothing to compute
        if (gy > 65535 || gz > 65535) {
            return aicf::runtime::record_error(
                ctx, "Kernel " + k.name + " needs a grid of " + std::to_string(gx) + " x " +
                         std::to_string(gy) + " x " + std::to_string(gz) +
                         " blocks; the y and z dimensions allow at most 65535. Map the larger "
                         "loop onto the innermost block dimension.");
        }
        if (!rc->device) rc->device = &aicf::runtime::device_from_environment();
        for (size_t i = 0; i < k.params.size(); i++) {
            if (!k.params[i].is_buffer) continue;
            aicf::runtime::prepare_on_device(*rc->device, static_cast<aicf_buffer_t *>(args[i]),
                                             k.params[i].name.c_str());
        }
        rc->device->launch(k, {gx, gy, gz}, args);
        for (size_t i = 0; i < k.params.size(); i++) {
            if (k.params[i].is_buffer && k.params[i].written) {
                auto *b = static_cast<aicf_buffer_t *>(args[i]);
                if (b->host) b->flags |= AICF_BUFFER_DEVICE_DIRTY;
            }
        }
        return 0;
    };
    std::string what = "launching kernel " + k.name;
    return aicf::runtime::at_c_boundary(ctx, what.c_str(), [&]() -> int32_t {
        try {
            return launch();
        } catch (const aicf::Error &e) {
            // Errors the device raises name the kernel when they do not already.
            std::string message = e.what();
            if (message.find(k.name) == std::string::npos)
                message = "Kernel " + k.name + ": " + message;
            return aicf::runtime::record_error(ctx, message, aicf::runtime::error_type(e));
        }
    });
}

void *aicf_device_malloc(void *ctx, const char *name, int64_t bytes) {
    return aicf_device_malloc_for_host(ctx, name, bytes, nullptr, 1);
}

void *aicf_device_malloc_for_host(void *ctx, const char *name, int64_t bytes, void *host,
                                  int32_t element_bytes) {
    auto *rc = static_cast<aicf::runtime::RunContext *>(ctx);
    aicf_buffer_t *b = nullptr;
    try {
        b = new aicf_buffer_t{};
        b->type = {1, uint8_t(8 * element_bytes), 1};
        if (host) {
            // One dimension of elements: what copies between host and device measure.
            b->host = static_cast<uint8_t *>(host);
            b->dimensions = 1;
            b->dim = new aicf_dim_t[1]{{0, int32_t(bytes / element_bytes), 1, 0}};
        }
        if (!rc->device) rc->device = &aicf::runtime::device_from_environment();
        char error[512] = {0};
        if (rc->device->memory()->device_malloc(b, bytes, error, sizeof error) != 0) {
            delete[] b->dim;
            delete b;
            aicf::runtime::record_error(
                ctx, std::string("Could not allocate ") + std::to_string(bytes) + " bytes for " +
                         name + " on the " + rc->device->name() + " device: " + error + ".");
            return nullptr;
        }
        std::lock_guard<std::mutex> guard(rc->lock);
        rc->live_device_buffers.push_back(b);
        return b;
    } catch (const aicf::Error &e) {
        aicf::runtime::record_error(ctx, e.what());
    } catch (const std::bad_alloc &) {
        aicf::runtime::record_error(ctx, std::string("Out of memory while allocating ") + name +
                                             " on the device.");
    }
    if (b && b->device) {
        auto *mem = static_cast<const aicf_device_interface_t *>(b->device_interface);
        if (mem) mem->device_free(b);
    }
    if (b) delete[] b->dim;
    delete b;
    return nullptr;
}

void aicf_device_free(void *ctx, void *buffer) {
    auto *rc = static_cast<aicf::runtime::RunContext *>(ctx);
    {
        std::lock_guard<std::mutex> guard(rc->lock);
        auto it = std::find(rc->live_device_buffers.begin(), rc->live_device_buffers.end(), buffer);
        if (it == rc->live_device_buffers.end()) return;
        rc->live_device_buffers.erase(it);
    }
    auto *b = static_cast<aicf_buffer_t *>(buffer);
    auto *mem = static_cast<const aicf_device_interface_t *>(b->device_interface);
    if (b->device && mem) mem->device_free(b);
    delete[] b->dim;
    delete b;
}

int32_t aicf_buffer_copy_to_host(void *ctx, void *buffer, int32_t writes) {
    auto *b = static_cast<aicf_buffer_t *>(buffer);
    if (b->flags & AICF_BUFFER_DEVICE_DIRTY) {
        auto *mem = static_cast<const aicf_device_interface_t *>(b->device_interface);
        char error[512] = {0};
        if (!mem || !b->host || aicf::copy_elements_to_host(b, error, sizeof error) != 0) {
            return aicf::runtime::record_error(
                ctx, std::string("Copying a buffer from the device to the host failed: ") + error);
        }
        b->flags &= ~uint64_t(AICF_BUFFER_DEVICE_DIRTY);
    }
    if (writes && b->device) b->flags |= AICF_BUFFER_HOST_DIRTY;
    return 0;
}
}
