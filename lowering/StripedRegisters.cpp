#include "lowering/StripedRegisters.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/Bounds.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <optional>
#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Stand for the index of the thread along x, y and z while accesses are checked.
std::string thread_symbol(GPUDim d) {
    return std::string("__thread_index.") + "xyz"[int(d)];
}

// The loops and lets from a Realize down to the write of its pure definition.
class FindPureWrite : public IRVisitor {
public:
    explicit FindPureWrite(const std::string &func) : func(func) {}

    const Provide *write = nullptr;
    std::vector<const For *> loops; // outermost first, at the write
    std::vector<std::pair<std::string, Expr>> lets;

private:
    const std::string &func;
    std::vector<const For *> loop_stack;
    std::vector<std::pair<std::string, Expr>> let_stack;

    using IRVisitor::visit;

    void visit(const For *op) override {
        loop_stack.push_back(op);
        IRVisitor::visit(op);
        loop_stack.pop_back();
    }
    void visit(const LetStmt *op) override {
        let_stack.emplace_back(op->name, op->value);
        op->body.accept(this);
        let_stack.pop_back();
    }
    void visit(const Provide *op) override {
        if (write || op->name != func) return;
        for (const For *l : loop_stack) {
            LoopNameParts parts = parse_loop_name(l->name);
            if (parts.func == func && parts.stage == 0) {
                write = op;
                loops = loop_stack;
                lets = let_stack;
                return;
            }
        }
    }
};

// A thread loop that moves along a striped dimension: element x belongs to thread
// ((x - base) / stride) % threads of that loop's GPU dimension.
struct ThreadDigit {
    GPUDim dim = GPUDim::X;
    int64_t stride = 1;
    int64_t threads = 1;
};

// One striped dimension of a Func: its offsets from `base` written in mixed radix, the thread
// digits (ascending strides) taken out; what remains is the position in a thread's registers.
struct DimLayout {
    int dim = -1;
    Expr base;
    std::vector<ThreadDigit> digits;
    int64_t extent = 1; // positions per thread

    Expr offset(const Expr &x) const { return Sub::make(x, base); }
    Expr owner(const Expr &x, const ThreadDigit &d) const {
        return Mod::make(Div::make(offset(x), make_const(Int(32), d.stride)),
                         make_const(Int(32), d.threads));
    }
    Expr position(const Expr &x) const {
        Expr o = offset(x);
        for (size_t j = digits.size(); j-- > 0;) {
            Expr s = make_const(Int(32), digits[j].stride);
            Expr ts = make_const(Int(32), digits[j].stride * digits[j].threads);
            o = Add::make(Mul::make(Div::make(o, ts), s), Mod::make(o, s));
        }
        return o;
    }
    std::string describe() const {
        std::ostringstream os;
        os << "the point at coordinate c of dimension " << dim << " lives in thread";
        const std::string from = with_user_loop_names(to_string(simplify(base)));
        for (size_t j = 0; j < digits.size(); j++) {
            os << (j ? " and" : "") << " " << to_string(digits[j].dim) << " = ";
            if (digits[j].stride == 1) {
                os << "(c - " << from << ") % " << digits[j].threads;
            } else {
                os << "((c - " << from << ") / " << digits[j].stride << ") % " << digits[j].threads;
            }
        }
        os << symbols_clause(from);
        return os.str();
    }
};

using Layout = std::vector<DimLayout>;

// A mutator that knows the lets around the node it visits.
class LetStackMutator : public IRMutator {
protected:
    std::vector<std::pair<std::string, Expr>> lets;
    using IRMutator::visit;
    Stmt visit(const LetStmt *op) override {
        Expr value = mutate(op->value);
        lets.emplace_back(op->name, op->value);
        Stmt body = mutate(op->body);
        lets.pop_back();
        return LetStmt::make(op->name, value, body);
    }
};

