// The compiler from a kernel's IR to the simulator's nodes (see SimCompiler.h): the nodes of
// element operations by element kind, what each node costs, and the Compiler itself.

#include "backends/sim/SimCompiler.h"

#include "backends/sim/SimOps.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "lowering/AsyncCopy.h"
#include "lowering/Kernel.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

namespace aicf {
namespace backends {
namespace sim {

namespace {

using ir::Expr;
using ir::Intrinsic;
using ir::Stmt;
using ir::Type;

// ---- Node factories by element kind ----

template <class F> ExprPtr unary(Type t, int n, F f, ExprPtr a) {
    return std::make_unique<UnaryCode<F>>(t, n, f, std::move(a));
}

template <class F> ExprPtr binary(Type t, int n, F f, ExprPtr a, ExprPtr b) {
    return std::make_unique<BinaryCode<F>>(t, n, f, std::move(a), std::move(b));
}

// An operation on integers and floats; `operand` picks the functor, `result` is the node type.
template <template <bool> class I, template <class> class Fl>
ExprPtr numeric_binary(Type operand, Type result, int n, ExprPtr a, ExprPtr b) {
    const int s = wrap_shift(operand.bits);
    switch (kind_of(operand)) {
    case Kind::Int:
        return binary(result, n, I<true>{s}, std::move(a), std::move(b));
    case Kind::UInt:
        return binary(result, n, I<false>{s}, std::move(a), std::move(b));
    case Kind::F16:
        return binary(result, n, Fl<F16>{}, std::move(a), std::move(b));
    case Kind::BF16:
        return binary(result, n, Fl<BF16>{}, std::move(a), std::move(b));
    case Kind::F32:
        return binary(result, n, Fl<F32>{}, std::move(a), std::move(b));
    case Kind::F64:
        return binary(result, n, Fl<F64>{}, std::move(a), std::move(b));
    }
    return nullptr;
}

template <template <bool> class I> ExprPtr int_binary(Type t, int n, ExprPtr a, ExprPtr b) {
    const Kind k = kind_of(t);
    internal_assert(!is_float_kind(k)) << "simulator: integer operation on " << to_string(t);
    if (k == Kind::Int)
        return binary(t, n, I<true>{wrap_shift(t.bits)}, std::move(a), std::move(b));
    return binary(t, n, I<false>{wrap_shift(t.bits)}, std::move(a), std::move(b));
}

template <template <bool> class I> ExprPtr int_unary(Type t, int n, ExprPtr a) {
    const Kind k = kind_of(t);
    internal_assert(!is_float_kind(k)) << "simulator: integer operation on " << to_string(t);
    if (k == Kind::Int) return unary(t, n, I<true>{wrap_shift(t.bits)}, std::move(a));
    return unary(t, n, I<false>{wrap_shift(t.bits)}, std::move(a));
}

template <template <class> class Fl>
ExprPtr float_unary(Type operand, Type result, int n, ExprPtr a) {
    switch (kind_of(operand)) {
    case Kind::F16:
        return unary(result, n, Fl<F16>{}, std::move(a));
    case Kind::BF16:
        return unary(result, n, Fl<BF16>{}, std::move(a));
    case Kind::F32:
        return unary(result, n, Fl<F32>{}, std::move(a));
    case Kind::F64:
        return unary(result, n, Fl<F64>{}, std::move(a));
    default:
        break;
    }
    internal_error << "simulator: float operation on " << to_string(operand);
    return nullptr;
}

template <template <class> class Fl> ExprPtr float_binary(Type t, int n, ExprPtr a, ExprPtr b) {
    switch (kind_of(t)) {
    case Kind::F16:
        return binary(t, n, Fl<F16>{}, std::move(a), std::move(b));
    case Kind::BF16:
        return binary(t, n, Fl<BF16>{}, std::move(a), std::move(b));
    case Kind::F32:
        return binary(t, n, Fl<F32>{}, std::move(a), std::move(b));
    case Kind::F64:
        return binary(t, n, Fl<F64>{}, std::move(a), std::move(b));
    default:
        break;
    }
    internal_error << "simulator: float operation on " << to_string(t);
    return nullptr;
}

template <template <class> class Fl>
ExprPtr float_ternary(Type t, int n, ExprPtr a, ExprPtr b, ExprPtr c) {
    auto make = [&](auto f) -> ExprPtr {
        return std::make_unique<TernaryCode<decltype(f)>>(t, n, f, std::move(a), std::move(b),
                                                          std::move(c));
    };
    switch (kind_of(t)) {
    case Kind::F16:
        return make(Fl<F16>{});
    case Kind::BF16:
        return make(Fl<BF16>{});
    case Kind::F32:
        return make(Fl<F32>{});
    case Kind::F64:
        return make(Fl<F64>{});
    default:
        break;
    }
    internal_error << "simulator: float operation on " << to_string(t);
    return nullptr;
}

struct BoolNot {
    Word operator()(Word a) const { return word_u(a.u ^ 1u); }
};

// ---- What each node costs ----

// The class of instruction a node counts in (its flops: lowering::flops_per_lane).
OpClass arithmetic(Type t) {
    return t.is_float() || t.is_bfloat() ? OpClass::Float : OpClass::Integer;
}

template <class Node> Type operand_type(const Expr &e) {
    return e.as<Node>()->a.type();
}

OpClass intrinsic_class(const ir::Call *op) {
    if (lowering::flops_per_lane(op) > 0) return OpClass::Float; // math functions, fma
    const Type t = op->args.empty() ? op->type : op->args[0].type();
    switch (op->intrinsic) {
    case Intrinsic::abs:
    case Intrinsic::floor:
    case Intrinsic::ceil:
    case Intrinsic::round:
    case Intrinsic::trunc:
    case Intrinsic::is_nan:
    case Intrinsic::is_inf:
        return arithmetic(t);
    case Intrinsic::bitwise_and:
    case Intrinsic::bitwise_or:
    case Intrinsic::bitwise_xor:
    case Intrinsic::bitwise_not:
    case Intrinsic::shift_left:
    case Intrinsic::shift_right:
        return OpClass::Integer;
    default:
        break;
    }
    return OpClass::None;
}

OpClass class_of(const Expr &e) {
    switch (e.node_type()) {
    case ir::IRNodeType::Add:
    case ir::IRNodeType::Sub:
    case ir::IRNodeType::Mul:
    case ir::IRNodeType::Div:
    case ir::IRNodeType::Mod:
    case ir::IRNodeType::Min:
    case ir::IRNodeType::Max:
        return arithmetic(e.type());
    case ir::IRNodeType::EQ:
        return arithmetic(operand_type<ir::EQ>(e));
    case ir::IRNodeType::NE:
        return arithmetic(operand_type<ir::NE>(e));
    case ir::IRNodeType::LT:
        return arithmetic(operand_type<ir::LT>(e));
    case ir::IRNodeType::LE:
        return arithmetic(operand_type<ir::LE>(e));
    case ir::IRNodeType::GT:
        return arithmetic(operand_type<ir::GT>(e));
    case ir::IRNodeType::GE:
        return arithmetic(operand_type<ir::GE>(e));
    case ir::IRNodeType::And:
    case ir::IRNodeType::Or:
    case ir::IRNodeType::Not:
        return OpClass::Integer;
    case ir::IRNodeType::Cast:
    case ir::IRNodeType::Reinterpret:
    case ir::IRNodeType::Select:
    case ir::IRNodeType::Ramp:
    case ir::IRNodeType::Broadcast:
        return OpClass::Other;
    case ir::IRNodeType::Call:
        return intrinsic_class(e.as<ir::Call>());
    default:
        break;
    }
    return OpClass::None;
}

// ---- The compiler from IR to nodes ----

class Compiler {
public:
    // Whether a LetStmt binds the variable of a block or thread loop (lowering turned those
    // loops into lets of the block and thread index).
    bool is_gpu_loop(const std::string &name) const {
        const std::vector<std::string> &v = m.kernel.loop_vars;
        return std::find(v.begin(), v.end(), name) != v.end();
    }

