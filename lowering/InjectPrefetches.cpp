#include "lowering/InjectPrefetches.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/BoxesRequired.h"

#include <algorithm>
#include <set>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

constexpr int cache_line_bytes = 64;

struct Request {
    std::string name; // the Func or input buffer
    std::string at;   // the loop the prefetch goes in
    std::string from; // the look-ahead loop
    Expr offset;
    PrefetchBoundStrategy strategy;
    std::string stage; // "f.update(0)", for messages
};

Request parse(const Call *c) {
    internal_assert(c->args.size() == 6) << "malformed prefetch request";
    const StringImm *name = c->args[0].as<StringImm>();
    const StringImm *at = c->args[1].as<StringImm>();
    const StringImm *from = c->args[2].as<StringImm>();
    const StringImm *stage = c->args[5].as<StringImm>();
    auto strategy = as_const_int(c->args[4]);
    internal_assert(name && at && from && stage && strategy) << "malformed prefetch request";
    return {name->value, at->value, from->value, c->args[3], PrefetchBoundStrategy(*strategy),
            stage->value};
}

// Takes the requests for loop `at` out of its body (build_stage put them at its top; placing
// other Funcs' computation there may since have wrapped them).
class TakeRequests : public IRMutator {
public:
    explicit TakeRequests(const std::string &at) : at(at) {}
    std::vector<Request> requests;

private:
    const std::string &at;
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        const Call *c = op->value.as<Call>();
        if (c && c->is_intrinsic(Intrinsic::prefetch_request)) {
            Request r = parse(c);
            if (r.at == at) {
                requests.push_back(r);
                return Evaluate::make(make_zero(Int(32)));
            }
        }
        return op;
    }
};

// The indices of `name` that are one known value throughout one iteration of a loop: each read
// of it in the loop's body uses the same expression in that dimension, built only from
// variables defined outside the body and from inputs read at such points. Such an index is
// exact where interval analysis is not: a gather's row ids(y) is one row, not every row a
// clamp allows. An index that reads an input counts only where the read is unconditional (not
// under an if or in an arm of a select), since the prefetch evaluates it for an iteration ahead.
class InvariantIndices : public IRVisitor {
public:
    InvariantIndices(const std::string &name, size_t dims)
        : name(name), points(dims), usable(dims, true) {}

    // The exact index of each dimension, or undefined.
    std::vector<Expr> result() const {
        std::vector<Expr> r(points.size());
        for (size_t d = 0; d < points.size(); d++)
            if (usable[d]) r[d] = points[d];
        return r;
    }

private:
    const std::string &name;
    std::vector<Expr> points;
    std::vector<bool> usable;
    std::set<std::string> inside; // names bound inside the body to values that vary there
    // Names bound inside the body to values that do not (the variable a split defines from
    // the loop's own, say), with those values in terms of names from outside.
    std::map<std::string, Expr> invariant;
    int conditional = 0;

    // Whether `e` is one value throughout an iteration: it uses no name that varies inside
    // the body and reads only inputs, and only where the read is unconditional.
    bool is_invariant(const Expr &e) const {
        bool ok = true, reads = false;
        visit_each<Variable>(e, [&](const Variable *v) { ok = ok && !inside.count(v->name); });
        visit_each<Call>(e, [&](const Call *c) {
            if (c->call_type == Call::Image) reads = true;
            if (c->call_type == Call::Func) ok = false;
        });
        visit_each<Load>(e, [&](const Load *) { ok = false; });
        return ok && !(reads && conditional > 0);
    }
    // `e` in terms of names from outside the body.
    Expr outside_form(const Expr &e) const {
        return invariant.empty() ? e : substitute(invariant, e);
    }

    template <typename LetNode> void visit_let(const LetNode *op) {
        op->value.accept(this);
        if (is_invariant(op->value)) {
            invariant[op->name] = outside_form(op->value);
        } else {
            inside.insert(op->name);
        }
        op->body.accept(this);
    }

    using IRVisitor::visit;
    void visit(const For *op) override {
        op->min.accept(this);
        op->extent.accept(this);
        inside.insert(op->name);
        op->body.accept(this);
    }
    void visit(const LetStmt *op) override { visit_let(op); }
    void visit(const Let *op) override { visit_let(op); }
    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        conditional++;
        op->then_case.accept(this);
        if (op->else_case.defined()) op->else_case.accept(this);
        conditional--;
    }
    void visit(const Select *op) override {
        op->condition.accept(this);
        conditional++;
        op->true_value.accept(this);
        op->false_value.accept(this);
        conditional--;
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->name != name || (op->call_type != Call::Func && op->call_type != Call::Image))
            return;
        for (size_t d = 0; d < op->args.size() && d < points.size(); d++) {
            if (!usable[d]) continue;
            Expr a;
            if (is_invariant(op->args[d])) a = simplify(outside_form(op->args[d]));
            if (a.defined() && (!points[d].defined() || equal(points[d], a))) {
                points[d] = a;
            } else {
                usable[d] = false;
            }
        }
    }
};