// e with each min(a, b) and max(a, b) whose operands' order the bounds of a - b in `scope`
// decide replaced by that operand (the simplifier compares with constant bounds only).
Expr decide_min_max(const Expr &e, const Scope<Interval> &scope) {
    class Decide : public IRMutator {
    public:
        explicit Decide(const Scope<Interval> &scope) : scope(scope) {}

    private:
        const Scope<Interval> &scope;
        using IRMutator::visit;
        // 1 when a >= b always, -1 when a <= b always, else 0.
        int order(const Expr &a, const Expr &b) const {
            const Interval d = bounds_of_expr_in_scope(simplify(Sub::make(a, b)), scope);
            const Expr zero = make_zero(a.type());
            if (d.has_lower_bound() && can_prove(GE::make(d.min, zero))) return 1;
            if (d.has_upper_bound() && can_prove(LE::make(d.max, zero))) return -1;
            return 0;
        }
        Expr visit(const Min *op) override {
            Expr a = mutate(op->a), b = mutate(op->b);
            const int o = order(a, b);
            return o > 0 ? b : o < 0 ? a : Min::make(a, b);
        }
        Expr visit(const Max *op) override {
            Expr a = mutate(op->a), b = mutate(op->b);
            const int o = order(a, b);
            return o > 0 ? a : o < 0 ? b : Max::make(a, b);
        }
    } decide(scope);
    return decide.mutate(e);
}

// Rewrites every access to a striped Func into a position in its thread's registers,
// proving that the thread holds the element.
class StripeAccesses : public LetStackMutator {
public:
    // `outer_lets`: the lets around the Realize (its bounds, the consumer's loop mins).
    StripeAccesses(const std::string &func, const Layout &layout,
                   const std::vector<std::pair<std::string, Expr>> &outer_lets)
        : func(func), layout(layout) {
        lets = outer_lets;
    }

private:
    const std::string &func;
    const Layout &layout;
    Scope<Interval> bounds;
    std::map<std::string, Expr> thread_vars; // thread loop variable -> min + thread symbol
    std::map<std::string, GPUDim> thread_dims;
    int loops_on[3] = {0, 0, 0}; // thread loops around, per GPU dimension

    using LetStackMutator::visit;

    // The conditions `e < b` and `e <= b` around the access (the guards of split tails), as
    // e in thread terms and its largest value.
    std::vector<std::pair<Expr, Expr>> guards;

    Expr in_thread_terms(const Expr &e) const {
        return substitute(thread_vars, substitute_lets(lets, e));
    }

    Stmt visit(const IfThenElse *op) override {
        const size_t before = guards.size();
        for (const Expr &c : conjuncts(op->condition)) {
            if (const LT *lt = c.as<LT>(); lt && lt->a.type() == Int(32)) {
                guards.emplace_back(in_thread_terms(lt->a),
                                    in_thread_terms(Sub::make(lt->b, make_one(Int(32)))));
            } else if (const LE *le = c.as<LE>(); le && le->a.type() == Int(32)) {
                guards.emplace_back(in_thread_terms(le->a), in_thread_terms(le->b));
            }
        }
        Stmt then_case = mutate(op->then_case);
        guards.resize(before);
        Stmt else_case = op->else_case.defined() ? mutate(op->else_case) : Stmt();
        return IfThenElse::make(mutate(op->condition), then_case, else_case);
    }

    // A way to rewrite an expression where the access runs through a guard around it
    // (`bo * 2 + bi < tiles`): a variable v of the guard's expression g with coefficient 1
    // replaced by g' - (g - v), for a fresh g' up to the guard's bound, the mins and maxes
    // that then decide replaced by their operand, and g' by g again. A row tile starting at
    // bo * 128 + bi * 64 is then bounded as 64 g' below the rows. guard < 0: e as it is.
    struct Rewrite {
        int guard = -1;
        std::string var;
    };

