#include "lowering/InjectGPUBarriers.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// A memory access, for deciding where barriers go: the allocation or buffer, and, when the
// element each thread touches is a known one-to-one function of the thread index (in terms
// of the thread index and values common to the block), that function.
struct Access {
    std::string storage;
    Expr index; // undefined when not known to be one-to-one in the thread index
    // The same over the threads that make the access (`threads` along each dimension, where a
    // thread loop is shorter than the block: the others skip it); undefined where that is
    // the whole block, or where it is not known to be one-to-one there.
    Expr index_in_loop;
    std::array<int64_t, 3> threads{};
    // A write of a pure definition to a buffer: it gives each point the one value the Func
    // has there, so two such writes never need ordering (recomputed points agree).
    bool pure_write = false;
    // The read or the write of an atomic update (its AtomicOp; -1 for others). Atomic updates
    // with one operation may run in any order between threads: no barrier between them.
    int atomic_op = -1;
    bool same_element_in_each_thread(const Access &o) const {
        if (index.defined() && o.index.defined() && equal(index, o.index)) return true;
        // Both made by the same threads, each touching an element of its own.
        return index_in_loop.defined() && o.index_in_loop.defined() && threads == o.threads &&
               equal(index_in_loop, o.index_in_loop);
    }
    bool unordered(const Access &o) const {
        return same_element_in_each_thread(o) || (atomic_op >= 0 && atomic_op == o.atomic_op);
    }
};

struct Accesses {
    std::vector<Access> reads, writes;
    void add(const Accesses &o) {
        reads.insert(reads.end(), o.reads.begin(), o.reads.end());
        writes.insert(writes.end(), o.writes.begin(), o.writes.end());
    }
    // Whether running `later` after this without a barrier could let one thread see memory
    // in another's unfinished state: a write against an access of the other side, unless
    // both touch the same element in each thread.
    bool conflicts_with(const Accesses &later) const {
        auto any = [](const std::vector<Access> &a, const std::vector<Access> &b) {
            for (const Access &x : a)
                for (const Access &y : b)
                    if (x.storage == y.storage && !x.unordered(y)) return true;
            return false;
        };
        auto any_unordered_writes = [](const std::vector<Access> &a, const std::vector<Access> &b) {
            for (const Access &x : a)
                for (const Access &y : b)
                    if (x.storage == y.storage && !x.unordered(y) &&
                        !(x.pure_write && y.pure_write))
                        return true;
            return false;
        };
        return any(writes, later.reads) || any_unordered_writes(writes, later.writes) ||
               any(reads, later.writes);
    }
};

// Replaces gpu_thread_index(d) by given values.
class ReplaceThreadIndex : public IRMutator {
public:
    explicit ReplaceThreadIndex(std::array<int64_t, 3> v) : values(v) {}

private:
    std::array<int64_t, 3> values;
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (!op->is_intrinsic(Intrinsic::gpu_thread_index)) return IRMutator::visit(op);
        auto d = as_const_int(op->args[0]);
        internal_assert(d && *d >= 0 && *d < 3) << "gpu_thread_index of a bad dimension";
        return make_const(op->type, values[size_t(*d)]);
    }
};

