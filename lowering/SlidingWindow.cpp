#include "lowering/SlidingWindow.h"

#include "dsl/Names.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <set>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Whether the Func's loop over `arg` is a plain serial loop: not split, fused or renamed, and
// neither vectorized, unrolled nor parallel (its extent may then change from one iteration of
// the enclosing loop to the next).
bool plain_serial_loop(const Function &f, const std::string &arg) {
    const StageSchedule &s = f.definition().schedule;
    for (const Split &sp : s.splits) {
        if (sp.old_var == arg || sp.outer == arg || sp.inner == arg) return false;
    }
    for (const Dim &d : s.dims) {
        if (d.var == arg) return d.for_type == ForType::Serial;
    }
    return false;
}

// Shrinks the computed region of one Func inside its Realize.
class Slide : public IRMutator {
public:
    explicit Slide(const Function &f) : f(f) {}

    // Each region that now slides: along which argument, over which loop, and the power of
    // two that covers the region of one iteration (0 when that region's size is not a
    // constant).
    struct Decision {
        std::string arg, loop;
        int64_t window = 0;
    };
    std::vector<Decision> decisions;

private:
    const Function &f;
    struct Loop {
        std::string name;
        Expr min, extent;
        ForType type;
    };
    std::vector<Loop> loops;                  // the loops inside the Realize, outermost first
    std::map<std::string, size_t> loop_depth; // names bound inside the Realize -> loops open then

    using IRMutator::visit;

    Stmt visit(const For *op) override {
        loops.push_back({op->name, op->min, op->extent, op->for_type});
        loop_depth[op->name] = loops.size();
        Stmt body = mutate(op->body);
        loop_depth.erase(op->name);
        loops.pop_back();
        if (body.same_as(op->body)) return op;
        return For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, body);
    }

    bool is_region_let(const std::string &name) const {
        for (const std::string &a : f.args()) {
            if (name == loop_min_name(f.name(), 0, a) || name == loop_max_name(f.name(), 0, a) ||
                name == loop_extent_name(f.name(), 0, a)) {
                return true;
            }
        }
        return false;
    }

    Stmt visit(const LetStmt *op) override {
        if (is_region_let(op->name)) return slide(op);
        loop_depth[op->name] = loops.size();
        Stmt body = mutate(op->body);
        loop_depth.erase(op->name);
        if (body.same_as(op->body)) return op;
        return LetStmt::make(op->name, op->value, body);
    }

    // The lets of the computed region, rewritten to slide along one dimension when that is
    // valid, around the mutated statement they enclose.
    Stmt slide(const LetStmt *first) {
        std::vector<std::pair<std::string, Expr>> lets;
        Stmt rest = first;
        while (const LetStmt *l = rest.as<LetStmt>()) {
            if (!is_region_let(l->name)) break;
            lets.emplace_back(l->name, l->value);
            rest = l->body;
        }
        for (const auto &l : lets)
            loop_depth[l.first] = loops.size();
        rest = mutate(rest);
        for (const auto &l : lets)
            loop_depth.erase(l.first);
        rewrite(lets);
        for (auto it = lets.rbegin(); it != lets.rend(); ++it)
            rest = LetStmt::make(it->first, it->second, rest);
        return rest;
    }

    const Expr *value_of(const std::vector<std::pair<std::string, Expr>> &lets,
                         const std::string &name) const {
        for (const auto &l : lets)
            if (l.first == name) return &l.second;
        return nullptr;
    }

    void rewrite(std::vector<std::pair<std::string, Expr>> &lets) {
        if (loops.empty()) return;
        for (const Loop &l : loops)
            if (l.type != ForType::Serial) return;
        const Loop &v = loops.back();
        // Which dimensions move with v; the values may use v and names bound outside it only.
        std::string slid;
        for (const std::string &a : f.args()) {
            const Expr *min = value_of(lets, loop_min_name(f.name(), 0, a));
            const Expr *max = value_of(lets, loop_max_name(f.name(), 0, a));
            if (!min || !max) return;
            bool moves = false;
            for (const Expr *e : {min, max}) {
                for (const std::string &n : free_vars(*e)) {
                    if (n == v.name) {
                        moves = true;
                    } else if (auto it = loop_depth.find(n);
                               it != loop_depth.end() && it->second == loops.size()) {
                        return; // defined inside v's loop: its dependence on v is not visible here
                    } else if (value_of(lets, n)) {
                        return; // another bound of the region, which may itself move with v
                    }
                }
            }
            if (moves) {
                if (!slid.empty()) return; // two dimensions move: the new part is not a slab
                slid = a;
            }
        }
        if (slid.empty() || !plain_serial_loop(f, slid)) return;

        std::string min_name = loop_min_name(f.name(), 0, slid),
                    max_name = loop_max_name(f.name(), 0, slid);
        Expr min = *value_of(lets, min_name), max = *value_of(lets, max_name);
        Expr var = Variable::make(Int(32), v.name);
        Expr next = Add::make(var, make_one(Int(32)));
        // Both ends must move forward (or stay) from one iteration to the next.
        Scope<Interval> range;
        range.push(v.name, Interval(v.min, Sub::make(Add::make(v.min, v.extent),
                                                     make_const(Int(32), int64_t(2)))));
        if (!can_prove(GE::make(substitute(v.name, next, min), min), range) ||
            !can_prove(GE::make(substitute(v.name, next, max), max), range)) {
            return;
        }
        Decision decision{slid, v.name, 0};
        if (auto size = as_const_int(simplify(Add::make(Sub::make(max, min), make_one(Int(32)))));
            size && *size > 0) {
            decision.window = 1;
            while (decision.window < *size)
                decision.window *= 2;
        }
        decisions.push_back(decision);
        Expr previous_max = substitute(v.name, Sub::make(var, make_one(Int(32))), max);
        Expr slid_min = Select::make(
            GT::make(var, v.min), Max::make(min, Add::make(previous_max, make_one(Int(32)))), min);
        for (auto &l : lets) {
            if (l.first == min_name) {
                l.second = slid_min;
            } else if (l.first == loop_extent_name(f.name(), 0, slid)) {
                l.second = Add::make(
                    Sub::make(Variable::make(Int(32), max_name), Variable::make(Int(32), min_name)),
                    make_one(Int(32)));
            }
        }
    }
};