    Expr rewritten(const Rewrite &r, const Expr &e, const Scope<Interval> &scope) const {
        if (r.guard < 0) return e;
        // A buffer's extents and mins as variables, which bounds keep as they are.
        class Symbols : public IRMutator {
        public:
            std::map<std::string, Expr> calls;

        private:
            using IRMutator::visit;
            Expr visit(const Call *op) override {
                if (!op->is_intrinsic(Intrinsic::buffer_get_min) &&
                    !op->is_intrinsic(Intrinsic::buffer_get_extent))
                    return IRMutator::visit(op);
                const std::string name = "buffer." + to_string(Expr(op));
                calls[name] = op;
                return Variable::make(op->type, name);
            }
        } symbols;
        const Expr g = symbols.mutate(guards[size_t(r.guard)].first);
        const Expr bound = symbols.mutate(guards[size_t(r.guard)].second);
        const Expr rest = simplify(Sub::make(g, Variable::make(Int(32), r.var)));
        const std::string fresh = "guarded.expression";
        Scope<Interval> with = scope;
        Interval range = bounds_of_expr_in_scope(g, scope);
        range.max = simplify(bound);
        with.push(fresh, range);
        Expr decided = decide_min_max(
            simplify(substitute(r.var, Sub::make(Variable::make(Int(32), fresh), rest),
                                symbols.mutate(e))),
            with);
        decided = substitute(fresh, g, decided);
        return simplify(substitute(symbols.calls, decided), scope);
    }

    // The rewrites to try, e as it is first.
    std::vector<Rewrite> rewrites() const {
        std::vector<Rewrite> all(1);
        for (size_t i = 0; i < guards.size(); i++) {
            const Expr &g = guards[i].first;
            if (g.as<Variable>()) continue;
            for (const std::string &v : free_vars(g))
                if (!uses_var(simplify(Sub::make(g, Variable::make(Int(32), v))), v))
                    all.push_back({int(i), v});
        }
        return all;
    }

    Stmt visit(const For *op) override {
        Expr min = in_thread_terms(op->min);
        if (op->for_type == ForType::GPUThread) {
            const int d = int(op->gpu_dim);
            thread_vars[op->name] =
                Add::make(op->min, Variable::make(Int(32), thread_symbol(op->gpu_dim)));
            thread_dims[op->name] = op->gpu_dim;
            loops_on[d]++;
            std::optional<int64_t> count = constant_upper_bound(op->extent);
            ScopedBinding<Interval> bind(
                bounds, thread_symbol(op->gpu_dim),
                Interval(make_zero(Int(32)), count ? make_const(Int(32), *count - 1) : Expr()));
            Stmt s = IRMutator::visit(op);
            loops_on[d]--;
            thread_vars.erase(op->name);
            thread_dims.erase(op->name);
            return s;
        }
        Expr max =
            simplify(Sub::make(Add::make(min, in_thread_terms(op->extent)), make_one(Int(32))));
        ScopedBinding<Interval> bind(bounds, op->name, Interval(min, max));
        return IRMutator::visit(op);
    }

    // e printed for a message: each thread symbol as the variable of the reading thread loop
    // along its dimension (where that loop starts at 0), and the buffer fields the kernel's
    // lets read (buffer_get_extent(O.buffer, 0)) by their names (O.extent.0).
    std::string for_users(const Expr &e) const {
        std::map<std::string, Expr> threads;
        for (const auto &[name, value] : thread_vars) {
            const Add *a = value.as<Add>();
            if (a && is_const_zero(simplify(a->a)))
                threads[thread_symbol(thread_dims.at(name))] = Variable::make(Int(32), name);
        }
        struct Fields : IRMutator {
            using IRMutator::visit;
            Expr visit(const Call *c) override {
                const bool min = c->is_intrinsic(Intrinsic::buffer_get_min),
                           extent = c->is_intrinsic(Intrinsic::buffer_get_extent);
                const Variable *buffer = c->args.empty() ? nullptr : c->args[0].as<Variable>();
                auto dim = c->args.size() == 2 ? as_const_int(c->args[1]) : std::nullopt;
                const std::string suffix = buffer_descriptor_name("");
                if (!(min || extent) || !buffer || !dim || buffer->name.size() <= suffix.size() ||
                    buffer->name.compare(buffer->name.size() - suffix.size(), suffix.size(),
                                         suffix) != 0)
                    return IRMutator::visit(c);
                const std::string name =
                    buffer->name.substr(0, buffer->name.size() - suffix.size());
                return Variable::make(
                    Int(32), buffer_field_name(name, min ? BufferField::Min : BufferField::Extent,
                                               int(*dim)));
            }
        };
        return with_user_loop_names(to_string(simplify(Fields().mutate(substitute(threads, e)))));
    }