    Compiler(Machine &m, const std::vector<LaunchArgument> &args) : m(m), n(m.n) {
        const lowering::LoweredKernel &k = m.kernel;
        for (size_t i = 0; i < k.args.size(); i++) {
            const lowering::KernelArgument &arg = k.args[i];
            const LaunchArgument &value = args[i];
            if (arg.is_buffer) {
                internal_assert(value.data || value.bytes == 0)
                    << "simulator: buffer " << arg.name << " of kernel " << k.name
                    << " has no memory";
                internal_assert(value.bytes >= 0) << "simulator: buffer " << arg.name << " size";
                auto s = std::make_unique<Storage>();
                s->place = Storage::Global;
                s->name = arg.name;
                s->base = static_cast<uint8_t *>(value.data);
                s->bytes = value.bytes;
                buffers[arg.name] = s.get();
                m.storages.push_back(std::move(s));
            } else {
                scalars[arg.name] = scalar_value(arg.type, value.bits);
            }
        }
        shared.place = Storage::Shared;
        shared.name = lowering::kSharedMemoryName;
        shared.base = m.shared.data();
        shared.bytes = int64_t(m.shared.size());
        // Outside every producer, the kernel computes its outermost Func.
        if (!k.funcs.empty()) where.func = k.funcs.front();
    }