// The value of an integer expression of the thread indices and one other variable, or none
// when it holds anything else.
std::optional<int64_t> evaluate(const Expr &e, const std::array<int64_t, 3> &thread,
                                const std::string &var, int64_t value) {
    if (auto c = as_const_int(e)) return *c;
    if (const Variable *v = e.as<Variable>()) {
        if (v->name == var) return value;
        return std::nullopt;
    }
    if (const Call *c = e.as<Call>()) {
        // Bit operations: a swizzled layout's index (swizzle_storage).
        if ((c->is_intrinsic(Intrinsic::bitwise_xor) || c->is_intrinsic(Intrinsic::bitwise_and) ||
             c->is_intrinsic(Intrinsic::bitwise_or)) &&
            c->args.size() == 2) {
            auto x = evaluate(c->args[0], thread, var, value);
            auto y = evaluate(c->args[1], thread, var, value);
            if (!x || !y) return std::nullopt;
            if (c->is_intrinsic(Intrinsic::bitwise_xor)) return *x ^ *y;
            if (c->is_intrinsic(Intrinsic::bitwise_and)) return *x & *y;
            return *x | *y;
        }
        if (!c->is_intrinsic(Intrinsic::gpu_thread_index)) return std::nullopt;
        auto d = as_const_int(c->args[0]);
        if (!d || *d < 0 || *d > 2) return std::nullopt;
        return thread[size_t(*d)];
    }
    if (const Cast *c = e.as<Cast>()) {
        if (!c->type.is_int() || c->type.bits < 32 || !c->value.type().is_int_or_uint())
            return std::nullopt;
        return evaluate(c->value, thread, var, value);
    }
    auto binary = [&](const Expr &a, const Expr &b, auto f) -> std::optional<int64_t> {
        auto x = evaluate(a, thread, var, value), y = evaluate(b, thread, var, value);
        if (!x || !y) return std::nullopt;
        return f(*x, *y);
    };
    if (const Add *o = e.as<Add>()) return binary(o->a, o->b, std::plus<int64_t>());
    if (const Sub *o = e.as<Sub>()) return binary(o->a, o->b, std::minus<int64_t>());
    if (const Mul *o = e.as<Mul>()) return binary(o->a, o->b, std::multiplies<int64_t>());
    if (const Min *o = e.as<Min>())
        return binary(o->a, o->b, [](int64_t x, int64_t y) { return std::min(x, y); });
    if (const Max *o = e.as<Max>())
        return binary(o->a, o->b, [](int64_t x, int64_t y) { return std::max(x, y); });
    if (const Div *o = e.as<Div>()) {
        auto d = as_const_int(o->b);
        if (!d || *d == 0) return std::nullopt;
        return binary(o->a, o->b, div_euclid);
    }
    if (const Mod *o = e.as<Mod>()) {
        auto d = as_const_int(o->b);
        if (!d || *d == 0) return std::nullopt;
        return binary(o->a, o->b, mod_euclid);
    }
    return std::nullopt;
}

class InjectBarriers {
public:
    explicit InjectBarriers(const LoweredKernel &k) : kernel(k) {
        std::set<std::string> allocated;
        visit_each<Allocate>(k.body, [&](const Allocate *op) {
            allocated.insert(op->name);
            if (op->memory_type == MemoryType::GPUShared) shared.insert(op->name);
        });
        visit_each<Store>(k.body, [&](const Store *op) {
            if (!allocated.count(op->name)) written_globals.insert(op->name);
        });
    }