    // The argument x of striped dimension l as a position, after proving the thread holds it.
    Expr position(const DimLayout &l, const Expr &x, const std::string &access) {
        Scope<Interval> with_thread = bounds;
        for (const ThreadDigit &d : l.digits) {
            user_assert(loops_on[int(d.dim)] > 0)
                << "Func " << func << " is held in registers striped across GPU threads ("
                << l.describe() << "), but " << with_user_loop_names(access)
                << " reads it outside any GPU thread loop along " << to_string(d.dim)
                << ", where no thread holds all of it. Read it inside loops "
                << "mapped like " << func << "'s.";
            // The reading thread's index ranges over its own loop's threads (set where that
            // loop is entered), which may be more than the Func's: a consumer of 8 threads
            // reading a Func striped over 4 reads from threads 4 to 7 too.
            if (!with_thread.contains(thread_symbol(d.dim))) {
                with_thread.push(thread_symbol(d.dim),
                                 Interval(make_zero(Int(32)), make_const(Int(32), d.threads - 1)));
            }
        }
        Expr at = in_thread_terms(x);
        // The base through the same lets, so that a consumer's index and the Func's realized
        // min meet in the same terms.
        DimLayout known = l;
        known.base = in_thread_terms(l.base);
        // Whether digit d's owner is its thread under rewrite r.
        auto held = [&](const Rewrite &r, const ThreadDigit &d) {
            const Expr owner = rewritten(r, simplify(known.owner(at, d), with_thread), with_thread);
            return can_prove(EQ::make(owner, Variable::make(Int(32), thread_symbol(d.dim))),
                             with_thread);
        };
        // The first rewrite under which every digit's owner is its thread (e as it is first).
        std::optional<Rewrite> proven;
        for (const Rewrite &r : rewrites()) {
            if (std::all_of(l.digits.begin(), l.digits.end(),
                            [&](const ThreadDigit &d) { return held(r, d); })) {
                proven = r;
                break;
            }
        }
        for (const ThreadDigit &d : l.digits) {
            if (proven) break;
            user_assert(held(Rewrite(), d))
                << "Func " << func << " is held in registers striped across GPU threads ("
                << l.describe() << "), but " << with_user_loop_names(access)
                << " may read an element another thread holds: "
                << "it reads c = " << for_users(simplify(at, with_thread)) << ", held by thread "
                << to_string(d.dim) << " = " << for_users(simplify(known.owner(at, d), with_thread))
                << symbols_clause(for_users(simplify(at, with_thread)))
                << ". Split the consumer's loop over that dimension as " << func
                << "'s is split, with the same loops on threads, or store " << func
                << " in shared memory.";
        }
        // In terms of the loop variables again, for the code.
        Expr pos = rewritten(*proven, simplify(known.position(at), with_thread), with_thread);
        std::map<std::string, Expr> back;
        for (const auto &[name, value] : thread_vars) {
            Expr min = value.as<Add>()->a;
            back[thread_symbol(thread_dims.at(name))] =
                Sub::make(Variable::make(Int(32), name), min);
        }
        return simplify(substitute(back, pos));
    }

    std::vector<Expr> positions(const std::vector<Expr> &args, const std::vector<Expr> &mutated,
                                const std::string &access) {
        std::vector<Expr> out = mutated;
        for (const DimLayout &l : layout)
            out[size_t(l.dim)] = position(l, args[size_t(l.dim)], access);
        return out;
    }