    int slot_count() const { return slots; }

    // The shadow's granule: the smallest element any shared access uses, at most a word.
    int shared_granule() const { return granule; }

    // Compiles an expression and gives its node its cost.
    ExprPtr expr(const Expr &e) {
        ExprPtr node = build(e);
        const ir::Call *call = e.as<ir::Call>();
        if (call && call->is_intrinsic(Intrinsic::likely)) return node; // its argument's node
        node->set_cost(class_of(e), lowering::flops_per_lane(e));
        return node;
    }

    StmtPtr stmt(const Stmt &s) {
        if (!s.defined()) return make_nop_code();
        switch (s.node_type()) {
        case ir::IRNodeType::LetStmt: {
            const ir::LetStmt *op = s.as<ir::LetStmt>();
            ExprPtr value = expr(op->value);
            int slot = slots++;
            ir::ScopedBinding<Binding> bind(vars, op->name, {slot, op->value.type()});
            const Where outer = where;
            if (is_gpu_loop(op->name)) where.enter_loop(op->name, slot);
            StmtPtr body = stmt(op->body);
            where = outer;
            return make_let_stmt_code(slot, std::move(value), std::move(body));
        }
        case ir::IRNodeType::AssertStmt: {
            const ir::AssertStmt *op = s.as<ir::AssertStmt>();
            AssertMessage message;
            const ir::Call *m = op->message.as<ir::Call>();
            if (m && m->is_intrinsic(ir::Intrinsic::runtime_error) && m->args.size() >= 2) {
                const auto kind = ir::as_const_int(m->args[0]);
                const ir::StringImm *name = m->args[1].as<ir::StringImm>();
                if (kind && name) {
                    message.kind = int32_t(*kind);
                    message.name = name->value;
                    for (size_t i = 2; i < m->args.size(); i++)
                        message.details.push_back(expr(m->args[i]));
                }
            }
            return make_assert_code(expr(op->condition), op->condition, std::move(message));
        }
        case ir::IRNodeType::ProducerConsumer: {
            const ir::ProducerConsumer *op = s.as<ir::ProducerConsumer>();
            const Where outer = where;
            if (op->is_producer) where.func = op->name;
            StmtPtr body = stmt(op->body);
            where = outer;
            return body;
        }
        case ir::IRNodeType::For:
            return for_loop(s.as<ir::For>());
        case ir::IRNodeType::Store: {
            const ir::Store *op = s.as<ir::Store>();
            if (const ir::Call *c = op->value.as<ir::Call>();
                c && c->is_intrinsic(Intrinsic::atomic_update)) {
                auto code = ir::as_const_int(c->args[0]);
                internal_assert(code) << "atomic_update without a constant operation";
                ExprPtr x = expr(c->args[1]), index = expr(op->index);
                AccessShape load = shape(op->name, op->value.type(), Site::Load);
                AccessShape store = shape(op->name, op->value.type(), Site::Store);
                return make_atomic_store_code(load, store, ir::AtomicOp(*code), std::move(x),
                                              std::move(index));
            }
            // The operands first: their loads come before the store in the profile.
            ExprPtr value = expr(op->value), index = expr(op->index);
            ExprPtr pred = is_true(op->predicate) ? nullptr : expr(op->predicate);
            AccessShape target = shape(op->name, op->value.type(), Site::Store);
            // A read-modify-write of device memory (the value reads the element it
            // replaces): checked for other threads doing the same to the same element.
            bool rmw = false;
            if (target.storage->place == Storage::Global && op->value.type().is_scalar()) {
                ir::visit_each_distinct<ir::Load>(op->value, [&](const ir::Load *l) {
                    rmw = rmw || (l->name == op->name && ir::equal(l->index, op->index));
                });
            }
            if (rmw) {
                return make_read_modify_write_code(target, std::move(value), std::move(index),
                                                   std::move(pred));
            }
            return make_store_code(target, std::move(value), std::move(index), std::move(pred));
        }
        case ir::IRNodeType::Allocate:
            return allocate(s.as<ir::Allocate>());
        case ir::IRNodeType::Free:
            return make_nop_code();
        case ir::IRNodeType::Block: {
            std::vector<StmtPtr> list;
            Stmt rest = s;
            while (const ir::Block *b = rest.as<ir::Block>()) {
                list.push_back(stmt(b->first));
                rest = b->rest;
            }
            list.push_back(stmt(rest));
            return make_block_code(std::move(list));
        }
        case ir::IRNodeType::IfThenElse: {
            const ir::IfThenElse *op = s.as<ir::IfThenElse>();
            internal_assert(op->condition.type() == ir::Bool())
                << "simulator: if condition of type " << to_string(op->condition.type());
            ExprPtr cond = expr(op->condition);
            StmtPtr then_case = stmt(op->then_case);
            StmtPtr else_case = op->else_case.defined() ? stmt(op->else_case) : nullptr;
            return make_if_code(n, std::move(cond), std::move(then_case), std::move(else_case));
        }
        case ir::IRNodeType::Evaluate: {
            const ir::Evaluate *op = s.as<ir::Evaluate>();
            const ir::Call *call = op->value.as<ir::Call>();
            if (call && call->intrinsic == Intrinsic::gpu_barrier) {
                return make_barrier_code(site(Site::Barrier, nullptr));
            }
            if (call && call->intrinsic == Intrinsic::gpu_cp_async) {
                const lowering::AsyncCopyCall c = lowering::async_copy_parts(call);
                internal_assert(c.dst == lowering::kSharedMemoryName)
                    << "simulator: cp.async into " << c.dst << ", not shared memory";
                AccessShape src = shape(c.src, c.type, Site::Load);
                AccessShape dst = shape(c.dst, c.type, Site::Store);
                ExprPtr dst_index = expr(c.dst_index), src_index = expr(c.src_index),
                        valid = expr(c.valid);
                return make_async_copy_code(n, src, dst, std::move(dst_index), std::move(src_index),
                                            std::move(valid));
            }
            if (call && call->intrinsic == Intrinsic::gpu_cp_async_commit) {
                return make_async_commit_code();
            }
            if (call && call->intrinsic == Intrinsic::gpu_wgmma_commit) {
                return make_wgmma_commit_code();
            }
            if (call && call->intrinsic == Intrinsic::gpu_cp_async_wait) {
                return make_async_wait_code(lowering::async_wait_groups(call),
                                            site(Site::Barrier, nullptr));
            }
            return make_evaluate_code(expr(op->value));
        }
        default:
            break;
        }
        internal_error << "simulator: kernel " << m.kernel.name << " contains a statement the "
                       << "simulator cannot run:\n"
                       << s;
        return nullptr;
    }

private:
    ExprPtr build(const Expr &e) {
        internal_assert(e.defined()) << "simulator: undefined expression";
        const Type t = e.type();
        switch (e.node_type()) {
        case ir::IRNodeType::IntImm:
            return constant(t, wrap_to(uint64_t(e.as<ir::IntImm>()->value), kind_of(t), t.bits));
        case ir::IRNodeType::UIntImm:
            return constant(t, wrap_to(e.as<ir::UIntImm>()->value, kind_of(t), t.bits));
        case ir::IRNodeType::FloatImm: {
            const double v = e.as<ir::FloatImm>()->value;
            const Kind k = kind_of(t);
            return constant(t, k == Kind::F64 ? word_d(v) : word_f(narrow(float(v), k)));
        }
        case ir::IRNodeType::Cast: {
            const ir::Cast *op = e.as<ir::Cast>();
            const Type from = op->value.type();
            Conversion c{kind_of(from), kind_of(t), from.bits, t.bits};
            return unary(t, n, c, expr(op->value));
        }
        case ir::IRNodeType::Reinterpret:
            return make_reinterpret_code(t, n, expr(e.as<ir::Reinterpret>()->value));
        case ir::IRNodeType::Variable:
            return variable(e.as<ir::Variable>());
        case ir::IRNodeType::Add:
            return arith<ir::Add, IAdd, FAdd>(e);
        case ir::IRNodeType::Sub:
            return arith<ir::Sub, ISub, FSub>(e);
        case ir::IRNodeType::Mul:
            return arith<ir::Mul, IMul, FMul>(e);
        case ir::IRNodeType::Div:
            return arith<ir::Div, IDiv, FDiv>(e);
        case ir::IRNodeType::Mod:
            return arith<ir::Mod, IMod, FMod>(e);
        case ir::IRNodeType::Min:
            return arith<ir::Min, IMin, FMin>(e);
        case ir::IRNodeType::Max:
            return arith<ir::Max, IMax, FMax>(e);
        case ir::IRNodeType::EQ:
            return arith<ir::EQ, IEQ, FEQ>(e);
        case ir::IRNodeType::NE:
            return arith<ir::NE, INE, FNE>(e);
        case ir::IRNodeType::LT:
            return arith<ir::LT, ILT, FLT>(e);
        case ir::IRNodeType::LE:
            return arith<ir::LE, ILE, FLE>(e);
        case ir::IRNodeType::GT:
            return arith<ir::GT, IGT, FGT>(e);
        case ir::IRNodeType::GE:
            return arith<ir::GE, IGE, FGE>(e);
        case ir::IRNodeType::And: {
            const ir::And *op = e.as<ir::And>();
            ExprPtr a = expr(op->a), b = expr(op->b);
            return int_binary<IAnd>(t, n, std::move(a), std::move(b));
        }
        case ir::IRNodeType::Or: {
            const ir::Or *op = e.as<ir::Or>();
            ExprPtr a = expr(op->a), b = expr(op->b);
            return int_binary<IOr>(t, n, std::move(a), std::move(b));
        }
        case ir::IRNodeType::Not:
            return unary(t, n, BoolNot{}, expr(e.as<ir::Not>()->a));
        case ir::IRNodeType::Select: {
            const ir::Select *op = e.as<ir::Select>();
            ExprPtr c = expr(op->condition), a = expr(op->true_value), b = expr(op->false_value);
            return make_select_code(t, n, std::move(c), std::move(a), std::move(b));
        }
        case ir::IRNodeType::Load: {
            const ir::Load *op = e.as<ir::Load>();
            ExprPtr index = expr(op->index);
            ExprPtr pred = is_true(op->predicate) ? nullptr : expr(op->predicate);
            return make_load_code(t, n, shape(op->name, t, Site::Load), std::move(index),
                                  std::move(pred));
        }
        case ir::IRNodeType::Ramp: {
            const ir::Ramp *op = e.as<ir::Ramp>();
            internal_assert(t.is_int_or_uint()) << "simulator: ramp of " << to_string(t);
            ExprPtr base = expr(op->base), stride = expr(op->stride);
            return make_ramp_code(t, n, std::move(base), std::move(stride));
        }
        case ir::IRNodeType::Broadcast:
            return make_broadcast_code(t, n, expr(e.as<ir::Broadcast>()->value));
        case ir::IRNodeType::Call:
            return call(e.as<ir::Call>());
        case ir::IRNodeType::Let: {
            const ir::Let *op = e.as<ir::Let>();
            ExprPtr value = expr(op->value);
            int slot = slots++;
            ir::ScopedBinding<Binding> bind(vars, op->name, {slot, op->value.type()});
            return make_let_code(t, slot, std::move(value), expr(op->body));
        }
        default:
            break;
        }
        internal_error << "simulator: kernel " << m.kernel.name << " contains an expression the "
                       << "simulator cannot evaluate: " << e;
        return nullptr;
    }

