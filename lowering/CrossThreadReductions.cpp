#include "lowering/CrossThreadReductions.h"

#include "dsl/Associative.h"
#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

constexpr int kWarpSize = 32;

// The update of the loop's stage inside a thread loop, when it writes a point that does not
// depend on the loop: the threads of the loop share that point.
class FindSharedUpdate : public LetTracker {
public:
    FindSharedUpdate(const std::string &func, const std::string &loop) : func(func), loop(loop) {}

    // A GPU thread loop inside the loop, as the update's point sees it (min and extent in
    // terms of variables bound outside the loop).
    struct InnerThreads {
        const For *loop;
        Expr min, extent;
    };

    const Provide *update = nullptr;
    int updates = 0;
    std::vector<Expr> point; // its arguments, in terms of variables bound outside the loop
    std::string varying;     // an inner serial loop the point depends on, if any
    // The inner GPU thread loops the point depends on, outermost first: the threads of the
    // loop share a point for each of their threads.
    std::vector<InnerThreads> along;
    // An inner GPU thread loop of the same update that the point does not depend on: a second
    // reduction loop on threads.
    std::string inner_reduction;
    // The conditions around the update that depend on neither the loop nor an inner loop (a
    // split's tail guard on a pure dimension), inner thread loops the point depends on aside:
    // where they fail, the point is not updated.
    std::vector<Expr> guards;

private:
    const std::string &func, &loop;
    std::vector<InnerThreads> inner_loops;
    std::vector<Expr> conditions; // around the node, expanded

    using LetTracker::visit;

    void visit(const For *op) override {
        inner_loops.push_back({op, expand(op->min), expand(op->extent)});
        IRVisitor::visit(op);
        inner_loops.pop_back();
    }

    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        Expr c = expand(op->condition);
        conditions.push_back(c);
        op->then_case.accept(this);
        conditions.pop_back();
        if (!op->else_case.defined()) return;
        conditions.push_back(Not::make(c));
        op->else_case.accept(this);
        conditions.pop_back();
    }

    bool uses_loops(const Expr &e) const {
        if (uses_var(e, loop)) return true;
        for (const InnerThreads &l : inner_loops) {
            bool shared = false;
            for (const InnerThreads &a : along)
                shared = shared || a.loop == l.loop;
            if (!shared && uses_var(e, l.loop->name)) return true;
        }
        return false;
    }

    void add_guards(const Expr &c) {
        if (const And *a = c.as<And>()) {
            add_guards(a->a);
            add_guards(a->b);
        } else if (!uses_loops(c)) {
            guards.push_back(c);
        }
    }

    void visit(const Provide *op) override {
        IRVisitor::visit(op);
        if (op->name != func) return;
        // An atomic() update's threads need no combining.
        const Call *c = op->values[0].as<Call>();
        if (c && c->is_intrinsic(Intrinsic::atomic_update)) return;
        std::vector<Expr> args;
        for (const Expr &a : op->args)
            args.push_back(simplify(expand(a)));
        for (const Expr &a : args)
            if (uses_var(a, loop)) return; // each thread writes its own point
        updates++;
        update = op;
        point = args;
        along.clear();
        varying.clear();
        inner_reduction.clear();
        for (const InnerThreads &l : inner_loops) {
            bool used = false;
            for (const Expr &a : args)
                used = used || uses_var(a, l.loop->name);
            const bool threads = l.loop->for_type == ForType::GPUThread;
            if (used && threads) {
                along.push_back(l);
            } else if (used && varying.empty()) {
                varying = l.loop->name;
            } else if (!used && threads && inner_reduction.empty() &&
                       stage_of_loop(l.loop->name) == stage_of_loop(loop)) {
                inner_reduction = l.loop->name;
            }
        }
        guards.clear();
        for (const Expr &c : conditions)
            add_guards(c);
    }
};

Expr lane_index() {
    return Call::make(Int(32), Intrinsic::gpu_lane_index, {}, Call::Intrinsic);
}

Expr shuffle_xor(const Expr &value, int offset, const Expr &mask) {
    return Call::make(value.type(), Intrinsic::gpu_shuffle_xor,
                      {value, make_const(Int(32), int64_t(offset)), mask}, Call::Intrinsic);
}