    Stmt visit(const Provide *op) override {
        Stmt s = IRMutator::visit(op);
        if (op->name != func) return s;
        const Provide *p = s.as<Provide>();
        return Provide::make(p->name, p->values,
                             positions(op->args, p->args, statement_text(Stmt(op))));
    }

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        if (op->call_type != Call::Func || op->name != func) return e;
        const Call *c = e.as<Call>();
        return Call::make_func(c->type, c->name, positions(op->args, c->args, to_string(Expr(op))),
                               c->func, c->value_index);
    }
};

class StripeRegisterFuncs : public LetStackMutator {
    int thread_loops = 0;

    using LetStackMutator::visit;

    Stmt visit(const For *op) override {
        const bool thread = op->for_type == ForType::GPUThread;
        thread_loops += thread;
        Stmt s = IRMutator::visit(op);
        thread_loops -= thread;
        return s;
    }

    Stmt visit(const Realize *op) override {
        if (op->memory_type != MemoryType::Register) return IRMutator::visit(op);
        const std::string &f = op->name;
        FindPureWrite find(f);
        op->body.accept(&find);
        std::vector<const For *> threads;
        for (const For *l : find.loops) {
            LoopNameParts parts = parse_loop_name(l->name);
            if (l->for_type == ForType::GPUThread && parts.func == f && parts.stage == 0)
                threads.push_back(l);
        }
        if (threads.empty()) return IRMutator::visit(op);
        const bool inside_threads = thread_loops > 0;
        std::optional<Layout> layout = find_layout(op, find, threads, inside_threads);
        if (!layout) return IRMutator::visit(op); // a register tile: register_tiles sizes it
        Stmt body = mutate(op->body);
        body = StripeAccesses(f, *layout, lets).mutate(body);
        Region bounds = op->bounds;
        for (const DimLayout &l : *layout)
            bounds[size_t(l.dim)] = Range(make_zero(Int(32)), make_const(Int(32), l.extent));
        return Realize::make(f, op->types, op->memory_type, bounds, body);
    }