    struct Binding {
        int slot;
        Type type;
    };

    // Where the node being compiled stands: the Func being computed and the innermost loop.
    struct Where {
        std::string func, loop;
        int loop_slot = -1;

        void enter_loop(const std::string &name, int slot) {
            loop = name;
            loop_slot = slot;
        }
    };

    Site *site(Site::Op op, Storage *storage) {
        auto s = std::make_unique<Site>();
        s->op = op;
        s->storage = storage;
        s->func = where.func;
        s->loop = where.loop;
        s->loop_slot = where.loop_slot;
        const std::vector<lowering::SharedAllocation> &shared_funcs = m.kernel.shared;
        for (size_t i = 0; i < shared_funcs.size(); i++) {
            if (shared_funcs[i].func == where.func) s->func_shared = int(i);
        }
        if (storage && storage->place != Storage::Shared) s->memory = storage->name;
        m.sites.push_back(std::move(s));
        return m.sites.back().get();
    }

    static Word scalar_value(Type t, uint64_t bits) {
        const Kind k = kind_of(t);
        uint8_t bytes[8];
        std::memcpy(bytes, &bits, 8);
        if (k == Kind::Int || k == Kind::UInt) return wrap_to(bits, k, t.bits);
        return read_element(bytes, k, t.bits);
    }

