#include "lowering/StripedRegisters.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Stands for the index of the thread along x while accesses are checked.
const char *const kThreadX = "__thread_index.x";

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

// How far e moves when `var` grows by one, if that is a constant.
std::optional<int64_t> step_of(const Expr &e, const std::string &var) {
    Expr next = substitute(var, Add::make(Variable::make(Int(32), var), make_one(Int(32))), e);
    return as_const_int(simplify(Sub::make(next, e)));
}

struct Layout {
    int dim = -1;
    Expr base;
    int64_t stride = 1;  // S: the step of the thread loop
    int64_t threads = 1; // T
    int64_t extent = 1;  // positions per thread

    Expr offset(const Expr &x) const { return Sub::make(x, base); }
    Expr owner(const Expr &x) const {
        return Mod::make(Div::make(offset(x), make_const(Int(32), stride)),
                         make_const(Int(32), threads));
    }
    Expr position(const Expr &x) const {
        Expr ts = make_const(Int(32), threads * stride), s = make_const(Int(32), stride);
        return Add::make(Mul::make(Div::make(offset(x), ts), s), Mod::make(offset(x), s));
    }
    std::string describe() const {
        std::ostringstream os;
        os << "element x of dimension " << dim << " lives in thread ((x - "
           << with_user_loop_names(to_string(simplify(base))) << ") / " << stride << ") % "
           << threads;
        return os.str();
    }
};

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

// Rewrites every access to a striped Func into a position in its thread's registers,
// proving that the thread holds the element.
class StripeAccesses : public LetStackMutator {
public:
    // `outer_lets`: the lets around the Realize (its bounds, the consumer's loop mins).
    StripeAccesses(const std::string &func, const Layout &layout, const std::string &producer,
                   const std::vector<std::pair<std::string, Expr>> &outer_lets)
        : func(func), layout(layout), producer(producer) {
        lets = outer_lets;
    }

private:
    const std::string &func;
    const Layout &layout;
    const std::string &producer; // the producer's thread loop, for messages
    Scope<Interval> bounds;
    std::map<std::string, Expr> thread_vars; // x thread loop variable -> min + thread symbol
    int x_loops = 0;

    using LetStackMutator::visit;

    Expr in_thread_terms(const Expr &e) const {
        return substitute(thread_vars, substitute_lets(lets, e));
    }

    Stmt visit(const For *op) override {
        const bool x_thread = op->for_type == ForType::GPUThread && op->gpu_dim == GPUDim::X;
        Expr min = in_thread_terms(op->min);
        if (x_thread) {
            thread_vars[op->name] = Add::make(op->min, Variable::make(Int(32), kThreadX));
            x_loops++;
            Stmt s = IRMutator::visit(op);
            x_loops--;
            thread_vars.erase(op->name);
            return s;
        }
        Expr max =
            simplify(Sub::make(Add::make(min, in_thread_terms(op->extent)), make_one(Int(32))));
        ScopedBinding<Interval> bind(bounds, op->name, Interval(min, max));
        return IRMutator::visit(op);
    }

    // The argument in dimension d as a position, after proving the thread holds it.
    Expr position(const Expr &x, const std::string &access) {
        user_assert(x_loops > 0)
            << "Func " << func << " is held in registers striped across the threads of "
            << loop_for_users(producer) << " (" << layout.describe() << "), but "
            << with_user_loop_names(access) << " reads it outside any GPU thread loop along x, "
            << "where no thread holds all of it. Read it inside a loop mapped like "
            << loop_var_for_users(producer) << ".";
        Scope<Interval> with_thread = bounds;
        with_thread.push(kThreadX,
                         Interval(make_zero(Int(32)), make_const(Int(32), layout.threads - 1)));
        Expr at = in_thread_terms(x);
        // The base through the same lets, so that a consumer's index and the Func's realized
        // min meet in the same terms.
        Layout known = layout;
        known.base = in_thread_terms(layout.base);
        Expr owner = simplify(known.owner(at), with_thread);
        user_assert(can_prove(EQ::make(owner, Variable::make(Int(32), kThreadX)), with_thread))
            << "Func " << func << " is held in registers striped across the threads of "
            << loop_for_users(producer) << " (" << layout.describe() << "), but "
            << with_user_loop_names(access) << " may read an element another thread holds: "
            << "it reads x = " << with_user_loop_names(to_string(simplify(at, with_thread)))
            << ", held by thread " << with_user_loop_names(to_string(owner))
            << ". Split the consumer's loop over x as " << func
            << "'s is split, with the same loop on threads, or store " << func
            << " in shared memory.";
        // In terms of the loop variables again, for the code.
        Expr pos = simplify(known.position(at), with_thread);
        std::map<std::string, Expr> back;
        for (const auto &[name, value] : thread_vars) {
            Expr min = value.as<Add>()->a;
            back[kThreadX] = Sub::make(Variable::make(Int(32), name), min);
        }
        return simplify(substitute(back, pos));
    }