    // The striping of the Func the Realize holds, if it is striped: the dimensions its thread
    // loops move along in more than one contiguous part per thread.
    std::optional<Layout> find_layout(const Realize *op, const FindPureWrite &find,
                                      const std::vector<const For *> &threads, bool required) {
        const std::string &f = op->name;
        const For *lanes = threads.back();
        auto fail = [&](const std::string &why) -> std::optional<Layout> {
            user_assert(!required)
                << "Func " << f << " is computed inside a GPU thread loop and held in registers, "
                << "with its loop " << loop_var_for_users(lanes->name)
                << " on threads, so its elements are spread over those threads, but " << why
                << ". Split each dimension of " << f << " as x = (outer * threads + thread) * "
                << "inner + inner index, with the thread loop over the middle part.";
            return std::nullopt;
        };
        std::vector<Expr> args;
        for (const Expr &a : find.write->args)
            args.push_back(simplify(substitute_lets(find.lets, a)));
        Layout layout(args.size());
        for (size_t d = 0; d < args.size(); d++)
            layout[d].dim = int(d);
        for (const For *t : threads) {
            auto count = as_const_int(simplify(t->extent));
            if (!count)
                return fail("the thread loop " + loop_for_users(t->name) +
                            " has no constant extent");
            int moved = -1;
            for (size_t d = 0; d < args.size(); d++) {
                auto s = step_along(args[d], t->name);
                if (!s)
                    return fail("dimension " + std::to_string(d) + " of " + f +
                                " is not an affine function of the thread loop " +
                                loop_for_users(t->name));
                if (*s == 0) continue;
                if (moved >= 0 || *s < 0)
                    return fail("the thread loop " + loop_for_users(t->name) +
                                " moves along several dimensions, or backwards");
                moved = int(d);
                layout[d].digits.push_back({t->gpu_dim, *s, *count});
            }
            if (moved < 0)
                return fail("the thread loop " + loop_for_users(t->name) +
                            " does not move along any dimension");
        }
        std::map<std::string, Expr> at_min;
        std::vector<const For *> serial; // the loops of the Func, other than its thread loops
        bool inside = false;
        for (const For *l : find.loops) {
            inside = inside || parse_loop_name(l->name).func == f;
            if (!inside) continue;
            at_min[l->name] = l->min;
            if (l->for_type != ForType::GPUThread ||
                std::find(threads.begin(), threads.end(), l) == threads.end())
                serial.push_back(l);
        }
        Layout striped;
        for (DimLayout &dl : layout) {
            if (dl.digits.empty()) continue;
            std::sort(
                dl.digits.begin(), dl.digits.end(),
                [](const ThreadDigit &a, const ThreadDigit &b) { return a.stride < b.stride; });
            for (size_t j = 1; j < dl.digits.size(); j++) {
                const ThreadDigit &lo = dl.digits[j - 1], &hi = dl.digits[j];
                if (hi.stride % (lo.stride * lo.threads) != 0)
                    return fail("two thread loops along dimension " + std::to_string(dl.dim) +
                                " overlap (steps " + std::to_string(lo.stride) + " over " +
                                std::to_string(lo.threads) + " threads, and " +
                                std::to_string(hi.stride) + ")");
            }
            // The gaps between thread digits: gap j holds multiples of low(j) below high(j).
            const size_t gaps = dl.digits.size() + 1;
            auto low = [&](size_t j) {
                return j == 0 ? int64_t(1) : dl.digits[j - 1].stride * dl.digits[j - 1].threads;
            };
            std::vector<int64_t> filled(gaps, 0);
            const Expr &x = args[size_t(dl.dim)];
            for (const For *l : serial) {
                auto s = step_along(x, l->name);
                auto e = constant_upper_bound(l->extent);
                if (!e) {
                    return fail("the loop " + loop_for_users(l->name) +
                                " has no constant extent (a register array has a constant size: "
                                "bound() the consumer's dimension to a constant extent)");
                }
                if (!s) {
                    return fail("the loop " + loop_for_users(l->name) +
                                " does not step by a constant along the striped dimension (its "
                                "index is " +
                                with_user_loop_names(to_string(simplify(x))) +
                                "; a split whose last tile shifts inwards, the default tail, "
                                "steps by less at the end where the factor does not divide the "
                                "extent: split with TailStrategy::GuardWithIf)");
                }
                if (*s == 0 || *e <= 1) continue;
                size_t j = gaps;
                while (j-- > 0)
                    if (*s > 0 && *s % low(j) == 0) break;
                const bool fits =
                    j < gaps && (j + 1 == gaps || filled[j] + *s * (*e - 1) < dl.digits[j].stride);
                if (!fits) {
                    return fail("the loop " + loop_for_users(l->name) + " steps by " +
                                std::to_string(*s) + " along dimension " + std::to_string(dl.dim) +
                                ", which its thread loops split at " + "steps " +
                                std::to_string(dl.digits[0].stride) +
                                " (each thread's consecutive elements) and up");
                }
                filled[j] += *s * (*e - 1);
            }
            bool spread = dl.digits.size() > 1;
            for (size_t j = 1; j < gaps; j++)
                spread = spread || filled[j] > 0;
            if (!required && !spread) continue; // one contiguous part per thread
            dl.base = simplify(substitute(at_min, x));
            // The last position: every serial loop at its end, the thread digits at 0.
            int64_t end = 0, scale = 1;
            for (size_t j = 0; j < gaps; j++) {
                end += filled[j] / low(j) * scale;
                if (j + 1 < gaps) scale *= dl.digits[j].stride / low(j);
            }
            dl.extent = end + 1;
            striped.push_back(dl);
        }
        if (striped.empty()) return std::nullopt;
        return striped;
    }
};

} // namespace

Stmt stripe_register_funcs(const Stmt &s) {
    return StripeRegisterFuncs().mutate(s);
}

} // namespace lowering
} // namespace aicf