// Whether every access of `func` in a statement lies inside the loop `loop`.
class AllAccessesInside : public IRVisitor {
public:
    AllAccessesInside(const std::string &func, const std::string &loop) : func(func), loop(loop) {}
    bool all_inside = true;

private:
    const std::string &func, &loop;
    int inside = 0;
    using IRVisitor::visit;
    void visit(const For *op) override {
        bool is_loop = op->name == loop;
        inside += is_loop;
        IRVisitor::visit(op);
        inside -= is_loop;
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Func && op->name == func && !inside) all_inside = false;
    }
    void visit(const Provide *op) override {
        IRVisitor::visit(op);
        if (op->name == func && !inside) all_inside = false;
    }
};

// Storage folding: every access of `func` along argument `dim` is taken modulo `factor`.
class Fold : public IRMutator {
public:
    Fold(const std::string &func, size_t dim, int64_t factor)
        : func(func), dim(dim), factor(factor) {}

private:
    const std::string &func;
    size_t dim;
    int64_t factor;
    using IRMutator::visit;
    std::vector<Expr> folded(std::vector<Expr> args) {
        args[dim] = Mod::make(args[dim], make_const(args[dim].type(), factor));
        return args;
    }
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (c->call_type != Call::Func || c->name != func) return e;
        return Call::make_func(c->type, c->name, folded(c->args), c->func, c->value_index);
    }
    Stmt visit(const Provide *op) override {
        Stmt s = IRMutator::visit(op);
        const Provide *p = s.as<Provide>();
        if (p->name != func) return s;
        return Provide::make(p->name, p->values, folded(p->args));
    }
};

class SlidingWindow : public IRMutator {
public:
    explicit SlidingWindow(const std::map<std::string, Function> &env) : env(env) {}

private:
    const std::map<std::string, Function> &env;
    int gpu_loops = 0;

    using IRMutator::visit;

    Stmt visit(const For *op) override {
        bool gpu = is_gpu_loop(op->for_type);
        gpu_loops += gpu;
        Stmt s = IRMutator::visit(op);
        gpu_loops -= gpu;
        return s;
    }

    Stmt visit(const Realize *op) override {
        Stmt body = mutate(op->body);
        auto it = env.find(op->name);
        Region bounds = op->bounds;
        if (it != env.end() && it->second.stages() == 1 && gpu_loops == 0 &&
            op->memory_type != MemoryType::GPUShared && op->memory_type != MemoryType::Register) {
            const Function &f = it->second;
            Slide slide(f);
            body = slide.mutate(body);
            // With one sliding region of a constant size, and every access inside the loop it
            // slides over, the storage along that argument folds to the window: a row stays
            // live only until the region has moved past it.
            if (slide.decisions.size() == 1 && slide.decisions[0].window > 0) {
                const Slide::Decision &d = slide.decisions[0];
                size_t dim = std::find(f.args().begin(), f.args().end(), d.arg) - f.args().begin();
                auto stored = as_const_int(simplify(bounds[dim].extent));
                AllAccessesInside check(f.name(), d.loop);
                body.accept(&check);
                if (check.all_inside && (!stored || *stored > d.window)) {
                    body = Fold(f.name(), dim, d.window).mutate(body);
                    bounds[dim] = Range(make_zero(Int(32)), make_const(Int(32), d.window));
                }
            }
        }
        if (body.same_as(op->body) && bounds.size() == op->bounds.size()) {
            bool same = true;
            for (size_t i = 0; i < bounds.size(); i++)
                same = same && bounds[i].min.same_as(op->bounds[i].min) &&
                       bounds[i].extent.same_as(op->bounds[i].extent);
            if (same) return op;
        }
        return Realize::make(op->name, op->types, op->memory_type, bounds, body);
    }
};

} // namespace

Stmt sliding_window(const Stmt &s, const std::map<std::string, Function> &env) {
    return SlidingWindow(env).mutate(s);
}

} // namespace lowering
} // namespace aicf