int next_power_of_two(int64_t n) {
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

// A cross-thread reduction, as it is being lowered.
struct Reduction {
    Reduction(const For *loop, const FindSharedUpdate &find, const AssociativeUpdate &form)
        : loop(loop), update(find.update), point(find.point), guards(find.guards), op(form),
          flagged(form.order_dependent()) {}

    const For *loop = nullptr;
    const Provide *update = nullptr;
    std::vector<Expr> point;
    std::vector<Expr> guards; // the conditions under which the point is updated at all
    AssociativeUpdate op;
    std::vector<Type> types; // the Func's
    // A merge that depends on the order of the candidates (a tie goes to the later one, say,
    // and the Tuple holds no position to tell which is later) cannot tell the identity from a
    // candidate equal to it: a lane that had no element (past the end, or outside a where())
    // would win a tie with one that had. Its partials then carry one more element, whether
    // the lane has had any element, and a merge takes the other side of a lane that has not.
    bool flagged = false;
    // The partials' elements: the Func's, then that flag where there is one.
    std::vector<Type> partial_types() const {
        std::vector<Type> t = types;
        if (flagged) t.push_back(Int(32));
        return t;
    }
    std::vector<Expr> empty_partial() const {
        std::vector<Expr> e = op.identity(types);
        if (flagged) e.push_back(make_zero(Int(32)));
        return e;
    }
    // The merge of two partials, `a` the earlier lanes'.
    std::vector<Expr> merge_partials(const std::vector<Expr> &a, const std::vector<Expr> &b) const {
        if (!flagged) return op.merge(a, b);
        const size_t n = types.size();
        std::vector<Expr> va(a.begin(), a.begin() + n), vb(b.begin(), b.begin() + n);
        std::vector<Expr> merged = op.merge(va, vb), out;
        Expr zero = make_zero(Int(32));
        Expr a_empty = EQ::make(a[n], zero), b_empty = EQ::make(b[n], zero);
        for (size_t k = 0; k < n; k++)
            out.push_back(Select::make(b_empty, va[k], Select::make(a_empty, vb[k], merged[k])));
        out.push_back(Max::make(a[n], b[n]));
        return out;
    }
    // The update merges partial results rfactor made (Definition::merges): its values already
    // take one partial in, and `had_point`, where defined, says whether that partial had any
    // point (one that had none leaves the lane's flag as it was).
    bool merges_partials = false;
    Expr had_point;
    FunctionPtr self; // the Func, as the update's reads of its current value hold it
    std::string partial, warp_partials;
    bool per_thread_result = false; // the Func lives in registers: every thread writes its copy
    int threads = 1;                // the loop's extent rounded to whole lane groups or warps
    bool serial = false;            // the loop is serial: see reduce_positions_in_order
    // Where set, the combined partial merges into this partial of a serial loop around, in
    // every thread, rather than into the Func (see reduce_positions_in_order).
    std::string into;

    Expr loop_var() const { return Variable::make(Int(32), loop->name); }
    Expr position() const { return Sub::make(loop_var(), loop->min); }

    std::string storage(const std::string &name, size_t k) const {
        return storage_name(name, int(k), int(partial_types().size()));
    }
    std::vector<Expr> load(const std::string &name, const Expr &index) const {
        std::vector<Expr> r;
        const std::vector<Type> t = partial_types();
        for (size_t k = 0; k < t.size(); k++)
            r.push_back(Load::make(t[k], storage(name, k), index, Expr()));
        return r;
    }
    // Every value computed before the first store (a Tuple's elements may read each other).
    Stmt store(const std::string &name, const std::vector<Expr> &values, const Expr &index) const {
        if (values.size() == 1) return Store::make(storage(name, 0), values[0], index, Expr());
        std::vector<Stmt> stores;
        for (size_t k = 0; k < values.size(); k++) {
            Expr v = Variable::make(values[k].type(), storage(name, k) + "_value");
            stores.push_back(Store::make(storage(name, k), v, index, Expr()));
        }
        Stmt s = Block::make(stores);
        for (size_t k = values.size(); k-- > 0;)
            s = LetStmt::make(storage(name, k) + "_value", values[k], s);
        return s;
    }
    Stmt allocate(const std::string &name, MemoryType where, int64_t count, Stmt body) const {
        const std::vector<Type> t = partial_types();
        for (size_t k = t.size(); k-- > 0;)
            body =
                Allocate::make(storage(name, k), t[k], where, {make_const(Int(32), count)}, body);
        return body;
    }

    // Combines the partials of lanes that differ in `offset` within the lanes of `mask`.
    // Both partners merge the lower lane's partial first, so they agree bit for bit even
    // when the merge is not commutative.
    Stmt butterfly_step(int offset, const Expr &mask) const {
        Expr zero = make_zero(Int(32));
        // Each shuffle once, bound to a name: the merge may read a value several times.
        std::vector<Expr> own = load(partial, zero), other;
        std::vector<std::pair<std::string, Expr>> shuffles;
        for (size_t k = 0; k < own.size(); k++) {
            std::string name = storage(partial, k) + "_lane_xor_" + std::to_string(offset);
            shuffles.emplace_back(name, shuffle_xor(own[k], offset, mask));
            other.push_back(Variable::make(own[k].type(), name));
        }
        Stmt s;
        if (op.commutative()) {
            s = store(partial, merge_partials(own, other), zero);
        } else {
            Expr lower = EQ::make(Call::make(Int(32), Intrinsic::bitwise_and,
                                             {position(), make_const(Int(32), int64_t(offset))}),
                                  zero);
            std::vector<Expr> first, second;
            for (size_t k = 0; k < own.size(); k++) {
                first.push_back(Select::make(lower, own[k], other[k]));
                second.push_back(Select::make(lower, other[k], own[k]));
            }
            s = store(partial, merge_partials(first, second), zero);
        }
        for (auto it = shuffles.rbegin(); it != shuffles.rend(); ++it)
            s = LetStmt::make(it->first, it->second, s);
        return s;
    }

    // Butterfly steps over groups of `lanes` lanes (a power of two).
    // A merge that depends on order (ties between candidates) goes from neighbouring lanes
    // outward, so that each step merges two runs of consecutive lanes in their order.
    Stmt butterfly(int lanes, const Expr &mask) const {
        std::vector<Stmt> steps;
        for (int offset = lanes / 2; offset >= 1; offset /= 2)
            steps.push_back(butterfly_step(offset, mask));
        if (!op.commutative()) std::reverse(steps.begin(), steps.end());
        return Block::make(steps);
    }

    // The update of the Func by the combined partial, by every thread of the loop when each
    // holds its own copy of the Func, else by the first.
    Stmt merge_into_func() const {
        Expr zero = make_zero(Int(32));
        std::vector<Expr> total = load(partial, zero);
        Stmt s;
        if (!into.empty()) {
            s = store(into, op.merge(load(into, zero), total), zero);
        } else {
            std::vector<Expr> current;
            for (size_t k = 0; k < types.size(); k++)
                current.push_back(Call::make_func(types[k], update->name, point, self, int(k)));
            s = Provide::make(
                update->name,
                op.merge_after(current,
                               std::vector<Expr>(total.begin(), total.begin() + types.size())),
                point);
            // (No element at all leaves the Func as it was.)
            if (flagged) s = IfThenElse::make(NE::make(total.back(), zero), s);
            for (auto g = guards.rbegin(); g != guards.rend(); ++g)
                s = IfThenElse::make(*g, s);
        }
        if (per_thread_result || serial) return s;
        return IfThenElse::make(EQ::make(position(), zero), s);
    }

    // The loop's body with the update accumulating into the thread's partial instead,
    // starting from the identity, on the loop's real iterations only.
    Stmt accumulate(const Stmt &body) const {
        Expr zero = make_zero(Int(32));
        std::vector<Expr> partial_now = load(partial, zero);
        // Reads of the Func's current value read the partial instead.
        struct IntoPartial : IRMutator {
            const Provide *target;
            const std::vector<Expr> &partial_now;
            IntoPartial(const Provide *t, const std::vector<Expr> &p) : target(t), partial_now(p) {}
            using IRMutator::visit;
            Expr visit(const Call *c) override {
                if (c->call_type != Call::Func || c->name != target->name)
                    return IRMutator::visit(c);
                bool same = c->args.size() == target->args.size();
                for (size_t i = 0; same && i < c->args.size(); i++)
                    same = equal(c->args[i], target->args[i]);
                internal_assert(same)
                    << "cross-thread update of " << target->name << " reads another point of it";
                return partial_now.at(size_t(c->value_index));
            }
        };
        // Replace the Provide by stores into the partial.
        struct Replace : IRMutator {
            const Reduction &r;
            const std::vector<Expr> &partial_now;
            explicit Replace(const Reduction &r, const std::vector<Expr> &p)
                : r(r), partial_now(p) {}
            using IRMutator::visit;
            Stmt visit(const Provide *p) override {
                if (p != r.update) return IRMutator::visit(p);
                IntoPartial into(p, partial_now);
                std::vector<Expr> values;
                std::vector<Expr> current;
                for (size_t k = 0; k < r.types.size(); k++)
                    current.push_back(
                        Call::make_func(r.types[k], p->name, p->args, r.self, int(k)));
                for (const Expr &e :
                     r.merges_partials ? p->values : r.op.partial_step(current, p->values))
                    values.push_back(into.mutate(e));
                if (r.flagged) {
                    Expr one = make_one(Int(32));
                    values.push_back(r.had_point.defined()
                                         ? Select::make(NE::make(r.had_point, make_zero(Int(32))),
                                                        one, partial_now.back())
                                         : one);
                }
                return r.store(r.partial, values, make_zero(Int(32)));
            }
        };
        Stmt s = Replace(*this, partial_now).mutate(body);
        if (!serial &&
            !is_const(simplify(EQ::make(loop->extent, make_const(Int(32), int64_t(threads)))), 1)) {
            s = IfThenElse::make(LT::make(position(), loop->extent), s);
        }
        return Block::make(store(partial, empty_partial(), zero), s);
    }

    Stmt thread_loop(const Stmt &body) const {
        return For::make(loop->name, loop->min, make_const(Int(32), int64_t(threads)),
                         ForType::GPUThread, loop->gpu_dim, body);
    }

    // The loop within one warp: lanes in aligned groups of `threads` (a power of two).
    Stmt within_warp(const Stmt &body) const {
        Expr mask;
        if (threads == kWarpSize) {
            mask = make_const(UInt(32), int64_t(0xffffffffu));
        } else {
            // The group of this lane: `threads` lanes from the lane rounded down.
            Expr group =
                Call::make(Int(32), Intrinsic::bitwise_and,
                           {lane_index(), make_const(Int(32), int64_t(kWarpSize - threads))});
            mask = Call::make(UInt(32), Intrinsic::shift_left,
                              {make_const(UInt(32), int64_t((uint64_t(1) << threads) - 1)),
                               Cast::make(UInt(32), group)});
        }
        Stmt s = Block::make({accumulate(body), butterfly(threads, mask), merge_into_func()});
        return thread_loop(allocate(partial, MemoryType::Register, 1, s));
    }

    // The loop over several warps: each warp reduces its lanes and leaves its partial in
    // shared memory; after a barrier every warp reads all of them and reduces them again.
    // Inside other thread loops, each of their threads (`row` of `rows`) has slots of its own,
    // and the barriers go inside the loops (`barriers`).
    Stmt across_warps(const Stmt &body, const Expr &row, int64_t rows, bool barriers) const {
        const int warps = threads / kWarpSize;
        Expr first_slot = Mul::make(row, make_const(Int(32), int64_t(warps)));
        Expr zero = make_zero(Int(32)), full = make_const(UInt(32), int64_t(0xffffffffu));
        Expr lane = Mod::make(position(), make_const(Int(32), int64_t(kWarpSize)));
        Expr warp = Div::make(position(), make_const(Int(32), int64_t(kWarpSize)));
        Stmt first = Block::make(
            {accumulate(body), butterfly(kWarpSize, full),
             IfThenElse::make(EQ::make(lane, zero),
                              ProducerConsumer::make_produce(
                                  warp_partials, store(warp_partials, load(partial, zero),
                                                       Add::make(first_slot, warp))))});
        first = thread_loop(allocate(partial, MemoryType::Register, 1, first));
        // The second loop: in each group of `group` lanes (the warps rounded up to a power of
        // two), lane w reads warp w's partial (the identity past the last warp), then each
        // group reduces them, so that every lane ends up with the result.
        const int group = next_power_of_two(warps);
        std::vector<Expr> identity = empty_partial(), read;
        Expr w = Mod::make(lane, make_const(Int(32), int64_t(group)));
        Expr slot = Min::make(w, make_const(Int(32), int64_t(warps - 1)));
        Expr present = LT::make(w, make_const(Int(32), int64_t(warps)));
        std::vector<Expr> stored = load(warp_partials, Add::make(first_slot, slot));
        for (size_t k = 0; k < stored.size(); k++)
            read.push_back(Select::make(present, stored[k], identity[k]));
        Stmt second =
            Block::make({store(partial, read, zero), butterfly(group, full), merge_into_func()});
        second = thread_loop(allocate(partial, MemoryType::Register, 1, second));
        // (Inside other thread loops, the caller allocates the slots around them.)
        if (barriers) return Block::make({first, gpu_barrier(), second, gpu_barrier()});
        return allocate(warp_partials, MemoryType::GPUShared, warps * rows,
                        Block::make(first, second));
    }

    // The loop along y or z of the block, whose threads share each point of the inner thread
    // loops `along` (those along x, or x and y, that the point depends on; each with a
    // constant extent in `extents`): each thread leaves its partial in shared memory, and
    // after a barrier the loop's first thread of each point merges them in the loop's order.
    Stmt across_rows(const Stmt &body, const std::vector<FindSharedUpdate::InnerThreads> &along,
                     const std::vector<int64_t> &extents) const {
        Expr zero = make_zero(Int(32));
        // The point's place among the inner threads, the innermost loop fastest.
        int64_t points = 1;
        Expr slot = zero;
        for (size_t i = along.size(); i-- > 0;) {
            Expr at = Sub::make(Variable::make(Int(32), along[i].loop->name), along[i].min);
            slot = Add::make(slot, Mul::make(at, make_const(Int(32), points)));
            points *= extents[i];
        }
        slot = simplify(slot);
        auto in_along = [&](Stmt s) {
            for (size_t i = along.size(); i-- > 0;)
                s = For::make(along[i].loop->name, along[i].min, along[i].extent,
                              ForType::GPUThread, along[i].loop->gpu_dim, s);
            return s;
        };
        Expr own = Add::make(Mul::make(position(), make_const(Int(32), points)), slot);
        Stmt leave = in_along(ProducerConsumer::make_produce(
            warp_partials, store(warp_partials, load(partial, zero), own)));
        Stmt first = thread_loop(
            allocate(partial, MemoryType::Register, 1, Block::make(accumulate(body), leave)));
        const std::string row = warp_partials + ".row";
        Expr next =
            Add::make(Mul::make(Variable::make(Int(32), row), make_const(Int(32), points)), slot);
        Stmt combine = Block::make(
            store(partial, load(warp_partials, slot), zero),
            For::make(row, make_one(Int(32)), make_const(Int(32), int64_t(threads - 1)),
                      ForType::Serial,
                      store(partial, merge_partials(load(partial, zero), load(warp_partials, next)),
                            zero)));
        combine = IfThenElse::make(EQ::make(position(), zero), combine);
        Stmt second = thread_loop(allocate(partial, MemoryType::Register, 1,
                                           in_along(Block::make(combine, merge_into_func()))));
        return allocate(warp_partials, MemoryType::GPUShared, threads * points,
                        Block::make(first, second));
    }
};

// A loop's extent padded to whole lane groups: a power of two up to a warp, whole warps above.
int64_t whole_lanes(int64_t n) {
    return n <= kWarpSize ? next_power_of_two(n) : (n + kWarpSize - 1) / kWarpSize * kWarpSize;
}

class CrossThreadReductions : public IRMutator {
public:
    explicit CrossThreadReductions(const std::map<std::string, Function> &env) : env(env) {}

private:
    const std::map<std::string, Function> &env;
    struct Storage {
        MemoryType memory;
        int thread_loops; // around its Realize
    };
    Scope<Storage> storage;                    // the Funcs realized around the node
    int block_loops = 0;                       // GPU block loops around the node
    int thread_loops = 0;                      // GPU thread loops around the node
    std::vector<const For *> enclosing;        // and those loops, outermost first
    std::vector<const For *> serial_enclosing; // the other loops around the node
    std::set<std::string> lowering;            // the stages whose thread loops enclose the node
    // The stages whose threads' combined partials merge into a partial of a serial loop
    // around them (see reduce_positions_in_order), and that partial.
    std::map<std::string, std::string> accumulating;
    // The shared slots of the reductions inside them, allocated around the outermost.
    std::vector<std::function<Stmt(const Stmt &)>> slots_outside;
    std::array<int64_t, 3> block{1, 1, 1}; // the kernel's threads per block before padding
    struct Lowered {
        std::string loop;
        int threads;
    };
    std::vector<Lowered> lowered; // in the current kernel

    std::vector<std::pair<std::string, Expr>> lets; // around the node, outermost first

    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        lets.emplace_back(op->name, op->value);
        Stmt body = mutate(op->body);
        lets.pop_back();
        if (body.same_as(op->body)) return op;
        return LetStmt::make(op->name, op->value, body);
    }

    Stmt visit(const Realize *op) override {
        ScopedBinding<Storage> bind(storage, op->name, {op->memory_type, thread_loops});
        return IRMutator::visit(op);
    }

    Stmt visit(const For *op) override {
        if (op->for_type == ForType::GPUBlock) {
            if (block_loops == 0) {
                block = thread_loop_bounds(Stmt(op), lets);
            }
            block_loops++;
            Stmt s = IRMutator::visit(op);
            if (--block_loops == 0) {
                check_warps(s);
                lowered.clear();
            }
            return s;
        }
        if (op->for_type != ForType::GPUThread) {
            if (Stmt merged = reduce_positions_in_order(op); merged.defined()) return merged;
            serial_enclosing.push_back(op);
            Stmt s = IRMutator::visit(op);
            serial_enclosing.pop_back();
            return s;
        }
        LoopNameParts parts = parse_loop_name(op->name);
        if (parts.stage > 0 && parts.var != single_thread_var(false)) {
            FindSharedUpdate find(parts.func, op->name);
            op->body.accept(&find);
            if (find.update) return lower(op, find);
        }
        thread_loops++;
        enclosing.push_back(op);
        Stmt s = IRMutator::visit(op);
        enclosing.pop_back();
        thread_loops--;
        if (thread_loops == 0) {
            for (const auto &allocate : slots_outside)
                s = allocate(s);
            slots_outside.clear();
        }
        return s;
    }

    // An update that keeps its candidates' positions (an argmax that keeps the index) merges
    // partial results by position: rfactor's merge of its partials, and the threads' combined
    // partials of a reduction loop on threads inside a serial reduction loop of the stage
    // (the rows of a domain, the lanes across each row). Merged one by one into the Func,
    // the first would meet the Func's value from before the update, whose position (a label,
    // an index of another domain, one inside this one) means nothing against theirs. So
    // they merge by position into a partial of their own first, which then merges into the
    // Func as the later candidate (merge_after), as the lanes of a cross-thread reduction
    // do. `op`: the outermost serial loop of the stage's domain (the pure loops around it).
    // Undefined where `op` is not such a loop, or none of this is needed (the serial update
    // itself meets its points in order).
    Stmt reduce_positions_in_order(const For *op) {
        const LoopNameParts parts = parse_loop_name(op->name);
        auto fit = env.find(parts.func);
        if (parts.stage < 1 || fit == env.end() || parts.stage >= fit->second.stages())
            return Stmt();
        const std::string stage = stage_of_loop(op->name);
        // (Inside a reduction loop on threads, the threads' combined partial merges into the
        // Func; inside the loop that accumulates them, into its partial.)
        if (lowering.count(stage) || accumulating.count(stage)) return Stmt();
        const Definition &def = fit->second.stage(parts.stage);
        // (The intermediate's update, which records the form too, names no partials.)
        const bool merges = def.merges && !def.merges->partials.empty() && def.merges->form;
        bool threads_inside = false;
        visit_each<For>(op->body, [&](const For *f) {
            threads_inside = threads_inside ||
                             (f->for_type == ForType::GPUThread && stage_of_loop(f->name) == stage);
        });
        if (!merges && !threads_inside) return Stmt();
        FindSharedUpdate find(parts.func, op->name);
        op->body.accept(&find);
        if (!find.update) return Stmt();
        std::optional<AssociativeUpdate> form;
        if (merges) {
            form = *def.merges->form;
        } else {
            form = lowered_form(def, parts.func, parts.stage, *find.update);
        }
        if (!form || !form->keeps_positions() || (threads_inside && form->order_dependent()))
            return Stmt();
        user_assert(find.updates == 1 && find.varying.empty() && find.along.empty())
            << "The update " << loop_stage_for_users(op->name) << " keeps its candidates' "
            << "positions and merges partial results over its reduction loop "
            << loop_var_for_users(op->name) << ", which must enclose none of the update's pure "
            << "loops (the partials of one point merge by position first, then into " << parts.func
            << "), but it encloses "
            << loop_for_users(!find.varying.empty() ? find.varying
                              : find.along.empty()  ? op->name
                                                    : find.along[0].loop->name)
            << ". Put the pure loops of " << loop_stage_for_users(op->name) << " outside "
            << loop_var_for_users(op->name) << " (reorder).";
        Reduction r(op, find, *form);
        r.merges_partials = merges;
        r.serial = true;
        for (const Expr &v : find.update->values) {
            r.types.push_back(v.type());
            visit_each_distinct<Call>(v, [&](const Call *c) {
                if (c->call_type == Call::Func && c->name == parts.func) r.self = c->func;
                if (merges && c->call_type == Call::Func && c->name == def.merges->partials &&
                    c->value_index == def.merges->had_point && !r.had_point.defined())
                    r.had_point = c;
            });
        }
        r.partial = thread_partial_name(op->name);
        Stmt s;
        if (threads_inside) {
            // The reduction on threads inside merges the threads' combined partials into
            // this one, in each thread.
            accumulating[stage] = r.partial;
            Stmt loop = IRMutator::visit(op);
            accumulating.erase(stage);
            s = Block::make({r.store(r.partial, r.empty_partial(), make_zero(Int(32))), loop,
                             r.merge_into_func()});
        } else {
            // (The loops inside, over the other variables of the partials, take part as they
            // are: each of them would find the same update.)
            s = Block::make(r.accumulate(Stmt(op)), r.merge_into_func());
        }
        // (Inside a kernel, in each thread: a Func in registers has a copy in every thread,
        // each merging its own.)
        return r.allocate(r.partial, block_loops > 0 ? MemoryType::Register : MemoryType::Stack, 1,
                          s);
    }

    // The form of a lowered update of stage `stage` of `f`. Which elements keep the
    // candidate's position comes from the definition as written, which the schedule was
    // checked against: lowered, a variable of the domain that runs one iteration (a loop or
    // a split's part of extent 1) is simplified away, and with it the position it names.
    static std::optional<AssociativeUpdate>
    lowered_form(const Definition &def, const std::string &f, int stage, const Provide &update) {
        std::vector<std::string> domain;
        for (const std::string &v : domain_outermost_first(def.rdom))
            domain.push_back(loop_name(f, stage, v));
        std::optional<AssociativeUpdate> form =
            update_form(def, f, update.args, update.values, domain);
        if (def.merges || !def.rdom.defined()) return form;
        std::optional<AssociativeUpdate> written =
            find_associative_update(f, def.args, def.values, domain_outermost_first(def.rdom));
        if (written && written->keeps_positions() && (!form || !form->keeps_positions()))
            return written;
        return form;
    }

    // The body of a reduction loop on threads, lowered: any loops of the stage inside it
    // belong to the reduction across the threads.
    Stmt body_inside(const For *op) {
        const std::string stage = stage_of_loop(op->name);
        const bool first = lowering.insert(stage).second;
        Stmt body = mutate(op->body);
        if (first) lowering.erase(stage);
        return body;
    }

    Stmt lower(const For *op, const FindSharedUpdate &find) {
        const std::string &f = find.update->name;
        const std::string where = "The update " + loop_stage_for_users(op->name) +
                                  " runs its reduction loop " + loop_var_for_users(op->name) +
                                  " on GPU threads, so the threads of that loop update the same " +
                                  "points of " + f;
        const bool across_rows = op->gpu_dim != GPUDim::X;
        user_assert(find.updates == 1)
            << where << ", in " << find.updates << " places. Map a single reduction loop onto "
            << "threads.";
        const std::string varying = !find.varying.empty() || across_rows || find.along.empty()
                                        ? find.varying
                                        : find.along[0].loop->name;
        user_assert(varying.empty())
            << where << ", but which point depends on the inner loop " << loop_for_users(varying)
            << ". Put the pure loops of " << loop_stage_for_users(op->name) << " outside "
            << loop_var_for_users(op->name) << " (reorder)"
            << (across_rows ? ", or map them onto threads along x inside it" : "")
            << ", so that the threads share one point at a time.";
        user_assert(!across_rows || find.inner_reduction.empty())
            << where << " along " << to_string(op->gpu_dim) << ", and also its loop "
            << loop_var_for_users(find.inner_reduction)
            << " along an inner dimension: a reduction over two dimensions of threads. Fuse the "
            << "two reduction loops (fuse) and map the fused loop onto one dimension of threads ("
            << (find.along.empty() ? "x" : "y, the points keeping x") << ").";
        std::vector<int64_t> along_extents;
        for (const FindSharedUpdate::InnerThreads &a : find.along) {
            auto e = constant_upper_bound(substitute_lets(lets, a.extent));
            user_assert(int(a.loop->gpu_dim) < int(op->gpu_dim) && e && *e >= 1)
                << where << " along " << to_string(op->gpu_dim)
                << ", and each thread along the inner thread loop "
                << loop_var_for_users(a.loop->name) << " updates a point of its own, so "
                << "the partial results of each point are combined through shared memory, which "
                << "needs that loop to run along a lower dimension than "
                << loop_var_for_users(op->name) << " (x below y below z) and over a constant "
                << "number of threads; it runs along " << to_string(a.loop->gpu_dim) << " over "
                << with_user_loop_names(to_string(a.extent)) << ".";
            along_extents.push_back(*e);
        }
        // The update's reduction variables as the lowered update names them, outermost first.
        std::vector<std::string> domain;
        const LoopNameParts loop = parse_loop_name(op->name);
        auto fit = env.find(f);
        const Definition *def = nullptr;
        if (fit != env.end() && loop.stage > 0 && loop.stage < fit->second.stages()) {
            def = &fit->second.stage(loop.stage);
            for (const std::string &v : domain_outermost_first(def->rdom))
                domain.push_back(loop_name(f, loop.stage, v));
        }
        std::optional<AssociativeUpdate> op_found =
            def ? lowered_form(*def, f, loop.stage, *find.update)
                : find_associative_update(f, find.update->args, find.update->values, domain);
        user_assert(op_found.has_value())
            << where << ", and they combine their partial results, but AICF cannot tell that "
            << "the update is associative. Cross-thread reductions recognize "
            << associative_forms(f)
            << ". Write the update in one of these forms, or keep the reduction loop serial.";
        auto extent = constant_upper_bound(substitute_lets(lets, op->extent));
        user_assert(extent.has_value() && *extent >= 1 && *extent <= 1024)
            << where << ", which needs a constant number of threads from 1 to 1024, but the "
            << "loop runs over " << with_user_loop_names(to_string(op->extent))
            << ". Split the reduction loop by a constant and map the inner loop onto threads.";
        Reduction r(op, find, *op_found);
        // The combined partial merges into the Func's value from before the update as the
        // later candidate (merge_after): once, so no reduction loop of the stage may run
        // around the threads' loop where the update keeps positions (the Func would then hold
        // a position of this domain, to compare with the next partial's).
        if (auto it = accumulating.find(stage_of_loop(op->name)); it != accumulating.end())
            r.into = it->second;
        for (const For *l : serial_enclosing) {
            if (!r.into.empty() || !r.op.keeps_positions() ||
                stage_of_loop(l->name) != stage_of_loop(op->name))
                continue;
            bool pure = false;
            for (const Expr &a : find.point)
                pure = pure || uses_var(a, l->name);
            user_assert(pure)
                << where << ", inside its reduction loop " << loop_var_for_users(l->name)
                << ", and the update keeps its candidates' positions: the threads' combined "
                << "partial merges into " << f << " once, after the whole domain, as the later "
                << "candidate. Put " << loop_var_for_users(l->name) << " inside "
                << loop_var_for_users(op->name) << " (reorder), so that each thread reduces "
                << "its part of the domain before the threads combine them.";
        }
        if (def && def->merges) {
            r.merges_partials = true;
            const Definition::Merge &m = *def->merges;
            user_assert(!(m.partials.empty() && m.had_point >= 0))
                << where << ", but these are the partial results of an rfactor of an update "
                << "that keeps one candidate by comparison, with ties that depend on the order "
                << "it meets them in (an argmax keeping a label), and each carries whether it "
                << "has had any point (a where(), or a split whose factor does not divide the "
                << "extent, leaves some without one): such partials are reduced serially. Keep "
                << "the candidate's position in the Tuple (select(better, r.x, index)), split "
                << "by a factor that divides the extent, or keep " << loop_var_for_users(op->name)
                << " serial and put the intermediate's pure loops on threads.";
            // The partial's flag, as the merge reads it.
            for (const Expr &v : find.update->values) {
                visit_each_distinct<Call>(v, [&](const Call *c) {
                    if (c->call_type == Call::Func && c->name == m.partials &&
                        c->value_index == m.had_point && !r.had_point.defined())
                        r.had_point = c;
                });
            }
            internal_assert(m.had_point < 0 || r.had_point.defined())
                << "the merge of " << f << " reads no flag of its partials " << m.partials;
        }
        for (const Expr &v : find.update->values) {
            visit_each_distinct<Call>(v, [&](const Call *c) {
                if (c->call_type == Call::Func && c->name == f) r.self = c->func;
            });
        }
        for (const Expr &v : find.update->values)
            r.types.push_back(v.type());
        for (const Type &t : r.types) {
            user_assert(t.is_scalar() && t.bits <= 64)
                << where << ", which is reduced by warp shuffles of scalars of up to 64 bits, "
                << "but its values are " << to_string(t) << ".";
        }
        r.partial = thread_partial_name(op->name);
        r.warp_partials = warp_partials_name(op->name);
        const Storage *where_f = storage.find(f);
        r.per_thread_result = where_f && where_f->memory == MemoryType::Register;
        // Each thread keeps its own copy of the result: every thread along x must take part
        // (the threads past the loop with the identity), and a copy held at the block level
        // needs the block to be one row of threads.
        int64_t threads = whole_lanes(*extent);
        if (r.per_thread_result && !across_rows) {
            threads = whole_lanes(block[0]);
            // With threads along y or z, each row of threads along x reduces the same values
            // for its own copies: rows of a power of two up to a warp are groups of lanes of
            // their own, and reduce apart; wider rows would share the warps' partials.
            const bool rows_apart = threads == block[0] && threads <= kWarpSize;
            user_assert(where_f->thread_loops > 0 || (block[1] == 1 && block[2] == 1) || rows_apart)
                << where << ", whose result each thread of the block keeps in its registers, but "
                << "the kernel's blocks also have threads along y or z (" << block[0] << " x "
                << block[1] << " x " << block[2] << "), and rows of " << block[0]
                << " threads along x are not groups of lanes of their own (a power of two up to "
                << "32). Store " << f << " in GPUShared, make the block's rows along x a power "
                << "of two up to 32, or map the kernel's other loops along x.";
        }
        if (across_rows) {
            user_assert(thread_loops == 0)
                << where << " along " << to_string(op->gpu_dim) << ", which exchange their partial "
                << "results through shared memory with a barrier of the whole block; the loop is "
                << "inside the GPU thread loop " << loop_for_users(enclosing.front()->name)
                << ", where a barrier would not be reached by every thread. Compute " << f
                << " at a block loop (compute_at), so that " << loop_var_for_users(op->name)
                << " is the outermost thread loop of " << loop_stage_for_users(op->name) << ".";
            user_assert(!r.per_thread_result)
                << where << " along " << to_string(op->gpu_dim) << ", whose partial results are "
                << "combined by the loop's first thread, but " << f << " is stored in registers, "
                << "a copy in each thread. Store " << f << " in GPUShared.";
            r.threads = int(*extent);
            return r.across_rows(body_inside(op), find.along, along_extents);
        }
        Stmt body = body_inside(op);
        r.threads = int(threads);
        if (threads <= kWarpSize) {
            lowered.push_back({op->name, r.threads});
            return r.within_warp(body);
        }
        const std::string padded = r.per_thread_result && *extent <= kWarpSize
                                       ? " (each of the block's " + std::to_string(block[0]) +
                                             " threads along x keeps " + "its own copy of " + f +
                                             " in registers, so all of them take part, not " +
                                             "only the loop's " + std::to_string(*extent) + ")"
                                       : "";
        // Inside other thread loops (rows of the block along y or z), each of their threads
        // has slots of its own, and the barriers are in the loops: every thread of the block
        // must run them, so their extents must be whole dimensions of the block (checked when
        // the thread loops are fused).
        Expr row = make_zero(Int(32));
        int64_t rows = 1;
        for (auto it = enclosing.rbegin(); it != enclosing.rend(); ++it) {
            const For *e = *it;
            auto n = constant_upper_bound(substitute_lets(lets, e->extent));
            user_assert(n.has_value() && *n >= 1)
                << where << " across " << r.threads / kWarpSize << " warps" << padded
                << ", which exchange their partial results through shared memory with a barrier "
                << "of the whole block, in slots for each thread of the enclosing GPU thread loop "
                << loop_for_users(e->name) << ", which runs over "
                << with_user_loop_names(to_string(e->extent))
                << " threads, not bounded by a constant. Split that loop by a constant factor, "
                << "or map at most 32 iterations onto lanes here (gpu_lanes).";
            Expr at = Sub::make(Variable::make(Int(32), e->name), e->min);
            row = Add::make(row, Mul::make(at, make_const(Int(32), rows)));
            rows *= *n;
        }
        lowered.push_back({op->name, r.threads});
        if (!enclosing.empty()) {
            const int64_t slots = r.threads / kWarpSize * rows;
            slots_outside.push_back([r, slots](const Stmt &s) {
                return r.allocate(r.warp_partials, MemoryType::GPUShared, slots, s);
            });
        }
        return r.across_warps(body, simplify(row), rows, !enclosing.empty());
    }

    // Each cross-thread loop must cover whole aligned lane groups: the block's x extent
    // (the largest of its x thread loops) must be a multiple of the group.
    void check_warps(const Stmt &kernel) const {
        const int64_t x = thread_loop_bounds(kernel, lets)[0];
        for (const Lowered &l : lowered) {
            int group = std::min(l.threads, kWarpSize);
            user_assert(x % group == 0)
                << "The update " << loop_stage_for_users(l.loop) << " reduces across " << l.threads
                << " threads of its loop " << loop_var_for_users(l.loop)
                << " by warp shuffles, which need those threads to fill aligned groups of " << group
                << " lanes, but the kernel's blocks are " << x
                << " threads wide in x. Give the other x thread loops of the kernel a multiple "
                << "of " << group << " threads.";
        }
    }
};

} // namespace