    // Barriers go between the parts of the body that run as a whole: thread loop nests,
    // and statements outside thread loops. Control flow outside thread loops depends only
    // on block-level values, so every thread reaches a barrier placed there.
    Stmt insert(const Stmt &s, Accesses &pending) {
        if (!s.defined()) return s;
        const For *loop = s.as<For>();
        if (!contains_loop_type(s, ForType::GPUThread) ||
            (loop && loop->for_type == ForType::GPUThread))
            return with_barrier(order_after(accesses_of(s), pending), s);
        if (const Block *b = s.as<Block>()) {
            Stmt first = insert(b->first, pending);
            Stmt rest = insert(b->rest, pending);
            return Block::make(first, rest);
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            bool wait = order_after(accesses_of(l->value), pending);
            context.emplace_back(l->name, l->value);
            Stmt body = insert(l->body, pending);
            context.pop_back();
            return with_barrier(wait, LetStmt::make(l->name, l->value, body));
        }
        if (const Allocate *a = s.as<Allocate>()) {
            return Allocate::make(a->name, a->type, a->memory_type, a->extents,
                                  insert(a->body, pending));
        }
        if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
            return ProducerConsumer::make(pc->name, pc->is_producer, insert(pc->body, pending));
        }
        if (const IfThenElse *i = s.as<IfThenElse>()) {
            bool wait = order_after(accesses_of(i->condition), pending);
            Accesses other = pending;
            Stmt then_case = insert(i->then_case, pending);
            Stmt else_case = insert(i->else_case, other);
            pending.add(other);
            return with_barrier(wait, IfThenElse::make(i->condition, then_case, else_case));
        }
        internal_assert(loop) << "inject_gpu_barriers: unexpected statement around thread loops";
        // An iteration follows the previous one, so the first parts of the body must also
        // be ordered after its last parts: start from everything the body may have done.
        Accesses bounds =
            accesses_of(Block::make(Evaluate::make(loop->min), Evaluate::make(loop->extent)));
        bool wait = order_after(bounds, pending);
        // A body whose iterations never conflict with one another but that must wait for what
        // ran before the loop waits once, before it: inside, the barrier would run at every
        // iteration though only the first needs it.
        const Accesses iteration = accesses_of(loop->body), others = accesses_of(loop->body, loop);
        if (pending.conflicts_with(iteration) && !others.conflicts_with(iteration)) {
            wait = true;
            pending = bounds;
        }
        Accesses entry = pending;
        Accesses inside = pending;
        inside.add(others);
        Stmt body = insert(loop->body, inside);
        pending = inside;
        pending.add(entry); // the loop may run no iterations
        return with_barrier(wait, For::make(loop->name, loop->min, loop->extent, loop->for_type,
                                            loop->gpu_dim, body));
    }