    ExprPtr constant(Type t, Word v) { return make_const_code(t, v); }

    template <class Node, template <bool> class I, template <class> class Fl>
    ExprPtr arith(const Expr &e) {
        const Node *op = e.as<Node>();
        ExprPtr a = expr(op->a), b = expr(op->b);
        return numeric_binary<I, Fl>(op->a.type(), e.type(), n, std::move(a), std::move(b));
    }

    ExprPtr variable(const ir::Variable *op) {
        if (const Binding *b = vars.find(op->name)) {
            internal_assert(b->type == op->type)
                << "simulator: variable " << op->name << " used as " << to_string(op->type)
                << " but bound as " << to_string(b->type);
            return make_var_code(op->type, n, b->slot);
        }
        auto it = scalars.find(op->name);
        internal_assert(it != scalars.end())
            << "simulator: kernel " << m.kernel.name << " uses the unknown variable " << op->name;
        internal_assert(op->type.is_scalar()) << "simulator: vector argument " << op->name;
        return constant(op->type, it->second);
    }

    AccessShape shape(const std::string &name, Type t, Site::Op op) {
        AccessShape s;
        if (Storage *const *alloc = allocations.find(name)) {
            s.storage = *alloc;
        } else if (name == lowering::kSharedMemoryName) {
            s.storage = &shared;
        } else {
            auto it = buffers.find(name);
            internal_assert(it != buffers.end())
                << "simulator: kernel " << m.kernel.name << " accesses " << name
                << ", which is neither an argument, shared memory nor an allocation";
            s.storage = it->second;
        }
        s.kind = kind_of(t);
        s.bits = t.bits;
        s.elem_bytes = t.bytes();
        s.lanes = t.lanes;
        s.site = site(op, s.storage);
        if (s.storage->place == Storage::Shared) granule = std::min(granule, s.elem_bytes);
        return s;
    }

