#include "lowering/ExtractKernels.h"

#include "dsl/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "lowering/BuildKernel.h"
#include "lowering/GPUPlacement.h"
#include "lowering/Names.h"

#include <algorithm>
#include <atomic>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The Funcs computed in a statement, in order.
std::vector<std::string> funcs_produced(const Stmt &s) {
    std::vector<std::string> names;
    visit_each<ProducerConsumer>(s, [&](const ProducerConsumer *op) {
        if (op->is_producer && std::find(names.begin(), names.end(), op->name) == names.end())
            names.push_back(op->name);
    });
    return names;
}

// Replaces each kernel's loop nest in the host code by a launch.
class Extractor : public IRMutator {
public:
    Extractor(const Target &target, const std::string &pipeline, std::vector<LoweredKernel> &kernels)
        : target(target), pipeline(pipeline), kernels(kernels) {}

private:
    const Target &target;
    const std::string &pipeline;
    std::vector<LoweredKernel> &kernels;

    using IRMutator::visit;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::GPUBlock) return IRMutator::visit(op);
        static std::atomic<uint64_t> next_id{1};
        LoweredKernel k;
        k.id = next_id++;
        k.target = target;
        std::vector<std::string> funcs = funcs_produced(Stmt(op));
        std::string main_func = func_of_loop(op->name);
        k.name = pipeline + "_k" + std::to_string(kernels.size()) + "_" + main_func;
        k.funcs = funcs;
        if (std::find(k.funcs.begin(), k.funcs.end(), main_func) == k.funcs.end())
            k.funcs.insert(k.funcs.begin(), main_func);
        std::array<Expr, 3> grid = build_kernel(op, target, k);
        std::vector<Expr> args = {make_const(Int(32), int64_t(kernels.size())), grid[0], grid[1],
                                  grid[2]};
        for (const KernelArgument &a : k.args) {
            if (a.is_buffer) {
                args.push_back(Variable::make(Handle(), buffer_descriptor_name(a.name)));
            } else {
                args.push_back(Variable::make(a.type, a.name));
            }
        }
        kernels.push_back(std::move(k));
        return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_launch, args, Call::Intrinsic));
    }
};

bool is_launch(const Stmt &s) {
    const Evaluate *e = s.as<Evaluate>();
    const Call *c = e ? e->value.as<Call>() : nullptr;
    return c && c->is_intrinsic(Intrinsic::gpu_launch);
}

bool contains_launch(const Stmt &s) {
    bool found = false;
    visit_each<Call>(s, [&](const Call *c) { found = found || c->is_intrinsic(Intrinsic::gpu_launch); });
    return found;
}

// Host code around the launches: intermediates the kernels use move to device memory, and
// host code that touches a pipeline buffer the kernels touch gets the buffer's current data
// first.
class PlaceHostData : public IRMutator {
public:
    PlaceHostData(const std::vector<LoweredKernel> &kernels, const std::vector<Argument> &args) {
        for (const LoweredKernel &k : kernels)
            for (const KernelArgument &a : k.args)
                if (a.is_buffer) device_buffers.insert(a.name);
        for (const Argument &a : args)
            if (a.is_buffer) pipeline_buffers.insert(a.name);
    }

private:
    std::set<std::string> device_buffers, pipeline_buffers;

    using IRMutator::visit;

    Stmt visit(const Allocate *op) override {
        if (!device_buffers.count(op->name)) return IRMutator::visit(op);
        std::string used_on_host;
        auto note = [&](const std::string &n) {
            if (n == op->name) used_on_host = n;
        };
        visit_each<Load>(op->body, [&](const Load *l) { note(l->name); });
        visit_each<Store>(op->body, [&](const Store *s) { note(s->name); });
        user_assert(used_on_host.empty())
            << "Func " << op->name << " is used both by GPU kernels and by host code. Compute "
            << "it and all its consumers on the GPU (gpu_tile, gpu_blocks/gpu_threads, or "
            << "gpu_single_thread), or all on the host.";
        Expr bytes = make_const(Int(64), int64_t(op->type.bytes()));
        for (const Expr &e : op->extents) bytes = Mul::make(bytes, cast(Int(64), e));
        std::string desc = buffer_descriptor_name(op->name);
        Expr alloc = Call::make(Handle(), Intrinsic::device_malloc,
                                {StringImm::make(op->name), simplify(bytes)}, Call::Intrinsic);
        Stmt body = mutate(op->body);
        Stmt release = Evaluate::make(Call::make(Int(32), Intrinsic::device_free,
                                                 {Variable::make(Handle(), desc)}, Call::Intrinsic));
        return LetStmt::make(desc, alloc, Block::make(body, release));
    }

    // Wraps host statements that touch device buffers; recurses into statements that
    // contain launches.
    Stmt wrap(const Stmt &s) {
        if (!s.defined() || is_launch(s)) return s;
        if (contains_launch(s)) return IRMutator::mutate(s);
        std::set<std::string> reads, writes;
        visit_each<Load>(s, [&](const Load *l) {
            if (device_buffers.count(l->name) && pipeline_buffers.count(l->name)) reads.insert(l->name);
        });
        visit_each<Store>(s, [&](const Store *st) {
            if (device_buffers.count(st->name) && pipeline_buffers.count(st->name)) writes.insert(st->name);
        });
        if (reads.empty() && writes.empty()) return s;
        std::vector<Stmt> stmts;
        std::set<std::string> all = reads;
        all.insert(writes.begin(), writes.end());
        for (const std::string &b : all) {
            Expr desc = Variable::make(Handle(), buffer_descriptor_name(b));
            Expr write = make_const(Int(32), int64_t(writes.count(b) ? 1 : 0));
            stmts.push_back(Evaluate::make(
                Call::make(Int(32), Intrinsic::buffer_copy_to_host, {desc, write}, Call::Intrinsic)));
        }
        stmts.push_back(s);
        return Block::make(stmts);
    }

public:
    Stmt mutate(const Stmt &s) override {
        if (s.defined() && !contains_launch(s) && !s.as<Allocate>()) return wrap(s);
        return IRMutator::mutate(s);
    }
};

} // namespace

ExtractedKernels extract_kernels(const Stmt &s, const std::vector<Argument> &args,
                                 const Target &target, const std::string &pipeline_name) {
    ExtractedKernels result;
    Extractor extractor(target, pipeline_name, result.kernels);
    Stmt host = extractor.mutate(s);
    if (result.kernels.empty()) {
        result.host = s;
        return result;
    }
    result.host = PlaceHostData(result.kernels, args).mutate(host);
    return result;
}

} // namespace lowering
} // namespace aicf