private:
    const LoweredKernel &kernel;
    std::set<std::string> shared, written_globals;
    std::vector<std::pair<std::string, Expr>> context; // block-level lets around the current part

    // Whether e (an element index) is a one-to-one function of the thread index over the
    // block: a linear function of the thread indices whose coefficients separate them.
    // With `loop`, one-to-one in the thread index and the loop's iteration together: then
    // two iterations never touch one element, whichever threads run them. `active`: how many
    // threads along each dimension make the access (those of a thread loop shorter than the
    // block; the others skip it).
    using Active = std::array<int64_t, 3>;
    bool one_to_one_in_threads(const Expr &index, const For *loop, const Active &active) const {
        // A dense vector of elements: its first element, and the span of the others.
        Expr e = index;
        int64_t reach = 0; // the largest offset the smaller terms can make
        if (const Ramp *r = index.as<Ramp>()) {
            auto stride = as_const_int(r->stride);
            if (!stride) return false;
            e = r->base;
            reach = std::abs(*stride) * (r->lanes - 1);
        }
        if (!e.type().is_scalar() || !e.type().is_int()) return false;
        auto at = [&](std::array<int64_t, 3> t, int64_t i) {
            Expr r = ReplaceThreadIndex(t).mutate(e);
            if (loop) r = substitute(loop->name, Add::make(loop->min, make_const(Int(32), i)), r);
            return simplify(r);
        };
        Expr at_zero = at({0, 0, 0}, 0);
        Expr linear = at_zero;
        std::vector<std::pair<int64_t, int64_t>> coefficients; // |c|, positions - 1
        for (int d = 0; d < 3; d++) {
            if (active[size_t(d)] <= 1) continue;
            std::array<int64_t, 3> unit = {0, 0, 0};
            unit[size_t(d)] = 1;
            auto c = as_const_int(simplify(Sub::make(at(unit, 0), at_zero)));
            if (!c || *c == 0) return false;
            coefficients.emplace_back(std::abs(*c), active[size_t(d)] - 1);
            linear =
                Add::make(linear, Mul::make(make_const(e.type(), *c), gpu_thread_index(GPUDim(d))));
        }
        if (loop) {
            auto c = as_const_int(simplify(Sub::make(at({0, 0, 0}, 1), at_zero)));
            auto extent = constant_upper_bound(loop->extent);
            if (!c || *c == 0 || !extent) return false;
            coefficients.emplace_back(std::abs(*c), *extent - 1);
            linear = Add::make(
                linear, Mul::make(make_const(e.type(), *c),
                                  Sub::make(Variable::make(Int(32), loop->name), loop->min)));
        }
        if (!is_const_zero(simplify(Sub::make(e, linear))))
            return one_to_one_by_count(e, reach, loop, active);
        std::sort(coefficients.begin(), coefficients.end());
        for (const auto &[c, positions] : coefficients) {
            if (c <= reach) return false;
            reach += c * positions;
        }
        return true;
    }

    // The same for an index that is not linear in the thread index (digits of it: t / 8 and
    // t % 8 of a fused loop), where what depends on the threads and the iteration is a
    // function of them alone: its value at every thread and iteration, which must all be
    // further apart than `reach`.
    bool one_to_one_by_count(const Expr &e, int64_t reach, const For *loop,
                             const Active &active) const {
        const std::string iteration = "__iteration";
        int64_t iterations = 1;
        Expr f = e;
        if (loop) {
            auto extent = constant_upper_bound(loop->extent);
            if (!extent) return false;
            iterations = std::max<int64_t>(*extent, 1);
            f = substitute(loop->name, Add::make(loop->min, Variable::make(Int(32), iteration)), e);
        }
        const int64_t threads = active[0] * active[1] * active[2];
        if (threads * iterations > (int64_t(1) << 16)) return false;
        Expr first = simplify(
            substitute(iteration, make_zero(Int(32)), ReplaceThreadIndex({0, 0, 0}).mutate(f)));
        Expr delta = simplify(Sub::make(f, first));
        std::vector<int64_t> values;
        values.reserve(size_t(threads * iterations));
        std::array<int64_t, 3> t{};
        for (int64_t i = 0; i < iterations; i++)
            for (t[2] = 0; t[2] < active[2]; t[2]++)
                for (t[1] = 0; t[1] < active[1]; t[1]++)
                    for (t[0] = 0; t[0] < active[0]; t[0]++) {
                        auto v = evaluate(delta, t, iteration, i);
                        if (!v) return false;
                        values.push_back(*v);
                    }
        std::sort(values.begin(), values.end());
        for (size_t k = 1; k < values.size(); k++)
            if (values[k] - values[k - 1] <= reach) return false;
        return true;
    }

    // The accesses of a part of the body, with each element index written in terms of the
    // thread index where the block-level lets (`context`) and the thread loops allow.
    // With `iterations`, the accesses of the body of that loop as seen from another
    // iteration: an index is kept only when it is one-to-one in the thread index and the
    // iteration together (no element is touched in two iterations).
    template <typename IRHandle>
    Accesses accesses_of(const IRHandle &ir, const For *iterations = nullptr) const {
        struct Walker : LetTracker {
            const InjectBarriers &ib;
            const For *iterations;
            Accesses acc;
            Active active; // threads that run the current statement, per dimension
            Walker(const InjectBarriers &b, const For *l) : ib(b), iterations(l) {
                lets = b.context;
                for (size_t d = 0; d < 3; d++)
                    active[d] = b.kernel.threads[d];
            }
            using LetTracker::visit;
            std::vector<std::string> loops; // the enclosing loops of Funcs' stages
            void visit(const For *op) override {
                const bool named = !parse_loop_name(op->name).func.empty();
                if (named) loops.push_back(op->name);
                visit_loop(op);
                if (named) loops.pop_back();
            }
            void visit_loop(const For *op) {
                if (op->for_type != ForType::GPUThread) {
                    IRVisitor::visit(op);
                    return;
                }
                op->min.accept(this);
                op->extent.accept(this);
                lets.emplace_back(op->name, Add::make(op->min, gpu_thread_index(op->gpu_dim)));
                // Threads past a shorter loop's end skip its body (fuse_gpu_thread_loops
                // guards it).
                const size_t d = size_t(op->gpu_dim);
                const int64_t outer = active[d];
                if (auto n = constant_upper_bound(op->extent)) active[d] = std::min(outer, *n);
                op->body.accept(this);
                active[d] = outer;
                lets.pop_back();
            }
            // The guards around the current statement, in terms of the thread index: a
            // thread makes an access only where they hold, so its index may assume them (a
            // clamp the guard keeps from binding, which would hide that the index is
            // one-to-one in the thread).
            std::vector<Expr> facts;
            void visit(const IfThenElse *op) override {
                op->condition.accept(this);
                const size_t outer = facts.size();
                for (const Expr &c : conjuncts(op->condition))
                    facts.push_back(simplify(expand(c)));
                op->then_case.accept(this);
                facts.resize(outer);
                if (op->else_case.defined()) op->else_case.accept(this);
            }
            bool access(const std::string &name, const Expr &index, Access &a) const {
                // Private storage, and global buffers no one in this kernel writes, need no
                // ordering.
                if (!ib.shared.count(name) && !ib.written_globals.count(name)) return false;
                a.storage = name;
                Expr e = simplify_under(simplify(expand(index)), facts);
                const Active block = {ib.kernel.threads[0], ib.kernel.threads[1],
                                      ib.kernel.threads[2]};
                a.index = ib.one_to_one_in_threads(e, iterations, block) ? e : Expr();
                if (active != block && ib.one_to_one_in_threads(e, iterations, active)) {
                    a.index_in_loop = e;
                    a.threads = active;
                }
                return true;
            }
            void visit(const Load *op) override {
                IRVisitor::visit(op);
                Access a;
                if (access(op->name, op->index, a)) acc.reads.push_back(a);
            }
            void visit(const Store *op) override {
                // An atomic update reads the point it writes within the atomic operation.
                const Call *update = op->value.as<Call>();
                const Load *current = nullptr;
                int atomic_op = -1;
                if (update && update->is_intrinsic(Intrinsic::atomic_update) &&
                    update->args.size() == 3) {
                    current = update->args[2].as<Load>();
                    if (auto k = as_const_int(update->args[0])) atomic_op = int(*k);
                }
                if (current && atomic_op >= 0 && current->name == op->name) {
                    update->args[1].accept(this);
                    current->index.accept(this);
                    if (current->predicate.defined()) current->predicate.accept(this);
                    op->index.accept(this);
                    if (op->predicate.defined()) op->predicate.accept(this);
                    Access r;
                    if (access(current->name, current->index, r)) {
                        r.atomic_op = atomic_op;
                        acc.reads.push_back(r);
                    }
                } else {
                    atomic_op = -1;
                    IRVisitor::visit(op);
                }
                Access a;
                a.atomic_op = atomic_op;
                if (!access(op->name, op->index, a)) return;
                if (!loops.empty() && !ib.shared.count(op->name)) {
                    LoopNameParts stage = parse_loop_name(loops.back());
                    a.pure_write =
                        stage.stage == 0 && parse_storage_name(op->name).func == stage.func;
                }
                acc.writes.push_back(a);
            }
        } walker(*this, iterations);
        ir.accept(&walker);
        return walker.acc;
    }

    // Whether `acc` must wait for a barrier after what ran since the last one (`pending`),
    // which it then joins.
    static bool order_after(const Accesses &acc, Accesses &pending) {
        if (pending.conflicts_with(acc)) {
            pending = acc;
            return true;
        }
        pending.add(acc);
        return false;
    }

    static Stmt with_barrier(bool needed, const Stmt &s) {
        return needed ? Block::make(gpu_barrier(), s) : s;
    }
};

} // namespace

void inject_gpu_barriers(LoweredKernel &kernel) {
    Accesses pending;
    kernel.body = InjectBarriers(kernel).insert(kernel.body, pending);
}

} // namespace lowering
} // namespace aicf
