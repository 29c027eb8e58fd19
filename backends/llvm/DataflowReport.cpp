#include "backends/llvm/DataflowReport.h"

#include "backends/llvm/CodeGen_PTX.h"
#include "backends/runtime/Runtime.h"
#include "dsl/base/Error.h"
#include "dsl/base/Float16.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "lowering/KernelCost.h"
#include "lowering/Lower.h"
#include "lowering/OperatorBaseline.h"
#include "lowering/TensorCores.h"
#include "lowering/Wrappers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace aicf {
namespace backends {

namespace {

using lowering::ConcreteArguments;

// The bytes a buffer of this shape spans.
// The bytes of a buffer's elements: the fewer of its span and its element count (a window of
// a wider array spans whole rows of it; a broadcast's stride 0 repeats one element).
int64_t span_bytes(const ConcreteArguments::Shape &s) {
    int64_t last = 0, elements = 1;
    for (const aicf_dim_t &d : s.dims) {
        if (d.extent <= 0) return 0;
        last += int64_t(d.extent - 1) * std::abs(int64_t(d.stride));
        if (__builtin_mul_overflow(elements, int64_t(d.extent), &elements)) elements = INT64_MAX;
    }
    return std::min(last + 1, elements) * s.type.bytes();
}

// A dense shape of these extents for buffer `name`.
ConcreteArguments::Shape dense(ir::Type t, const std::vector<int> &extents,
                               const std::string &name) {
    ConcreteArguments::Shape s;
    s.type = t;
    int64_t stride = 1;
    for (size_t d = 0; d < extents.size(); d++) {
        user_assert(stride <= INT32_MAX)
            << "The report's sizes make buffer " << name << " too large: dimension " << d
            << " would have a stride of " << stride << " elements, and AICF indexes buffers "
            << "with 32-bit strides.";
        s.dims.push_back(aicf_dim_t{0, extents[d], int32_t(stride), 0});
        stride *= std::max(extents[d], 1);
    }
    return s;
}

ir::Expr scalar_from_bits(ir::Type t, uint64_t bits) {
    if (t.is_bfloat()) return ir::make_const(t, double(bfloat16_t::from_bits(uint16_t(bits))));
    if (t.is_float() && t.bits == 16)
        return ir::make_const(t, double(float16_t::from_bits(uint16_t(bits))));
    if (t.is_float() && t.bits == 32) {
        float f;
        uint32_t b = uint32_t(bits);
        std::memcpy(&f, &b, sizeof(f));
        return ir::make_const(t, double(f));
    }
    if (t.is_float() && t.bits == 64) {
        double d;
        std::memcpy(&d, &bits, sizeof(d));
        return ir::make_const(t, d);
    }
    if (t.is_int() && t.bits < 64) {
        const int shift = 64 - t.bits;
        return ir::make_const(t, int64_t(bits << shift) >> shift);
    }
    return ir::make_const(t, int64_t(bits));
}

std::string extents_text(const std::vector<int> &extents) {
    std::string text;
    for (size_t i = 0; i < extents.size(); i++)
        text += (i ? " x " : "") + std::to_string(extents[i]);
    return text.empty() ? "()" : text;
}

ConcreteArguments concrete_arguments(const std::vector<Argument> &args,
                                     const std::vector<int> &sizes, const ReportArguments &given,
                                     const std::string &pipeline) {
    ConcreteArguments c;
    // Arguments given for names the pipeline does not have, or of the wrong kind, first.
    std::set<std::string> buffers, scalars;
    int outputs = 0;
    for (const Argument &a : args) {
        (a.is_buffer ? buffers : scalars).insert(a.name);
        outputs += a.is_output;
    }
    for (const auto &kv : given.buffers)
        user_assert(buffers.count(kv.first))
            << "The report of " << pipeline << " is given the extents of " << kv.first << ", "
            << (scalars.count(kv.first) ? "which is a Param of the pipeline: give its value in "
                                          "ReportArguments::scalars."
                                        : "which is not an input of the pipeline.");
    for (const auto &kv : given.scalars)
        user_assert(scalars.count(kv.first))
            << "The report of " << pipeline << " is given a value for " << kv.first << ", "
            << (buffers.count(kv.first) ? "which is a buffer of the pipeline: give its extents "
                                          "in ReportArguments::buffers."
                                        : "which is not a Param of the pipeline.");
    for (const Argument &a : args) {
        if (a.is_buffer && a.is_output) {
            // Its own extents where the arguments give them (outputs of another rank than the
            // sizes), else the report's sizes: outputs of their rank have them, as realize
            // gives every output the same sizes.
            auto own = given.buffers.find(a.name);
            const std::vector<int> &extents = own != given.buffers.end() ? own->second : sizes;
            user_assert(extents.size() != sizes.size() || extents == sizes)
                << "The report of " << pipeline << " is at sizes " << extents_text(sizes)
                << ", but ReportArguments::buffers gives its output " << a.name << " the extents "
                << extents_text(extents) << ". Outputs of the sizes' rank have the sizes; give "
                << "their extents once, as the sizes.";
            user_assert(own == given.buffers.end() || int(extents.size()) == a.dimensions)
                << "The report of " << pipeline << " gives " << extents.size() << " extent"
                << (extents.size() == 1 ? "" : "s") << " for its output " << a.name
                << ", which has " << a.dimensions << " dimension" << (a.dimensions == 1 ? "" : "s")
                << ".";
            user_assert(int(extents.size()) == a.dimensions)
                << "The report of " << pipeline << " is at sizes " << extents_text(sizes) << " ("
                << sizes.size() << " size" << (sizes.size() == 1 ? "" : "s") << "), but its output "
                << a.name << " has " << a.dimensions << " dimension"
                << (a.dimensions == 1 ? "" : "s") << ": give " << a.dimensions << " size"
                << (a.dimensions == 1 ? "" : "s")
                << (outputs > 1 ? ", or, for an output of another rank than the others, its "
                                  "extents in ReportArguments::buffers[\"" +
                                      a.name + "\"]"
                                : std::string())
                << ".";
            for (size_t i = 0; i < extents.size(); i++)
                user_assert(extents[i] >= 0)
                    << "The report of " << pipeline << ": size " << i << " of output " << a.name
                    << " is " << extents[i] << "; sizes may not be negative.";
            c.buffers[a.name] = dense(a.type, extents, a.name);
            continue;
        }
        if (a.is_buffer) {
            auto it = given.buffers.find(a.name);
            if (it != given.buffers.end()) {
                user_assert(int(it->second.size()) == a.dimensions)
                    << "The report of " << pipeline << " gives " << it->second.size()
                    << " extents for input " << a.name << ", which has " << a.dimensions
                    << " dimension" << (a.dimensions == 1 ? "" : "s") << ".";
                for (int e : it->second)
                    user_assert(e >= 0) << "The report of " << pipeline << " gives input " << a.name
                                        << " a negative extent (" << e << ").";
                c.buffers[a.name] = dense(a.type, it->second, a.name);
                continue;
            }
            const auto &b = a.param.defined() ? a.param.buffer() : nullptr;
            user_assert(b != nullptr)
                << "The report of " << pipeline << " needs the extents of input " << a.name
                << ": give them in ReportArguments::buffers[\"" << a.name << "\"] (" << a.dimensions
                << " extents, innermost first), or to a generator with -s " << a.name << "="
                << (a.dimensions == 1 ? "4096" : "4096x2048") << ".";
            ConcreteArguments::Shape s;
            s.type = a.type;
            const aicf_buffer_t *raw = b->raw();
            for (int d = 0; d < raw->dimensions; d++) {
                // As a GPU pipeline refuses it when it runs.
                user_assert(raw->dim[d].stride >= 0 || raw->dim[d].extent <= 1)
                    << "The report of " << pipeline << ": input " << a.name << " has a negative "
                    << "stride in dimension " << d << " (" << raw->dim[d].stride << "), and GPU "
                    << "devices need buffers laid out with non-negative strides.";
                s.dims.push_back(raw->dim[d]);
            }
            c.buffers[a.name] = s;
            continue;
        }
        auto it = given.scalars.find(a.name);
        if (it != given.scalars.end()) {
            if (!a.type.is_float()) {
                const double v = it->second;
                const bool fits = v == std::floor(v) &&
                                  (a.type.is_bool()   ? v == 0 || v == 1
                                   : a.type.is_uint() ? v >= 0 && v < std::ldexp(1.0, a.type.bits)
                                                      : v >= -std::ldexp(1.0, a.type.bits - 1) &&
                                                            v < std::ldexp(1.0, a.type.bits - 1));
                user_assert(fits) << "The report of " << pipeline << " is given " << v
                                  << " for Param " << a.name << ", which holds "
                                  << ir::to_string(a.type) << " values; give one it can hold.";
            }
            // A uint64 value past INT64_MAX keeps its bits (make_const takes int64's).
            const double v = it->second;
            c.scalars[a.name] = a.type.is_float() ? ir::make_const(a.type, v)
                                : a.type.is_uint() && v >= 0x1p63
                                    ? ir::make_const(a.type, int64_t(uint64_t(v)))
                                    : ir::make_const(a.type, int64_t(v));
            continue;
        }
        user_assert(a.param.defined() && a.param.scalar_set())
            << "The report of " << pipeline << " needs the value of Param " << a.name
            << ": give it in ReportArguments::scalars[\"" << a.name << "\"], or to a "
            << "generator with -s " << a.name << "=VALUE.";
        c.scalars[a.name] = scalar_from_bits(a.type, a.param.scalar_bits());
    }
    return c;
}

// Whether a kernel's mma take float (TF32) inputs.
bool uses_tf32(const lowering::LoweredKernel &k) {
    bool tf32 = false;
    ir::visit_each<ir::Call>(k.body, [&](const ir::Call *op) {
        if (!op->is_intrinsic(ir::Intrinsic::gpu_mma)) return;
        auto s = lowering::mma_shape(op->args[0].type(), op->args[1].type(), op->args[2].type());
        tf32 = tf32 || (s && s->tf32);
    });
    return tf32;
}

std::vector<RooflineBound> roofline(int64_t moved, int64_t flops, int64_t tensor, bool tf32) {
    std::vector<RooflineBound> bounds;
    for (const GPUPeaks &g : report_gpus()) {
        RooflineBound b;
        b.gpu = g.name;
        b.memory_seconds = double(moved) / g.memory_bytes_per_s;
        // The tensor cores and the CUDA cores run at once: each bounds the time alone.
        b.compute_seconds =
            std::max(double(flops) / g.fp32_flops_per_s,
                     double(tensor) / (tf32 ? g.tf32_flops_per_s : g.tensor_flops_per_s));
        b.seconds = std::max(b.memory_seconds, b.compute_seconds);
        bounds.push_back(b);
    }
    return bounds;
}

// The bytes of [lo, hi] elements, at most `limit`.
int64_t span(int64_t lo, int64_t hi, int element_bytes, int64_t limit) {
    if (hi < lo) return 0;
    const double bytes = (double(hi) - double(lo) + 1) * element_bytes;
    return bytes >= double(limit) ? limit : int64_t(bytes);
}

// The bytes of the elements in [lo, hi] and, where given, in the box of coordinates `box`:
// the fewer of the two (a window of a wider array spans whole rows it does not reach).
int64_t reached_bytes(int64_t lo, int64_t hi, const std::vector<std::pair<int64_t, int64_t>> &box,
                      int element_bytes, int64_t limit) {
    const int64_t spanned = span(lo, hi, element_bytes, limit);
    if (box.empty()) return spanned;
    double elements = 1;
    for (const auto &[first, last] : box)
        elements *= last < first ? 0.0 : double(last) - double(first) + 1;
    const double bytes = elements * element_bytes;
    return bytes >= double(spanned) ? spanned : int64_t(bytes);
}

// Two boxes' union, per dimension (empty, unknown, when either is).
std::vector<std::pair<int64_t, int64_t>>
box_union(const std::vector<std::pair<int64_t, int64_t>> &a,
          const std::vector<std::pair<int64_t, int64_t>> &b) {
    if (a.size() != b.size()) return {};
    std::vector<std::pair<int64_t, int64_t>> u = a;
    for (size_t d = 0; d < a.size(); d++)
        u[d] = {std::min(a[d].first, b[d].first), std::max(a[d].second, b[d].second)};
    return u;
}

int64_t saturating_sum(std::initializer_list<int64_t> terms) {
    int64_t sum = 0;
    for (int64_t t : terms)
        if (__builtin_add_overflow(sum, t, &sum)) return INT64_MAX;
    return sum;
}

// The report's sums (each kernel's bytes over its buffers; the pipeline's bytes and flops
// over its kernels) fit in int64, or the sizes are refused.
void check_totals_fit(const DataflowReport &r) {
    bool overflow = false;
    int64_t requested = 0, moved = 0, flops = 0, tensor = 0;
    for (const KernelReport &k : r.kernels) {
        int64_t kernel_requested = 0, kernel_moved = 0;
        for (const BufferReport &b : k.buffers) {
            for (int64_t v : {b.requested_read, b.requested_written})
                overflow =
                    overflow || __builtin_add_overflow(kernel_requested, v, &kernel_requested);
            for (int64_t v : {b.moved_read, b.moved_written})
                overflow = overflow || __builtin_add_overflow(kernel_moved, v, &kernel_moved);
        }
        overflow = overflow || __builtin_add_overflow(requested, kernel_requested, &requested) ||
                   __builtin_add_overflow(moved, kernel_moved, &moved) ||
                   __builtin_add_overflow(flops, k.flops, &flops) ||
                   __builtin_add_overflow(tensor, k.tensor_flops, &tensor);
    }
    user_assert(!overflow) << "The dataflow report of " << r.pipeline << " at these sizes "
                           << "adds up to more than 2^63 - 1 bytes or flops: no count holds "
                           << "them. Count smaller sizes.";
}

} // namespace

DataflowReport dataflow_report(const std::vector<ir::Function> &outputs,
                               const std::vector<Argument> &args, const Target &target,
                               const std::vector<int> &sizes, const ReportArguments &given,
                               bool baseline) {
    const std::string name = outputs.empty() ? "the pipeline" : outputs[0].name();
    user_assert(target.has_cuda())
        << "The dataflow report of " << name << " counts GPU kernels; " << target.to_string()
        << " has no GPU. Name a target with one, such as host-cuda-sm_90.";
    const ConcreteArguments concrete = concrete_arguments(args, sizes, given, name);
    const lowering::LoweredPipeline p = lowering::lower(outputs, args, target);
    const lowering::StaticRun run = lowering::static_launches(p, concrete);
    if (run.failed) {
        const std::string why = runtime::describe_runtime_error(
            run.failed->kind, run.failed->name.c_str(), run.failed->details.data());
        user_error << "The dataflow report of " << name << " cannot use these sizes: " << why;
    }

    std::map<std::string, KernelResources> resources;
    if (ptxas_available() && !p.kernels.empty()) {
        const std::string arch = "sm_" + std::to_string(target.cuda_capability()) +
                                 (target.is_arch_specific() ? "a" : "");
        for (const KernelResources &r :
             assemble_ptx(compile_kernels_to_ptx(p.kernels, target), arch))
            resources[r.kernel] = r;
    }

    DataflowReport r;
    r.pipeline = name;
    r.target = target.to_string();
    r.sizes = sizes;
    std::map<std::string, BufferReport::Role> roles;
    std::map<std::string, int64_t> buffer_bytes;
    for (const Argument &a : args) {
        if (!a.is_buffer) continue;
        roles[a.name] = a.is_output ? BufferReport::Output : BufferReport::Input;
        if (a.is_output && size_t(a.dimensions) != sizes.size()) {
            std::vector<int> &extents = r.other_output_sizes[a.name];
            for (const aicf_dim_t &d : concrete.buffers.at(a.name).dims)
                extents.push_back(d.extent);
        }
        buffer_bytes[a.name] = span_bytes(concrete.buffers.at(a.name));
        if (!a.is_output) r.inputs.push_back(a.name);
    }
    for (const auto &kv : run.scratch)
        buffer_bytes.emplace(kv.first, kv.second);
    // The elements of each input and output any kernel reaches, and the bytes the kernels
    // move of it (for the compulsory bytes).
    struct Reached {
        int64_t lo, hi;
        std::vector<std::pair<int64_t, int64_t>> box;
    };
    std::map<std::string, Reached> reached;
    std::map<std::string, int64_t> moved_of;
    std::map<std::string, std::vector<aicf_dim_t>> shapes;
    for (const auto &kv : concrete.buffers)
        shapes[kv.first] = kv.second.dims;
    for (const lowering::StaticLaunch &launch : run.launches) {
        const lowering::LoweredKernel &k = p.kernels[size_t(launch.kernel)];
        const lowering::KernelCost cost = lowering::static_kernel_cost(k, launch, shapes);
        KernelReport kr;
        kr.name = k.name;
        kr.funcs = k.funcs;
        kr.grid = launch.grid;
        kr.block = k.threads;
        kr.shared_bytes = k.shared_bytes;
        auto res = resources.find(k.name);
        if (res != resources.end()) {
            kr.registers = res->second.registers;
            kr.spill_bytes = res->second.spill_store_bytes + res->second.spill_load_bytes;
        }
        kr.flops = cost.flops;
        kr.tensor_flops = cost.tensor_flops;
        kr.tf32 = uses_tf32(k);
        kr.exact = cost.exact;
        for (const lowering::BufferCost &c : cost.buffers) {
            BufferReport b;
            b.name = c.name;
            auto role = roles.find(c.name);
            b.role = role == roles.end() ? BufferReport::Intermediate : role->second;
            auto size = buffer_bytes.find(c.name);
            b.bytes = size == buffer_bytes.end() ? 0 : size->second;
            const int64_t limit = b.bytes > 0 ? b.bytes : INT64_MAX;
            b.requested_read = c.bytes_loaded;
            b.requested_written = c.bytes_stored;
            b.moved_read = std::min(c.bytes_loaded, reached_bytes(c.load_lo, c.load_hi, c.load_box,
                                                                  c.element_bytes, limit));
            b.moved_written =
                std::min(c.bytes_stored, reached_bytes(c.store_lo, c.store_hi, c.store_box,
                                                       c.element_bytes, limit));
            if (b.role != BufferReport::Intermediate) {
                moved_of[c.name] =
                    saturating_sum({moved_of[c.name], b.moved_read, b.moved_written});
                for (const Reached &part : {Reached{c.load_lo, c.load_hi, c.load_box},
                                            Reached{c.store_lo, c.store_hi, c.store_box}}) {
                    if (part.hi < part.lo) continue;
                    auto it = reached.find(c.name);
                    if (it == reached.end()) {
                        reached[c.name] = part;
                    } else {
                        it->second = {std::min(it->second.lo, part.lo),
                                      std::max(it->second.hi, part.hi),
                                      box_union(it->second.box, part.box)};
                    }
                }
            }
            kr.buffers.push_back(b);
        }
        kr.roofline = roofline(kr.moved_bytes(), kr.flops, kr.tensor_flops, kr.tf32);
        r.kernels.push_back(std::move(kr));
    }
    // Funcs produced in the host code: those no kernel computes (the host code keeps the
    // produce of a Func around the launches that compute it).
    std::set<std::string> in_kernels;
    for (const lowering::LoweredKernel &k : p.kernels)
        in_kernels.insert(k.funcs.begin(), k.funcs.end());
    ir::visit_each<ir::ProducerConsumer>(p.body, [&](const ir::ProducerConsumer *pc) {
        if (pc->is_producer && !in_kernels.count(pc->name) &&
            std::find(r.host_funcs.begin(), r.host_funcs.end(), pc->name) == r.host_funcs.end())
            r.host_funcs.push_back(pc->name);
    });
    // Each input read once and each output written once: the span of the elements the
    // kernels reach, at most what they move of it (a strided column of a matrix spans
    // nearly all of it).
    for (const auto &kv : reached) {
        const ConcreteArguments::Shape &s = concrete.buffers.at(kv.first);
        r.compulsory_bytes += std::min(moved_of.at(kv.first),
                                       reached_bytes(kv.second.lo, kv.second.hi, kv.second.box,
                                                     s.type.bytes(), buffer_bytes.at(kv.first)));
    }
    check_totals_fit(r);
    for (size_t g = 0; g < report_gpus().size(); g++) {
        RooflineBound total;
        total.gpu = report_gpus()[g].name;
        for (const KernelReport &k : r.kernels) {
            total.seconds += k.roofline[g].seconds;
            total.memory_seconds += k.roofline[g].memory_seconds;
            total.compute_seconds += k.roofline[g].compute_seconds;
        }
        r.roofline.push_back(total);
    }
    // A Func wrapped for another (g.in(f), or g.in() for all) is read through its wrapper.
    std::map<std::string, ir::Function> env = detail::find_transitive_calls(outputs);
    lowering::redirect_to_wrappers(outputs, env);
    for (const auto &kv : env) {
        std::vector<std::string> &callees = r.calls[kv.first];
        for (const ir::Function &g : ir::direct_callees(kv.second))
            callees.push_back(g.name());
        for (int s = 0; s < kv.second.stages(); s++) {
            const ir::Definition &d = kv.second.stage(s);
            auto images = [&](const ir::Expr &e) {
                ir::visit_each<ir::Call>(e, [&](const ir::Call *c) {
                    if (c->call_type == ir::Call::Image &&
                        std::find(callees.begin(), callees.end(), c->name) == callees.end())
                        callees.push_back(c->name);
                });
            };
            for (const ir::Expr &e : d.values)
                images(e);
            for (const ir::Expr &e : d.args)
                images(e);
        }
    }
    if (baseline) {
        const std::vector<ir::Function> plain = lowering::operator_by_operator(outputs);
        r.baseline = std::make_shared<DataflowReport>(
            dataflow_report(plain, detail::infer_arguments(plain), target, sizes, given, false));
    }
    return r;
}

} // namespace backends
} // namespace aicf