    StmtPtr for_loop(const ir::For *op) {
        internal_assert(!ir::is_gpu_loop(op->for_type))
            << "simulator: kernel " << m.kernel.name << " still has the " << to_string(op->for_type)
            << " loop " << op->name << "; lowering maps those onto the launch";
        ExprPtr lo = expr(op->min), extent = expr(op->extent);
        int slot = slots++;
        ir::ScopedBinding<Binding> bind(vars, op->name, {slot, op->min.type()});
        const Where outer = where;
        where.enter_loop(op->name, slot);
        StmtPtr body = stmt(op->body);
        where = outer;
        return make_for_code(n, slot, op->min.type(), std::move(lo), std::move(extent),
                             std::move(body));
    }

    StmtPtr allocate(const ir::Allocate *op) {
        internal_assert(op->memory_type == ir::MemoryType::Register ||
                        op->memory_type == ir::MemoryType::Stack)
            << "simulator: allocation " << op->name << " in kernel " << m.kernel.name << " is in "
            << to_string(op->memory_type) << " memory; kernels allocate registers or stack";
        int64_t count = 1;
        for (const Expr &e : op->extents) {
            std::optional<int64_t> v = ir::as_const_int(e);
            internal_assert(v && *v >= 0)
                << "simulator: allocation " << op->name << " has the non-constant extent " << e;
            count *= *v;
            internal_assert(count <= (int64_t(1) << 24))
                << "simulator: allocation " << op->name << " is too large for a thread";
        }
        auto s = std::make_unique<Storage>();
        s->place = Storage::Private;
        s->name = op->name;
        s->bytes = count * op->type.bytes();
        s->owned.resize(size_t(s->bytes) * n);
        s->base = s->owned.data();
        Storage *storage = s.get();
        m.storages.push_back(std::move(s));
        ir::ScopedBinding<Storage *> bind(allocations, op->name, storage);
        return make_allocate_code(storage, stmt(op->body));
    }

