#include "lowering/RangesOverIterations.h"

#include "dsl/ir/Bounds.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <atomic>
#include <set>
#include <utility>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The walk: each name bound inside the statement (a let, a loop) has a 64-bit stand-in, which
// the scope bounds by names from outside; a let whose value is small stands for the value
// itself instead, so that the parts of a region that move together (a tile's start and its
// extent) still cancel.
class RangesWalk : public IRVisitor {
public:
    RangesWalk(const std::map<std::string, Box> &regions, const std::string &reads)
        : regions(regions), reads(reads) {}

    RangesOverIterations result;

private:
    const std::map<std::string, Box> &regions;
    const std::string &reads;
    Scope<Interval> scope; // the stand-ins' ranges
    Scope<Expr> wide;      // what each name bound around the current point stands for, in 64 bits
    std::set<std::pair<const IRNode *, int>> seen; // accesses met, with their context
    int context = 0, contexts = 0;                 // which bindings are in force
    static constexpr int small_value = 8;          // variables in a value a let stands for

    static std::string stand_in(const std::string &name) { return name + ".over_iterations"; }

    // `e` (int32) in 64 bits, with the names bound inside replaced by what they stand for.
    Expr widened(const Expr &e) const {
        class Replace : public IRMutator {
        public:
            explicit Replace(const Scope<Expr> &wide) : wide(wide) {}

        private:
            const Scope<Expr> &wide;
            using IRMutator::visit;
            Expr visit(const Cast *op) override {
                const Variable *v = op->value.as<Variable>();
                if (v && op->type == Int(64) && v->type == Int(32)) {
                    if (const Expr *w = wide.find(v->name)) return *w;
                }
                return IRMutator::visit(op);
            }
        };
        return Replace(wide).mutate(widen_int32(e));
    }

    // An end that still names something bound inside (a let that loads, one of another type)
    // bounds nothing. Others, unless constants or names, become lets of their own.
    Expr named(const std::string &name, const char *end, const Expr &e) {
        if (!e.defined()) return e;
        bool outside = true;
        visit_each<Variable>(e, [&](const Variable *v) {
            outside = outside && !wide.contains(v->name) && !scope.contains(v->name);
        });
        if (!outside) return Expr();
        if (is_const(e) || e.as<Variable>()) return e;
        static std::atomic<int> count{0};
        const std::string n = name + end + std::to_string(count++);
        result.read.definitions.emplace_back(n, e);
        return Variable::make(e.type(), n);
    }

    // The range of the int32 expression `e` over the iterations, with named ends.
    Interval range(const std::string &name, const Expr &e) {
        Interval i = bounds_of_expr_in_scope(simplify(widened(e)), scope);
        return Interval(named(name, ".min_over_iterations.", i.min),
                        named(name, ".max_over_iterations.", i.max));
    }

    static int count_variables(const Expr &e) {
        int n = 0;
        visit_each<Variable>(e, [&](const Variable *) { n++; });
        return n;
    }

    // The lets bound so far, so that a copy of one (a region's lets, placed again around each
    // stage that names them) is not bounded again. An entry holds while the names its value
    // uses still refer to the same bindings.
    struct Bound {
        Expr value;
        std::vector<std::pair<std::string, int>> uses; // each free name and its binding
        Expr stands_for;
        Interval range;
        int id; // the binding: a copy takes the original's, so that its uses match too
    };
    std::map<std::string, std::vector<Bound>> bound;  // by name
    std::map<std::string, std::vector<int>> bindings; // the bindings of each name, innermost last
    int next_binding = 0;
    int binding_of(const std::string &name) const {
        auto it = bindings.find(name);
        return it == bindings.end() || it->second.empty() ? -1 : it->second.back();
    }
    std::vector<std::pair<std::string, int>> uses_of(const Expr &value) const {
        std::vector<std::pair<std::string, int>> uses;
        for (const std::string &n : free_vars(value))
            uses.emplace_back(n, binding_of(n));
        return uses;
    }
    const Bound *bound_before(const std::string &name, const Expr &value) const {
        auto it = bound.find(name);
        if (it == bound.end()) return nullptr;
        for (const Bound &b : it->second) {
            if (!equal(b.value, value)) continue;
            bool same = true;
            for (const auto &[n, id] : b.uses)
                same = same && binding_of(n) == id;
            if (same) return &b;
        }
        return nullptr;
    }

    // Binds `name` for `body`: a let of `value`, or where `loop` is given, a loop over it.
    template <typename Body>
    void bind(const std::string &name, const Expr &value, const Interval *loop, Body body) {
        Expr stands_for = Variable::make(Int(64), stand_in(name));
        int id = next_binding++;
        if (loop) {
            scope.push(stand_in(name), *loop);
        } else if (value.type() != Int(32)) {
            scope.push(stand_in(name), Interval());
        } else if (const Bound *b = bound_before(name, value)) {
            scope.push(stand_in(name), b->range);
            stands_for = b->stands_for;
            id = b->id;
        } else {
            Interval r = Interval::single_point(stands_for);
            if (Expr w = widened(value); count_variables(w) <= small_value)
                stands_for = w;
            else
                r = range(name, value);
            scope.push(stand_in(name), r);
            bound[name].push_back({value, uses_of(value), stands_for, r, id});
        }
        bindings[name].push_back(id);
        wide.push(name, stands_for);
        const int outer = context;
        context = ++contexts;
        body();
        context = outer;
        wide.pop(name);
        scope.pop(stand_in(name));
    }

    using IRVisitor::visit;
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        bind(op->name, op->value, nullptr, [&] { op->body.accept(this); });
    }
    void visit(const Let *op) override {
        op->value.accept(this);
        bind(op->name, op->value, nullptr, [&] { op->body.accept(this); });
    }
    void visit(const For *op) override {
        op->min.accept(this);
        op->extent.accept(this);
        const Expr last = Sub::make(Add::make(op->min, op->extent), make_one(op->min.type()));
        const Interval loop(range(op->name, op->min).min, range(op->name, last).max);
        bind(op->name, Expr(), &loop, [&] { op->body.accept(this); });
    }
    void visit(const Realize *op) override {
        if (auto it = regions.find(op->name); it != regions.end()) {
            Box box;
            for (const Interval &i : it->second) {
                box.push_back(i.is_bounded()
                                  ? Interval(range(op->name, i.min).min, range(op->name, i.max).max)
                                  : Interval());
            }
            auto [at, fresh] = result.realized.emplace(op->name, box);
            if (!fresh) at->second = box_union(at->second, box);
        }
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (reads.empty() || op->name != reads ||
            (op->call_type != Call::Image && op->call_type != Call::Func)) {
            return;
        }
        if (!seen.emplace(op, context).second) return; // the same access, the same bindings
        Box box;
        for (const Expr &a : op->args)
            box.push_back(range(reads, a));
        Access &read = result.read;
        read.box = read.used ? box_union(read.box, box) : box;
        read.used = true;
    }
};

} // namespace

RangesOverIterations ranges_over_iterations(const Stmt &s,
                                            const std::map<std::string, Box> &regions,
                                            const std::string &reads) {
    RangesWalk walk(regions, reads);
    if (s.defined()) s.accept(&walk);
    return std::move(walk.result);
}

} // namespace lowering
} // namespace aicf