    Stmt visit(const Provide *op) override {
        Stmt s = IRMutator::visit(op);
        if (op->name != func) return s;
        const Provide *p = s.as<Provide>();
        std::vector<Expr> args = p->args;
        args[size_t(layout.dim)] = position(op->args[size_t(layout.dim)], to_string(Stmt(op)));
        return Provide::make(p->name, p->values, args);
    }

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        if (op->call_type != Call::Func || op->name != func) return e;
        const Call *c = e.as<Call>();
        std::vector<Expr> args = c->args;
        args[size_t(layout.dim)] = position(op->args[size_t(layout.dim)], to_string(Expr(op)));
        return Call::make_func(c->type, c->name, args, c->func, c->value_index);
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
        const For *lanes = nullptr;
        for (const For *l : find.loops) {
            LoopNameParts parts = parse_loop_name(l->name);
            if (l->for_type == ForType::GPUThread && parts.func == f && parts.stage == 0) lanes = l;
        }
        if (!lanes) return IRMutator::visit(op);
        const bool inside_threads = thread_loops > 0;
        std::optional<Layout> layout = find_layout(op, find, lanes, inside_threads);
        if (!layout) return IRMutator::visit(op); // a register tile: register_tiles sizes it
        Stmt body = mutate(op->body);
        body = StripeAccesses(f, *layout, lanes->name, lets).mutate(body);
        Region bounds = op->bounds;
        bounds[size_t(layout->dim)] =
            Range(make_zero(Int(32)), make_const(Int(32), layout->extent));
        return Realize::make(f, op->types, op->memory_type, bounds, body);
    }

    // The striping of the Func the Realize holds, if it is striped.
    std::optional<Layout> find_layout(const Realize *op, const FindPureWrite &find,
                                      const For *lanes, bool required) {
        const std::string &f = op->name;
        auto fail = [&](const std::string &why) -> std::optional<Layout> {
            user_assert(!required)
                << "Func " << f << " is computed inside a GPU thread loop and held in registers, "
                << "with its loop " << loop_var_for_users(lanes->name)
                << " on threads, so its elements are spread over those threads, but " << why
                << ". Split one dimension of " << f << " as x = (outer * threads + thread) * "
                << "inner + inner index, with the thread loop over the middle part.";
            return std::nullopt;
        };
        if (lanes->gpu_dim != GPUDim::X)
            return fail("the thread loop runs along " + std::string(to_string(lanes->gpu_dim)) +
                        ", not x");
        auto threads = as_const_int(simplify(lanes->extent));
        if (!threads) return fail("the thread loop has no constant extent");
        Layout layout;
        layout.threads = *threads;
        std::vector<Expr> args;
        for (const Expr &a : find.write->args)
            args.push_back(simplify(substitute_lets(find.lets, a)));
        for (size_t d = 0; d < args.size(); d++) {
            auto s = step_of(args[d], lanes->name);
            if (!s)
                return fail("dimension " + std::to_string(d) + " of " + f +
                            " is not an affine function of the thread loop");
            if (*s == 0) continue;
            if (layout.dim >= 0 || *s < 0)
                return fail("the thread loop moves along several dimensions, or backwards");
            layout.dim = int(d);
            layout.stride = *s;
        }
        if (layout.dim < 0) return fail("the thread loop does not move along any dimension");
        const Expr &x = args[size_t(layout.dim)];
        int64_t inner = 0, outer = 0;
        std::map<std::string, Expr> at_min;
        // The loops of the Realize's body around the write (outer loops of the consumer are
        // fixed while the Func is computed).
        bool inside = false;
        for (const For *l : find.loops) {
            inside = inside || parse_loop_name(l->name).func == f;
            if (!inside) continue;
            at_min[l->name] = l->min;
            if (l == lanes) continue;
            auto s = step_of(x, l->name);
            auto e = constant_upper_bound(l->extent);
            if (!s || !e) {
                return fail("the loop " + loop_for_users(l->name) +
                            " has no constant step or extent along the striped dimension (a "
                            "register array has a constant size: bound() the consumer's "
                            "dimension to a constant extent)");
            }
            if (*s == 0 || *e <= 1) continue;
            if (*s > 0 && *s % (layout.threads * layout.stride) == 0) {
                outer += *s * (*e - 1);
            } else if (*s > 0 && inner + *s * (*e - 1) < layout.stride) {
                inner += *s * (*e - 1);
            } else {
                return fail("the loop " + loop_for_users(l->name) + " steps by " +
                            std::to_string(*s) + ", neither within one thread's " +
                            std::to_string(layout.stride) + " consecutive elements nor by a " +
                            "multiple of the threads' " +
                            std::to_string(layout.threads * layout.stride));
            }
        }
        if (!required && outer == 0) return std::nullopt; // one contiguous part per thread
        layout.base = simplify(substitute(at_min, x));
        layout.extent = (outer / (layout.threads * layout.stride) + 1) * layout.stride;
        return layout;
    }
};

} // namespace

Stmt stripe_register_funcs(const Stmt &s) {
    return StripeRegisterFuncs().mutate(s);
}

} // namespace lowering
} // namespace aicf