    ExprPtr call(const ir::Call *op) {
        internal_assert(op->call_type == ir::Call::Intrinsic ||
                        op->call_type == ir::Call::PureIntrinsic)
            << "simulator: call to " << op->name << " in kernel " << m.kernel.name
            << " survived storage flattening";
        const Type t = op->type;
        // Arguments compile in order on first use, so that loads keep their program order.
        std::vector<ExprPtr> args;
        auto arg = [&](size_t i) {
            while (args.size() <= i)
                args.push_back(expr(op->args[args.size()]));
            return std::move(args[i]);
        };
        switch (op->intrinsic) {
        case Intrinsic::gpu_thread_index:
        case Intrinsic::gpu_block_index: {
            std::optional<int64_t> d = ir::as_const_int(op->args.at(0));
            internal_assert(d && *d >= 0 && *d < 3) << "simulator: " << op->name << " dimension";
            if (op->intrinsic == Intrinsic::gpu_block_index) {
                return make_block_index_code(int(*d));
            }
            if (m.threads[*d] == 1) return constant(ir::Int(32), word_u(0));
            return make_thread_index_code(n, int(*d));
        }
        case Intrinsic::gpu_lane_index:
            return make_lane_index_code(n);
        case Intrinsic::gpu_shuffle_xor: {
            std::optional<int64_t> offset = ir::as_const_int(op->args.at(1));
            internal_assert(offset && *offset > 0 && *offset < 32)
                << "simulator: shuffle by a lane offset that is not a constant from 1 to 31";
            ExprPtr value = arg(0), mask = arg(2);
            ExprPtr code = make_shuffle_xor_code(t, n, std::move(value), int(*offset),
                                                 std::move(mask), site(Site::Shuffle, nullptr));
            code->set_cost(OpClass::Other, 0);
            return code;
        }
        case Intrinsic::gpu_mma: {
            std::optional<lowering::MMAShape> shape =
                lowering::mma_shape(op->args[0].type(), op->args[1].type(), op->args[2].type());
            internal_assert(shape) << "simulator: gpu_mma of unsupported operand types";
            ExprPtr a = arg(0), b = arg(1), c = arg(2);
            return make_mma_code(*shape, n, std::move(a), std::move(b), std::move(c),
                                 site(Site::Shuffle, nullptr));
        }
        case Intrinsic::gpu_wgmma: {
            const lowering::WgmmaCall call = lowering::wgmma_parts(op);
            ExprPtr a = expr(call.a.byte), b = expr(call.b.byte), d = expr(call.d);
            AccessShape a_shape = shape(lowering::kSharedMemoryName, call.element, Site::Load),
                        b_shape = shape(lowering::kSharedMemoryName, call.element, Site::Load);
            a_shape.site->wgmma_operand = b_shape.site->wgmma_operand = true;
            return make_wgmma_code(call, n, a_shape, b_shape, std::move(a), std::move(b),
                                   std::move(d), site(Site::Shuffle, nullptr));
        }
        // D is computed at once (above): a fence needs nothing here. A wait retires the
        // groups whose operands stay pending.
        case Intrinsic::gpu_wgmma_fence:
            return arg(0);
        case Intrinsic::gpu_wgmma_wait:
            return make_wgmma_wait_code(t, n, lowering::wgmma_wait_pending(op), arg(1),
                                        site(Site::Barrier, nullptr));
        case Intrinsic::gpu_async_proxy_fence:
            return constant(ir::Int(32), word_u(0));
        case Intrinsic::gpu_ldmatrix: {
            const lowering::LdmatrixCall call = lowering::ldmatrix_parts(op);
            internal_assert(call.buffer == lowering::kSharedMemoryName)
                << "simulator: ldmatrix from " << call.buffer << ", not shared memory";
            ExprPtr index = expr(call.index);
            return make_ldmatrix_code(t, n, shape(call.buffer, t.element_of(), Site::Load),
                                      std::move(index), call.matrices, call.transpose);
        }
        case Intrinsic::make_vector: {
            std::vector<ExprPtr> scalars;
            for (size_t i = 0; i < op->args.size(); i++)
                scalars.push_back(arg(i));
            return make_vector_code(t, n, std::move(scalars));
        }
        case Intrinsic::extract_element: {
            std::optional<int64_t> lane = ir::as_const_int(op->args.at(1));
            internal_assert(lane) << "simulator: extract_element of a lane that is not a constant";
            return make_extract_element_code(t, n, arg(0), int(*lane));
        }
        case Intrinsic::likely:
            return arg(0);
        case Intrinsic::alignment_hint: {
            auto elements = ir::as_const_int(op->args.at(1));
            internal_assert(elements) << "alignment_hint without a constant";
            if (*elements <= 1) return arg(0);
            return make_alignment_check_code(n, arg(0), *elements);
        }
        case Intrinsic::abs:
            if (t.is_float()) return float_unary<FAbs>(t, t, n, arg(0));
            return int_unary<IAbs>(t, n, arg(0));
        case Intrinsic::bitwise_and:
            return int_binary<IAnd>(t, n, arg(0), arg(1));
        case Intrinsic::bitwise_or:
            return int_binary<IOr>(t, n, arg(0), arg(1));
        case Intrinsic::bitwise_xor:
            return int_binary<IXor>(t, n, arg(0), arg(1));
        case Intrinsic::bitwise_not:
            return int_unary<INot>(t, n, arg(0));
        case Intrinsic::shift_left:
            return int_binary<IShl>(t, n, arg(0), arg(1));
        case Intrinsic::shift_right:
            return int_binary<IShr>(t, n, arg(0), arg(1));
        case Intrinsic::sqrt:
            return float_unary<FSqrt>(t, t, n, arg(0));
        case Intrinsic::rsqrt:
            return float_unary<FRsqrt>(t, t, n, arg(0));
        case Intrinsic::exp:
            return float_unary<FExp>(t, t, n, arg(0));
        case Intrinsic::log:
            return float_unary<FLog>(t, t, n, arg(0));
        case Intrinsic::tanh:
            return float_unary<FTanh>(t, t, n, arg(0));
        case Intrinsic::erf:
            return float_unary<FErf>(t, t, n, arg(0));
        case Intrinsic::sin:
            return float_unary<FSin>(t, t, n, arg(0));
        case Intrinsic::cos:
            return float_unary<FCos>(t, t, n, arg(0));
        case Intrinsic::floor:
            return float_unary<FFloor>(t, t, n, arg(0));
        case Intrinsic::ceil:
            return float_unary<FCeil>(t, t, n, arg(0));
        case Intrinsic::round:
            return float_unary<FRound>(t, t, n, arg(0));
        case Intrinsic::trunc:
            return float_unary<FTrunc>(t, t, n, arg(0));
        case Intrinsic::pow:
            return float_binary<FPow>(t, n, arg(0), arg(1));
        case Intrinsic::fma:
            return float_ternary<FFma>(t, n, arg(0), arg(1), arg(2));
        case Intrinsic::is_nan:
            return float_unary<FIsNan>(op->args[0].type(), t, n, arg(0));
        case Intrinsic::is_inf:
            return float_unary<FIsInf>(op->args[0].type(), t, n, arg(0));
        default:
            break;
        }
        internal_error << "simulator: kernel " << m.kernel.name << " calls " << op->name
                       << ", which has no meaning inside a kernel"
                       << (op->intrinsic == Intrinsic::gpu_barrier ? " except as a statement" : "");
        return nullptr;
    }

    Machine &m;
    const int n;
    int slots = 0;
    ir::Scope<Binding> vars;
    ir::Scope<Storage *> allocations;
    std::map<std::string, Word> scalars;
    std::map<std::string, Storage *> buffers;
    Storage &shared = m.shared_storage;
    Where where;
    int granule = 4;
};

} // namespace

LaunchCode compile(Machine &m, const std::vector<LaunchArgument> &args) {
    Compiler compiler(m, args);
    LaunchCode code;
    code.body = compiler.stmt(m.kernel.body);
    code.slots = compiler.slot_count();
    code.shared_granule = compiler.shared_granule();
    return code;
}

} // namespace sim
} // namespace backends
} // namespace aicf
