#include "lowering/LaunchKernels.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"

#include <cstdint>
#include <optional>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

const Call *as_launch(const Stmt &s) {
    const Evaluate *e = s.as<Evaluate>();
    const Call *c = e ? e->value.as<Call>() : nullptr;
    return c && c->is_intrinsic(Intrinsic::gpu_launch) ? c : nullptr;
}

bool contains_launch(const Stmt &s) {
    bool found = false;
    visit_each<Call>(
        s, [&](const Call *c) { found = found || c->is_intrinsic(Intrinsic::gpu_launch); });
    return found;
}

// Appends each launch's kernel arguments.
class AddLaunchArguments : public IRMutator {
public:
    explicit AddLaunchArguments(const std::vector<LoweredKernel> &kernels) : kernels(kernels) {}

private:
    const std::vector<LoweredKernel> &kernels;
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        const Call *launch = as_launch(Stmt(op));
        if (!launch) return IRMutator::visit(op);
        internal_assert(launch->args.size() == 4)
            << "launch_kernels: a launch that has its arguments";
        auto index = as_const_int(launch->args[0]);
        internal_assert(index && *index >= 0 && size_t(*index) < kernels.size())
            << "launch_kernels: kernel index";
        const LoweredKernel &k = kernels[size_t(*index)];
        Stmt s = launch_of(launch->args, k);
        if (k.fallback < 0) return s;
        // The kernel whose wide accesses need the launch's values to be aligned, or its copy
        // that accesses them lane by lane.
        std::vector<Expr> fallback_args = launch->args;
        fallback_args[0] = make_const(Int(32), int64_t(k.fallback));
        return IfThenElse::make(k.launch_condition, s,
                                launch_of(fallback_args, kernels[size_t(k.fallback)]));
    }

    static Stmt launch_of(std::vector<Expr> args, const LoweredKernel &k) {
        for (const KernelArgument &a : k.args) {
            if (a.is_buffer) {
                args.push_back(Variable::make(Handle(), buffer_descriptor_name(a.name)));
            } else {
                args.push_back(Variable::make(a.type, a.name));
            }
        }
        return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_launch, args, Call::Intrinsic));
    }
};

// Host code around the launches: intermediates the kernels use move to device memory, and
// host code that touches a pipeline buffer gets the buffer's current data first (a kernel of
// this pipeline, or of another that ran before, may have left it on the device), and marks
// what it writes as newer on the host (a later kernel copies it back).
class PlaceHostData : public IRMutator {
public:
    PlaceHostData(const std::vector<LoweredKernel> &kernels, const std::vector<Argument> &args) {
        for (const LoweredKernel &k : kernels)
            for (const KernelArgument &a : k.args)
                if (a.is_buffer) device_buffers.insert(a.name);
        for (const Argument &a : args)
            if (a.is_buffer) synced_buffers.insert(a.name);
    }

    Stmt mutate(const Stmt &s) override {
        if (s.defined() && !contains_launch(s) && !s.as<Allocate>()) return wrap(s);
        return IRMutator::mutate(s);
    }

private:
    // The kernels' buffers; the buffers whose host and device copies are kept in step: the
    // pipeline's, and intermediates both kernels and host code use.
    std::set<std::string> device_buffers, synced_buffers;

    using IRMutator::visit;

    Stmt visit(const Allocate *op) override {
        if (!device_buffers.count(op->name)) return IRMutator::visit(op);
        bool used_on_host = false;
        visit_each<Load>(op->body, [&](const Load *l) { used_on_host |= l->name == op->name; });
        visit_each<Store>(op->body, [&](const Store *s) { used_on_host |= s->name == op->name; });
        Expr bytes = make_const(Int(64), int64_t(op->type.bytes()));
        for (const Expr &e : op->extents)
            bytes = Mul::make(bytes, cast(Int(64), e));
        // Kernels index it with 32-bit flat indices, as host code does its own allocations
        // (which code generation checks): at most 2^31 - 1 elements, checked before the
        // allocation. The count saturates at INT64_MAX instead of wrapping.
        const Expr int64_max = make_const(Int(64), INT64_MAX);
        Expr count = make_const(Int(64), int64_t(1));
        for (const Expr &e : op->extents) {
            Expr ex = Max::make(cast(Int(64), e), make_const(Int(64), int64_t(0)));
            Expr overflows = GT::make(
                count, Div::make(int64_max, Max::make(ex, make_const(Int(64), int64_t(1)))));
            count = Select::make(overflows, int64_max, Mul::make(count, ex));
        }
        count = simplify(count);
        Stmt size_check;
        const std::optional<int64_t> constant_count = as_const_int(count);
        if (!constant_count || *constant_count > INT32_MAX) {
            Expr error =
                Call::make(Int(32), Intrinsic::runtime_error,
                           {make_const(Int(32), int64_t(RuntimeErrorKind::FuncStorageTooLarge)),
                            StringImm::make(op->name), count},
                           Call::Intrinsic);
            size_check =
                AssertStmt::make(LE::make(count, make_const(Int(64), int64_t(INT32_MAX))), error);
        }
        std::string desc = buffer_descriptor_name(op->name);
        std::vector<Expr> args = {StringImm::make(op->name), simplify(bytes)};
        // Host code reads or writes it too: its host storage stays, and the data moves
        // between the two copies as a pipeline buffer's does.
        if (used_on_host) {
            args.push_back(Variable::make(Handle(), op->name));
            args.push_back(make_const(Int(32), int64_t(op->type.bytes())));
            synced_buffers.insert(op->name);
        }
        Expr alloc = Call::make(Handle(), Intrinsic::device_malloc, args, Call::Intrinsic);
        Stmt body = mutate(op->body);
        Stmt release = Evaluate::make(Call::make(
            Int(32), Intrinsic::device_free, {Variable::make(Handle(), desc)}, Call::Intrinsic));
        Stmt s = LetStmt::make(desc, alloc, Block::make(body, release));
        if (!used_on_host) return size_check.defined() ? Block::make(size_check, s) : s;
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, s);
    }

    // Wraps host statements that touch pipeline buffers; recurses into statements that
    // contain launches.
    Stmt wrap(const Stmt &s) {
        if (!s.defined() || as_launch(s)) return s;
        if (contains_launch(s)) return IRMutator::mutate(s);
        std::set<std::string> reads, writes;
        visit_each<Load>(s, [&](const Load *l) {
            if (synced_buffers.count(l->name)) reads.insert(l->name);
        });
        visit_each<Store>(s, [&](const Store *st) {
            if (synced_buffers.count(st->name)) writes.insert(st->name);
        });
        if (reads.empty() && writes.empty()) return s;
        std::vector<Stmt> stmts;
        std::set<std::string> all = reads;
        all.insert(writes.begin(), writes.end());
        for (const std::string &b : all) {
            Expr desc = Variable::make(Handle(), buffer_descriptor_name(b));
            Expr write = make_const(Int(32), int64_t(writes.count(b) ? 1 : 0));
            stmts.push_back(Evaluate::make(Call::make(Int(32), Intrinsic::buffer_copy_to_host,
                                                      {desc, write}, Call::Intrinsic)));
        }
        stmts.push_back(s);
        return Block::make(stmts);
    }
};

} // namespace

Stmt launch_kernels(const Stmt &host, const std::vector<LoweredKernel> &kernels,
                    const std::vector<Argument> &args) {
    Stmt s = kernels.empty() ? host : AddLaunchArguments(kernels).mutate(host);
    return PlaceHostData(kernels, args).mutate(s);
}

} // namespace lowering
} // namespace aicf