bool is_cross_thread_reduction(const For *loop) {
    if (loop->for_type != ForType::GPUThread) return false;
    LoopNameParts parts = parse_loop_name(loop->name);
    // (Only updates reduce, and gpu_single_thread() runs a stage on one thread, which shares
    // nothing.)
    if (parts.stage < 1 || parts.var == single_thread_var(false)) return false;
    FindSharedUpdate find(parts.func, loop->name);
    loop->body.accept(&find);
    return find.update != nullptr;
}

Stmt make_room_for_lanes(const Stmt &s) {
    // The stages whose x thread loops enclose a cross-thread reduction along x of another
    // stage.
    std::map<std::string, std::string> to_move; // stage -> the reduction loop inside
    visit_each<For>(s, [&](const For *outer) {
        if (outer->for_type != ForType::GPUThread || outer->gpu_dim != GPUDim::X ||
            to_move.count(stage_of_loop(outer->name)))
            return;
        visit_each<For>(outer->body, [&](const For *inner) {
            if (inner->gpu_dim == GPUDim::X && inner->for_type == ForType::GPUThread &&
                stage_of_loop(inner->name) != stage_of_loop(outer->name) &&
                !to_move.count(stage_of_loop(outer->name)) && is_cross_thread_reduction(inner))
                to_move[stage_of_loop(outer->name)] = inner->name;
        });
    });
    if (to_move.empty()) return s;
    struct Move : IRMutator {
        const std::map<std::string, std::string> &to_move;
        explicit Move(const std::map<std::string, std::string> &m) : to_move(m) {}
        using IRMutator::visit;
        Stmt visit(const For *op) override {
            auto it = to_move.find(stage_of_loop(op->name));
            if (op->for_type != ForType::GPUThread || it == to_move.end())
                return IRMutator::visit(op);
            user_assert(op->gpu_dim != GPUDim::Z)
                << "The GPU thread loop " << loop_for_users(op->name) << " runs along z, and "
                << "the cross-thread reduction over " << loop_for_users(it->second)
                << " inside it needs x: " << loop_stage_for_users(op->name)
                << " would need a fourth thread dimension. Fuse its thread loops.";
            Stmt body = mutate(op->body);
            return For::make(op->name, op->min, op->extent, op->for_type,
                             GPUDim(int(op->gpu_dim) + 1), body);
        }
    };
    return Move(to_move).mutate(s);
}

Stmt lower_cross_thread_reductions(const Stmt &s, const std::map<std::string, Function> &env) {
    return CrossThreadReductions(env).mutate(s);
}

} // namespace lowering
} // namespace aicf