class Inject : public IRMutator {
public:
    explicit Inject(const std::map<std::string, Function> &env) : env(env) {}

private:
    const std::map<std::string, Function> &env;
    struct Loop {
        std::string name;
        Expr min, extent;
        ForType type;
    };
    std::vector<Loop> loops; // outermost first
    std::vector<std::string> realized;

    using IRMutator::visit;

    Stmt visit(const Realize *op) override {
        realized.push_back(op->name);
        Stmt s = IRMutator::visit(op);
        realized.pop_back();
        return s;
    }

    Stmt visit(const For *op) override {
        TakeRequests take(op->name);
        Stmt rest = take.mutate(op->body);
        loops.push_back({op->name, op->min, op->extent, op->for_type});
        std::vector<Stmt> prefetches;
        for (const Request &r : take.requests)
            prefetches.push_back(lower_request(r, rest));
        Stmt body = mutate(rest);
        loops.pop_back();
        if (prefetches.empty()) {
            return body.same_as(op->body)
                       ? Stmt(op)
                       : For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, body);
        }
        prefetches.push_back(body);
        return For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim,
                         Block::make(prefetches));
    }

    // One template read of `name` in `body`: its type and the Func or parameter behind it.
    const Call *find_read(const Stmt &body, const std::string &name) {
        const Call *found = nullptr;
        visit_each<Call>(body, [&](const Call *c) {
            if (!found && c->name == name &&
                (c->call_type == Call::Func || c->call_type == Call::Image))
                found = c;
        });
        return found;
    }

    // " It reads a, b." (the Funcs and images the loop's body reads), or nothing.
    static std::string reads_of(const Stmt &body) {
        std::vector<std::string> names;
        if (body.defined()) {
            visit_each<Call>(body, [&](const Call *c) {
                if ((c->call_type == Call::Func || c->call_type == Call::Image) &&
                    std::find(names.begin(), names.end(), c->name) == names.end())
                    names.push_back(c->name);
            });
        }
        std::string text;
        for (const std::string &n : names)
            text += (text.empty() ? " It reads " : ", ") + n;
        return text.empty() ? text : text + ".";
    }

    Stmt lower_request(const Request &r, const Stmt &body) {
        const Loop &at = loops.back();
        std::string where = "In the schedule of " + r.stage + ", the prefetch of " + r.name +
                            " at loop " + loop_var_for_users(at.name);
        for (const Loop &l : loops) {
            user_assert(!is_gpu_loop(l.type))
                << where
                << ": the loop runs on a GPU, and prefetch is for CPU loops. On a GPU, stage the "
                   "data "
                << "on chip instead: " << r.name
                << ".in() computed at the block loop in shared memory.";
        }
        user_assert(at.type != ForType::Vectorized)
            << where
            << ": that loop is vectorized. Prefetch at a serial, unrolled or parallel loop around "
               "it.";
        const Loop *from = nullptr;
        for (const Loop &l : loops)
            if (l.name == r.from) from = &l;
        internal_assert(from) << "prefetch: no loop " << r.from << " around " << at.name;

        auto it = env.find(r.name);
        bool is_func = it != env.end();
        const Call *read = body.defined() ? find_read(body, r.name) : nullptr;
        // (An inlined Func is not read as such: the message below says why.)
        user_assert(read || (is_func && it->second.schedule().compute_level.is_inlined()))
            << where << ": the loop does not read " << r.name
            << ", so there is nothing of it to prefetch." << reads_of(body);
        if (is_func) {
            user_assert(std::find(realized.begin(), realized.end(), r.name) != realized.end())
                << where << ": " << r.name
                << " has no storage around that loop (it is computed inline, or "
                << "stored inside the loop). Store it at or outside the loop, with compute_at, "
                   "store_at "
                << "or compute_root, or prefetch what it reads instead.";
        }
        internal_assert(read) << "prefetch: no read of " << r.name << " at " << at.name;
        Access access = box_required(body, r.name);
        internal_assert(access.used) << "prefetch: box_required missed a read of " << r.name;
        InvariantIndices exact(r.name, access.box.size());
        body.accept(&exact);
        std::vector<Expr> points = exact.result();
        for (size_t d = 0; d < access.box.size(); d++)
            if (points[d].defined()) access.box[d] = Interval::single_point(points[d]);
        for (size_t d = 0; d < access.box.size(); d++) {
            user_assert(access.box[d].is_bounded())
                << where << ": the region of " << r.name
                << " one iteration reads cannot be bounded in "
                << "dimension " << d
                << ". Prefetch at a loop whose reads have an index with known bounds.";
        }

        // The iteration `offset` ahead in the look-ahead loop, written so that no sum can
        // overflow however large the offset: `from` plus the smaller of the offset and the
        // iterations left. A look-ahead known only at run time counts as 0 when negative
        // (constant ones were checked when scheduled).
        Expr offset = is_const(r.offset) ? r.offset : Max::make(r.offset, make_zero(Int(32)));
        Expr from_var = Variable::make(Int(32), from->name);
        Expr left =
            Sub::make(Sub::make(Add::make(from->min, from->extent), make_one(Int(32))), from_var);
        Expr ahead, guard;
        if (r.strategy == PrefetchBoundStrategy::Clamp) {
            ahead = Add::make(from_var, Min::make(offset, left));
        } else {
            ahead = Add::make(from_var, offset);
            guard = LE::make(offset, left);
        }
        auto advance = [&](const Expr &e) { return substitute(from->name, ahead, e); };

        // The innermost stored dimension is walked by cache lines, the others point by point.
        int dims = int(access.box.size());
        int inner = 0;
        if (is_func) {
            const Function &f = it->second;
            const auto &order = f.schedule().storage_order;
            if (!order.empty()) {
                const auto &args = f.args();
                inner = int(std::find(args.begin(), args.end(), order[0]) - args.begin());
            }
        }
        std::vector<Type> types =
            is_func ? it->second.output_types() : std::vector<Type>{read->type};
        std::vector<Stmt> per_element;
        for (size_t k = 0; k < types.size(); k++) {
            Type t = types[k];
            int lane = std::max(1, cache_line_bytes / std::max(1, t.bytes()));
            std::vector<Expr> point(dims);
            std::vector<std::pair<std::string, Interval>> outer_loops;
            Expr line_count;
            std::string line_var = prefetch_loop_name(r.name, int(k), "line");
            for (int d = 0; d < dims; d++) {
                Expr mn = simplify(advance(access.box[d].min)),
                     mx = simplify(advance(access.box[d].max));
                if (d == inner) {
                    // Points `lane` elements apart from the first, then the last: every line
                    // the row touches holds one of them, whatever its alignment.
                    Expr extent = simplify(Add::make(Sub::make(mx, mn), make_one(Int(32))));
                    line_count = simplify(Select::make(
                        GT::make(extent, make_zero(Int(32))),
                        Add::make(
                            Div::make(Add::make(extent, make_const(Int(32), int64_t(lane - 2))),
                                      make_const(Int(32), int64_t(lane))),
                            make_one(Int(32))),
                        make_zero(Int(32))));
                    Expr step = Mul::make(Variable::make(Int(32), line_var),
                                          make_const(Int(32), int64_t(lane)));
                    point[d] = Min::make(Add::make(mn, step), mx);
                } else {
                    std::string v = prefetch_loop_name(r.name, int(k), std::to_string(d));
                    point[d] = Variable::make(Int(32), v);
                    outer_loops.emplace_back(v, Interval(mn, mx));
                }
            }
            Expr value = is_func ? Call::make_func(t, r.name, point, read->func, int(k))
                                 : Call::make_image(t, r.name, point, read->param);
            Stmt s =
                Evaluate::make(Call::make(Int(32), Intrinsic::prefetch, {value}, Call::Intrinsic));
            auto loop = [](const std::string &v, const Expr &min, const Expr &extent,
                           const Stmt &body) {
                auto c = as_const_int(extent);
                ForType type = c && *c >= 0 && *c <= 16 ? ForType::Unrolled : ForType::Serial;
                return For::make(v, min, extent, type, body);
            };
            s = loop(line_var, make_zero(Int(32)), line_count, s);
            // The lines fetched per iteration, as far as constants tell: more than a
            // second-level cache holds is a region bounded only loosely (a data-dependent
            // index over a whole table, say), never a useful prefetch.
            double lines = 1;
            if (auto c = as_const_int(line_count)) lines = double(std::max<int64_t>(*c, 0));
            for (const auto &[v, range] : outer_loops) {
                Expr extent =
                    simplify(Add::make(Sub::make(range.max, range.min), make_one(Int(32))));
                if (auto c = as_const_int(extent)) lines *= double(std::max<int64_t>(*c, 0));
                s = loop(v, range.min, extent, s);
            }
            const double max_lines = 1 << 15; // 2 MiB of 64-byte lines
            user_assert(lines <= max_lines)
                << where << ": each iteration would fetch at least " << int64_t(lines)
                << " cache lines (" << int64_t(lines * cache_line_bytes / (1 << 20))
                << " MiB), more than a cache holds: the "
                << "region one iteration reads is bounded only loosely. Prefetch at an inner loop, "
                << "whose iterations read less, or index " << r.name
                << " by values known per iteration.";
            per_element.push_back(s);
        }
        Stmt s = Block::make(per_element);
        if (access.condition.defined())
            s = IfThenElse::make(simplify(advance(access.condition)), s);
        if (guard.defined()) s = IfThenElse::make(simplify(guard), s);
        return s;
    }
};

} // namespace

Stmt inject_prefetches(const Stmt &s, const std::map<std::string, Function> &env) {
    Stmt result = Inject(env).mutate(s);
    visit_each<Call>(result, [](const Call *c) {
        internal_assert(!c->is_intrinsic(Intrinsic::prefetch_request))
            << "a prefetch request outside its loop";
    });
    return result;
}

} // namespace lowering
} // namespace aicf
