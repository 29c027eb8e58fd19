#include "lowering/KernelCost.h"

#include "dsl/Operators.h"
#include "dsl/base/Error.h"
#include "dsl/ir/Bounds.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/AsyncCopy.h"
#include "lowering/TensorCores.h"
#include "lowering/WarpgroupMMA.h"

#include <algorithm>
#include <limits>

namespace aicf {
namespace lowering {

using ir::Expr;
using ir::Intrinsic;
using ir::Stmt;

namespace {

// ---- The host code ----

// The host code with every buffer_get_* call on a pipeline buffer replaced by its value.
class BindBufferFields : public ir::IRMutator {
public:
    explicit BindBufferFields(const ConcreteArguments &args) : args(args) {
        for (const auto &kv : args.buffers)
            by_descriptor[ir::buffer_descriptor_name(kv.first)] = kv.first;
    }

private:
    using IRMutator::visit;
    const ConcreteArguments &args;
    std::map<std::string, std::string> by_descriptor;

    Expr visit(const ir::Call *op) override {
        Expr e = IRMutator::visit(op);
        op = e.as<ir::Call>();
        if (!op || op->args.empty()) return e;
        const ir::Variable *v = op->args[0].as<ir::Variable>();
        auto it = v ? by_descriptor.find(v->name) : by_descriptor.end();
        if (it == by_descriptor.end()) return e;
        const ConcreteArguments::Shape &shape = args.buffers.at(it->second);
        auto dim = [&]() -> const aicf_dim_t & {
            const auto d = ir::as_const_int(op->args[1]);
            internal_assert(d && *d >= 0 && size_t(*d) < shape.dims.size())
                << "report: dimension of " << it->second;
            return shape.dims[size_t(*d)];
        };
        switch (op->intrinsic) {
        case Intrinsic::buffer_get_dimensions:
            return ir::make_const(op->type, int64_t(shape.dims.size()));
        case Intrinsic::buffer_get_type_code:
            return ir::make_const(op->type, int64_t(shape.type.code));
        case Intrinsic::buffer_get_type_bits:
            return ir::make_const(op->type, int64_t(shape.type.bits));
        case Intrinsic::buffer_get_min:
            return ir::make_const(op->type, int64_t(dim().min));
        case Intrinsic::buffer_get_extent:
            return ir::make_const(op->type, int64_t(dim().extent));
        case Intrinsic::buffer_get_stride:
            return ir::make_const(op->type, int64_t(dim().stride));
        default:
            return e;
        }
    }
};

// Walks the host code with every value it can know at these sizes.
class HostWalk {
public:
    HostWalk(const LoweredPipeline &p, const ConcreteArguments &args) : p(p), args(args) {
        for (const auto &kv : args.scalars)
            values[kv.first] = kv.second;
    }

    StaticRun run(const Stmt &body) {
        walk(BindBufferFields(args).mutate(body));
        return std::move(result);
    }

private:
    const LoweredPipeline &p;
    const ConcreteArguments &args;
    std::map<std::string, Expr> values; // known values of variables
    StaticRun result;
    int64_t host_iterations = 0;

    Expr known(const Expr &e) const { return ir::simplify(ir::substitute(values, e)); }

    std::optional<int64_t> constant(const Expr &e) const { return ir::as_const_int(known(e)); }

    void walk(const Stmt &s) {
        if (!s.defined() || result.failed) return;
        switch (s.node_type()) {
        case ir::IRNodeType::Block: {
            const ir::Block *op = s.as<ir::Block>();
            walk(op->first);
            walk(op->rest);
            return;
        }
        case ir::IRNodeType::ProducerConsumer:
            walk(s.as<ir::ProducerConsumer>()->body);
            return;
        case ir::IRNodeType::Allocate: // host storage, around launches that may use it
            walk(s.as<ir::Allocate>()->body);
            return;
        case ir::IRNodeType::LetStmt: {
            const ir::LetStmt *op = s.as<ir::LetStmt>();
            const Expr value = known(op->value);
            const ir::Call *call = value.as<ir::Call>();
            if (call && call->is_intrinsic(Intrinsic::device_malloc)) {
                const ir::StringImm *name = call->args[0].as<ir::StringImm>();
                const auto bytes = ir::as_const_int(call->args[1]);
                if (name && bytes) result.scratch[name->value] = *bytes;
            }
            // A name bound again inside its own scope shadows the outer value.
            const auto outer = values.find(op->name);
            const Expr shadowed = outer == values.end() ? Expr() : outer->second;
            values[op->name] = value;
            walk(op->body);
            if (shadowed.defined())
                values[op->name] = shadowed;
            else
                values.erase(op->name);
            return;
        }
        case ir::IRNodeType::AssertStmt: {
            const ir::AssertStmt *op = s.as<ir::AssertStmt>();
            if (!ir::is_false(known(op->condition))) return;
            const ir::Call *error = op->message.as<ir::Call>();
            FailedCheck failed;
            if (error && error->args.size() >= 2) {
                failed.kind = int32_t(ir::as_const_int(error->args[0]).value_or(0));
                if (const ir::StringImm *n = error->args[1].as<ir::StringImm>())
                    failed.name = n->value;
                for (size_t i = 2; i < error->args.size() && i < 8; i++)
                    failed.details[i - 2] = constant(error->args[i]).value_or(0);
            }
            result.failed = failed;
            return;
        }
        case ir::IRNodeType::IfThenElse: {
            const ir::IfThenElse *op = s.as<ir::IfThenElse>();
            const Expr c = known(op->condition);
            if (ir::is_false(c)) {
                walk(op->else_case);
                return;
            }
            if (!ir::is_true(c)) result.exact = false;
            walk(op->then_case);
            return;
        }
        case ir::IRNodeType::For: {
            const ir::For *op = s.as<ir::For>();
            // A host loop that launches nothing moves no kernel's bytes, however long it runs.
            bool launches = false;
            ir::visit_each<ir::Call>(op->body, [&](const ir::Call *c) {
                launches = launches || c->is_intrinsic(Intrinsic::gpu_launch);
            });
            if (!launches) return;
            const auto min = constant(op->min), extent = constant(op->extent);
            user_assert(min && extent)
                << "The dataflow report cannot find how many times the host loop " << op->name
                << " runs at these sizes (its bounds depend on data).";
            host_iterations += std::max<int64_t>(*extent, 0);
            user_assert(host_iterations <= 100000)
                << "The dataflow report walks the host loops that launch kernels one iteration "
                << "at a time; loop " << op->name << " runs " << *extent << " times, more "
                << "than the report follows (100000 in all). Launch the kernels from fewer "
                << "host loop iterations (compute the Funcs at the root or at a GPU loop).";
            for (int64_t i = 0; i < *extent; i++) {
                values[op->name] = ir::make_const(op->min.type(), *min + i);
                walk(op->body);
            }
            values.erase(op->name);
            return;
        }
        case ir::IRNodeType::Evaluate: {
            const ir::Call *call = s.as<ir::Evaluate>()->value.as<ir::Call>();
            if (call && call->is_intrinsic(Intrinsic::gpu_launch)) launch(call);
            return;
        }
        default:
            return; // host computation, allocation and copies move no kernel's bytes
        }
    }

    void launch(const ir::Call *call) {
        StaticLaunch l;
        l.kernel = int(ir::as_const_int(call->args[0]).value_or(-1));
        internal_assert(l.kernel >= 0 && size_t(l.kernel) < p.kernels.size())
            << "report: launch of an unknown kernel";
        const LoweredKernel &k = p.kernels[size_t(l.kernel)];
        for (int d = 0; d < 3; d++) {
            const auto n = constant(call->args[size_t(1 + d)]);
            user_assert(n) << "The dataflow report cannot find the grid of kernel " << k.name
                           << " at these sizes: " << known(call->args[size_t(1 + d)]) << ".";
            l.grid[size_t(d)] = *n;
        }
        // As the runtime does: a grid without blocks launches nothing, and one past the
        // limits of y and z fails.
        if (l.grid[0] <= 0 || l.grid[1] <= 0 || l.grid[2] <= 0) return;
        user_assert(l.grid[1] <= 65535 && l.grid[2] <= 65535)
            << "The dataflow report cannot use these sizes: kernel " << k.name
            << " would need a grid of " << l.grid[0] << " x " << l.grid[1] << " x " << l.grid[2]
            << " blocks, and the y and z dimensions allow at most 65535. Map the larger loop "
            << "onto the innermost block dimension.";
        internal_assert(call->args.size() == 4 + k.args.size()) << "report: launch arguments";
        for (size_t i = 0; i < k.args.size(); i++) {
            if (k.args[i].is_buffer) continue;
            const Expr v = known(call->args[4 + i]);
            user_assert(ir::is_const(v))
                << "The dataflow report needs the value of " << k.args[i].name << " (kernel "
                << k.name << "): give it with the report's scalar values.";
            l.scalars[k.args[i].name] = v;
        }
        result.launches.push_back(std::move(l));
    }
};

// ---- One kernel ----

// The names the counter gives the block and thread indices.
std::string block_var(int d) {
    return std::string("__report.block.") + "xyz"[d];
}
std::string thread_var(int d) {
    return std::string("__report.thread.") + "xyz"[d];
}

// The kernel body with its block, thread and lane indices as variables.
class IndicesAsVariables : public ir::IRMutator {
public:
    explicit IndicesAsVariables(const std::array<int, 3> &threads) : threads(threads) {}

private:
    using IRMutator::visit;
    std::array<int, 3> threads;

    Expr visit(const ir::Call *op) override {
        auto dim = [&] { return int(ir::as_const_int(op->args[0]).value_or(0)); };
        if (op->is_intrinsic(Intrinsic::gpu_block_index))
            return ir::Variable::make(ir::Int(32), block_var(dim()));
        if (op->is_intrinsic(Intrinsic::gpu_thread_index))
            return ir::Variable::make(ir::Int(32), thread_var(dim()));
        if (op->is_intrinsic(Intrinsic::gpu_lane_index)) {
            Expr linear =
                ir::Variable::make(ir::Int(32), thread_var(0)) +
                ir::Variable::make(ir::Int(32), thread_var(1)) * Expr(threads[0]) +
                ir::Variable::make(ir::Int(32), thread_var(2)) * Expr(threads[0] * threads[1]);
            return linear % Expr(32);
        }
        return IRMutator::visit(op);
    }
};

// A vector expression's lane i, for a lane-by-lane look at a predicate.
class LaneOf : public ir::IRMutator {
public:
    explicit LaneOf(int lane) : lane(lane) {}
    bool failed = false;

private:
    using IRMutator::visit;
    int lane;
    Expr visit(const ir::Ramp *op) override {
        return mutate(op->base) + mutate(op->stride) * Expr(lane);
    }
    Expr visit(const ir::Broadcast *op) override { return mutate(op->value); }
    Expr visit(const ir::Load *op) override {
        failed = true;
        return op;
    }
    Expr visit(const ir::Call *op) override {
        if (op->type.lanes > 1) failed = true;
        return op;
    }
    Expr visit(const ir::Cast *op) override {
        return ir::Cast::make(op->type.with_lanes(1), mutate(op->value));
    }
    Expr visit(const ir::Variable *op) override {
        if (op->type.lanes > 1) failed = true;
        return op;
    }
};

// An expression without the hints code generation reads (likely, alignment_hint), whose
// values are their first arguments.
class StripHints : public ir::IRMutator {
    using IRMutator::visit;
    Expr visit(const ir::Call *op) override {
        if (op->is_intrinsic(Intrinsic::likely) || op->is_intrinsic(Intrinsic::alignment_hint))
            return mutate(op->args[0]);
        return IRMutator::visit(op);
    }
};

// Raised to the loop whose variable is to be split (its depth in the ranges).
struct SplitRequest {
    size_t depth;
};

// Counts of a region of the kernel (per buffer: bytes loaded, bytes stored).
struct Counts {
    std::vector<std::array<int64_t, 2>> bytes;
    int64_t flops = 0;
    int64_t mma_lane_flops = 0; // 2 m n k per lane that takes part in an mma
    bool overflow = false;      // a count passed INT64_MAX (the counts are then meaningless)

    explicit Counts(size_t buffers) : bytes(buffers, {{0, 0}}) {}
    void add(const Counts &o, int64_t times) {
        overflow = overflow || o.overflow;
        for (size_t i = 0; i < bytes.size(); i++) {
            add_to(bytes[i][0], o.bytes[i][0], times);
            add_to(bytes[i][1], o.bytes[i][1], times);
        }
        add_to(flops, o.flops, times);
        add_to(mma_lane_flops, o.mma_lane_flops, times);
    }
    // count += value * times, noting an overflow.
    void add_to(int64_t &count, int64_t value, int64_t times = 1) {
        int64_t product = 0;
        overflow = overflow || __builtin_mul_overflow(value, times, &product) ||
                   __builtin_add_overflow(count, product, &count);
    }
};

class KernelCounter {
public:
    KernelCounter(const LoweredKernel &k, const StaticLaunch &launch,
                  const std::map<std::string, std::vector<aicf_dim_t>> &shapes)
        : k(k) {
        for (size_t i = 0; i < k.args.size(); i++) {
            if (!k.args[i].is_buffer) continue;
            BufferCost b;
            b.name = k.args[i].name;
            b.element_bytes = k.args[i].type.bytes();
            buffer_index[b.name] = cost.buffers.size();
            auto shape = shapes.find(b.name);
            strides.push_back(shape == shapes.end() ? std::vector<int64_t>()
                                                    : nested_strides(shape->second));
            cost.buffers.push_back(b);
        }
        body = IndicesAsVariables(k.threads).mutate(ir::substitute(launch.scalars, k.body));
        grid = launch.grid;
    }

    KernelCost run() {
        // The blocks, then the threads of a block, as loops around the body (outermost first).
        std::vector<std::pair<std::string, int64_t>> loops;
        for (int d = 2; d >= 0; d--)
            loops.emplace_back(block_var(d), grid[size_t(d)]);
        for (int d = 2; d >= 0; d--)
            loops.emplace_back(thread_var(d), int64_t(k.threads[size_t(d)]));
        Counts c = nest(loops, 0);
        user_assert(!c.overflow) << "Kernel " << k.name
                                 << " asks for more than 2^63 - 1 bytes of a buffer, or does "
                                 << "more than 2^63 - 1 flops, at these sizes: no count holds "
                                    "them. Count smaller sizes.";
        for (size_t i = 0; i < cost.buffers.size(); i++) {
            cost.buffers[i].bytes_loaded = c.bytes[i][0];
            cost.buffers[i].bytes_stored = c.bytes[i][1];
        }
        cost.flops = c.flops;
        cost.tensor_flops = c.mma_lane_flops / 32;
        return cost;
    }

private:
    struct Range {
        std::string var;
        int64_t lo, hi;
    };

    const LoweredKernel &k;
    Stmt body;
    std::array<int64_t, 3> grid{};
    std::map<std::string, size_t> buffer_index;
    // Per buffer, its strides from the largest, where its dimensions nest (each stride at
    // least the span of those inside it), so that an element's coordinates follow from its
    // offset by division; empty otherwise, or for one dimension.
    std::vector<std::vector<int64_t>> strides;

    static std::vector<int64_t> nested_strides(std::vector<aicf_dim_t> dims) {
        dims.erase(std::remove_if(dims.begin(), dims.end(),
                                  [](const aicf_dim_t &d) { return d.extent <= 1; }),
                   dims.end());
        if (dims.size() < 2) return {};
        std::sort(dims.begin(), dims.end(),
                  [](const aicf_dim_t &a, const aicf_dim_t &b) { return a.stride > b.stride; });
        std::vector<int64_t> result;
        for (size_t d = 0; d < dims.size(); d++) {
            if (dims[d].stride <= 0) return {};
            if (d + 1 < dims.size() &&
                int64_t(dims[d].stride) < int64_t(dims[d + 1].stride) * dims[d + 1].extent)
                return {};
            result.push_back(dims[d].stride);
        }
        return result;
    }
    KernelCost cost;
    std::vector<Range> ranges;                      // the loops around the point, outermost first
    std::vector<std::pair<std::string, Expr>> lets; // in scope, outermost first
    // Splits made so far. Past the budget, a condition that is not the same over the ranges
    // (one that varies point by point, as (x + y) % 3 == 0 does) is no longer split but taken
    // as true, an upper bound: the count takes seconds at most, at any size. Loop bounds are
    // split regardless.
    int64_t splits = 0;
    static constexpr int64_t split_budget = int64_t(1) << 17;

    Counts nest(const std::vector<std::pair<std::string, int64_t>> &loops, size_t i) {
        if (i == loops.size()) return stmt(body);
        return loop(loops[i].first, 0, loops[i].second - 1, [&] { return nest(loops, i + 1); });
    }

    // The counts of body() summed over var in [lo, hi].
    template <typename Body>
    Counts loop(const std::string &var, int64_t lo, int64_t hi, Body body) {
        Counts total(cost.buffers.size());
        if (hi < lo) return total;
        const size_t depth = ranges.size(), scope = lets.size();
        ranges.push_back({var, lo, hi});
        try {
            Counts c = body();
            ranges.resize(depth);
            total.add(c, hi - lo + 1);
            return total;
        } catch (const SplitRequest &r) {
            ranges.resize(depth);
            lets.resize(scope);
            if (r.depth != depth) throw;
        }
        splits++;
        const int64_t mid = lo + (hi - lo) / 2;
        total.add(loop(var, lo, mid, body), 1);
        total.add(loop(var, mid + 1, hi, body), 1);
        return total;
    }

    // e with the lets in scope that it uses substituted, and every loop variable that has one
    // value here replaced by it.
    Expr at_point(const Expr &e) const {
        Expr r = e;
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            if (ir::uses_var(r, it->first)) r = ir::substitute(it->first, it->second, r);
        }
        std::map<std::string, Expr> points;
        for (const Range &g : ranges) {
            if (g.lo == g.hi) points[g.var] = ir::make_const(ir::Int(32), g.lo);
        }
        return ir::simplify(StripHints().mutate(ir::substitute(points, r)));
    }

    ir::Scope<ir::Interval> range_scope() const {
        ir::Scope<ir::Interval> scope;
        for (const Range &g : ranges) {
            if (g.lo != g.hi)
                scope.push(g.var, ir::Interval(ir::make_const(ir::Int(32), g.lo),
                                               ir::make_const(ir::Int(32), g.hi)));
        }
        return scope;
    }

    // Asks for a split of the outermost loop with more than one value that e uses; returns
    // when there is none (e depends on data).
    void split_for(const Expr &e) const {
        for (size_t d = 0; d < ranges.size(); d++) {
            if (ranges[d].lo != ranges[d].hi && ir::uses_var(e, ranges[d].var))
                throw SplitRequest{d};
        }
    }

    // Whether e reads memory or another lane (a value the counter does not know).
    static bool reads_data(const Expr &e) {
        bool found = false;
        ir::visit_each<ir::Load>(e, [&](const ir::Load *) { found = true; });
        ir::visit_each<ir::Call>(e, [&](const ir::Call *c) {
            found = found || c->call_type != ir::Call::PureIntrinsic;
        });
        return found;
    }

    // The value of an integer or boolean scalar that must be the same over the ranges (a
    // condition, a loop bound, a copy length); nullopt where it depends on data. A condition
    // (`bounded`) may also be left undecided past the split budget: the caller then counts
    // it as true.
    std::optional<int64_t> uniform(const Expr &e, bool bounded = true) {
        const Expr v = at_point(e);
        if (auto c = ir::as_const_int(v)) return c;
        if (ir::is_true(v)) return 1;
        if (ir::is_false(v)) return 0;
        const ir::Scope<ir::Interval> scope = range_scope();
        if (v.type().is_bool()) {
            if (ir::can_prove(v, scope)) return 1;
            if (ir::can_prove(!v, scope)) return 0;
            if (reads_data(v)) {
                // A guard and a test of data (x < n && in[x] > 0): false where a conjunct
                // that reads no data is; otherwise the data decides, taken as true. Splitting
                // decides only the conjuncts without data.
                for (const Expr &part : ir::conjuncts(v)) {
                    if (reads_data(part)) continue;
                    if (ir::can_prove(!part, scope)) return 0;
                    if (!ir::can_prove(part, scope) && (!bounded || splits < split_budget))
                        split_for(part);
                }
                cost.exact = false;
                return std::nullopt;
            }
        } else {
            const ir::Interval b = ir::bounds_of_expr_in_scope_with_remainders(v, scope);
            const auto lo = b.is_bounded() ? ir::as_const_int(ir::simplify(b.min)) : std::nullopt;
            const auto hi = b.is_bounded() ? ir::as_const_int(ir::simplify(b.max)) : std::nullopt;
            if (lo && hi && *lo == *hi) return lo;
        }
        if (!bounded || splits < split_budget) split_for(v);
        cost.exact = false;
        return std::nullopt;
    }

    // The lanes of a predicate that are true over the ranges.
    int64_t true_lanes(const Expr &predicate) {
        if (!predicate.defined()) return 1;
        const int lanes = predicate.type().lanes;
        if (ir::is_true(predicate)) return lanes;
        if (lanes == 1) return uniform(predicate).value_or(1);
        const Expr v = at_point(predicate);
        const ir::Scope<ir::Interval> scope = range_scope();
        if (ir::can_prove(v, scope)) return lanes;
        if (ir::can_prove(!v, scope)) return 0;
        if (splits < split_budget) split_for(v);
        int64_t count = 0;
        for (int i = 0; i < lanes; i++) {
            LaneOf lane(i);
            const Expr one = ir::simplify(lane.mutate(v));
            if (lane.failed || !ir::is_const(one)) {
                cost.exact = false;
                count++;
            } else {
                count += ir::is_true(one);
            }
        }
        return count;
    }

    // The span of elements an index reaches over the ranges (both ends when known), and the
    // box of their coordinates where the buffer's strides are known.
    void reach(BufferCost &b, const std::vector<int64_t> &nested, const Expr &index, bool store) {
        const Expr v = at_point(index);
        const ir::Scope<ir::Interval> scope = range_scope();
        std::vector<std::pair<int64_t, int64_t>> &bbox = store ? b.store_box : b.load_box;
        const bool first = store ? b.store_hi < b.store_lo : b.load_hi < b.load_lo;
        bool boxed = !nested.empty() && (first || !bbox.empty());
        std::vector<std::pair<int64_t, int64_t>> box(
            nested.size(),
            {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()});
        // (The first lane's bounds start lo and hi; no lane, and known stays true with them
        // at their starting values, is not a case: lanes >= 1.)
        int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
        bool known = true;
        for (int i = 0; i < v.type().lanes && known; i++) {
            LaneOf lane(i);
            const Expr one = v.type().lanes == 1 ? v : ir::simplify(lane.mutate(v));
            const ir::Interval r = ir::bounds_of_expr_in_scope_with_remainders(one, scope);
            const auto l = r.is_bounded() ? ir::as_const_int(ir::simplify(r.min)) : std::nullopt;
            const auto h = r.is_bounded() ? ir::as_const_int(ir::simplify(r.max)) : std::nullopt;
            known = !lane.failed && l && h;
            if (!known) break;
            lo = std::min(lo, *l);
            hi = std::max(hi, *h);
            // Each coordinate: the offset within the enclosing dimension over the stride.
            Expr rest = one;
            for (size_t d = 0; d < nested.size() && boxed; d++) {
                const Expr stride = ir::make_const(one.type(), nested[d]);
                const Expr coordinate = ir::simplify(ir::Div::make(rest, stride));
                const ir::Interval c =
                    ir::bounds_of_expr_in_scope_with_remainders(coordinate, scope);
                const auto cl =
                    c.is_bounded() ? ir::as_const_int(ir::simplify(c.min)) : std::nullopt;
                const auto ch =
                    c.is_bounded() ? ir::as_const_int(ir::simplify(c.max)) : std::nullopt;
                boxed = cl && ch;
                if (!boxed) break;
                box[d] = {std::min(box[d].first, *cl), std::max(box[d].second, *ch)};
                rest = ir::simplify(ir::Mod::make(rest, stride));
            }
        }
        if (!known || !boxed) {
            bbox.clear();
        } else if (first) {
            bbox = box;
        } else {
            for (size_t d = 0; d < box.size(); d++)
                bbox[d] = {std::min(bbox[d].first, box[d].first),
                           std::max(bbox[d].second, box[d].second)};
        }
        int64_t &blo = store ? b.store_lo : b.load_lo, &bhi = store ? b.store_hi : b.load_hi;
        if (!known) {
            // Unknown: the whole buffer (the report clamps it to the buffer's size).
            blo = std::numeric_limits<int64_t>::min() / 4;
            bhi = std::numeric_limits<int64_t>::max() / 4;
            return;
        }
        if (bhi < blo) {
            blo = lo;
            bhi = hi;
            return;
        }
        blo = std::min(blo, lo);
        bhi = std::max(bhi, hi);
    }

    // A global access of `lanes` elements, `active` of them enabled.
    void access(Counts &c, const std::string &name, const Expr &index, int64_t active, bool store) {
        auto it = buffer_index.find(name);
        if (it == buffer_index.end()) return; // shared memory or registers
        BufferCost &b = cost.buffers[it->second];
        c.add_to(c.bytes[it->second][store], active, b.element_bytes);
        if (active > 0) reach(b, strides[it->second], index, store);
    }

    // Counts the operations of an expression, as the simulator evaluates it (both values of
    // a select, every operand).
    class ExprCounter : public ir::IRVisitor {
    public:
        ExprCounter(KernelCounter &kc, Counts &c) : kc(kc), c(c) {}

    private:
        using IRVisitor::visit;
        KernelCounter &kc;
        Counts &c;

        void flops(const Expr &e) { c.add_to(c.flops, int64_t(flops_per_lane(e)), e.type().lanes); }

#define AICF_COUNT_BINARY(N)                                                                       \
    void visit(const ir::N *op) override {                                                         \
        flops(Expr(op));                                                                           \
        IRVisitor::visit(op);                                                                      \
    }
        AICF_COUNT_BINARY(Add)
        AICF_COUNT_BINARY(Sub)
        AICF_COUNT_BINARY(Mul)
        AICF_COUNT_BINARY(Div)
        AICF_COUNT_BINARY(Mod)
        AICF_COUNT_BINARY(Min)
        AICF_COUNT_BINARY(Max)
        AICF_COUNT_BINARY(EQ)
        AICF_COUNT_BINARY(NE)
        AICF_COUNT_BINARY(LT)
        AICF_COUNT_BINARY(LE)
        AICF_COUNT_BINARY(GT)
        AICF_COUNT_BINARY(GE)
#undef AICF_COUNT_BINARY

        void visit(const ir::Load *op) override {
            IRVisitor::visit(op);
            kc.access(c, op->name, op->index, kc.true_lanes(op->predicate), false);
        }
        void visit(const ir::Let *op) override {
            op->value.accept(this);
            kc.lets.emplace_back(op->name, op->value);
            op->body.accept(this);
            kc.lets.pop_back();
        }
        void visit(const ir::Call *op) override {
            flops(Expr(op));
            if (op->is_intrinsic(Intrinsic::gpu_mma)) {
                const auto shape =
                    mma_shape(op->args[0].type(), op->args[1].type(), op->args[2].type());
                internal_assert(shape) << "report: gpu_mma of unknown shape";
                c.add_to(c.mma_lane_flops, 2 * int64_t(shape->m) * shape->n * shape->k);
            }
            // wgmma: a warpgroup's 128 threads share one, a quarter of it per 32 lanes.
            if (op->is_intrinsic(Intrinsic::gpu_wgmma)) {
                const int n = op->type.lanes * 2;
                c.add_to(c.mma_lane_flops, 2 * int64_t(kWgmmaM) * n * kWgmmaK / 4);
            }
            IRVisitor::visit(op);
        }
    };

    void expr(Counts &c, const Expr &e) {
        if (!e.defined()) return;
        ExprCounter counter(*this, c);
        e.accept(&counter);
    }

    Counts stmt(const Stmt &s) {
        Counts c(cost.buffers.size());
        add_stmt(c, s);
        return c;
    }

    void add_stmt(Counts &c, const Stmt &s) {
        if (!s.defined()) return;
        switch (s.node_type()) {
        case ir::IRNodeType::Block: {
            const ir::Block *op = s.as<ir::Block>();
            add_stmt(c, op->first);
            add_stmt(c, op->rest);
            return;
        }
        case ir::IRNodeType::ProducerConsumer:
            add_stmt(c, s.as<ir::ProducerConsumer>()->body);
            return;
        case ir::IRNodeType::Allocate:
            add_stmt(c, s.as<ir::Allocate>()->body);
            return;
        case ir::IRNodeType::LetStmt: {
            const ir::LetStmt *op = s.as<ir::LetStmt>();
            expr(c, op->value);
            lets.emplace_back(op->name, op->value);
            add_stmt(c, op->body);
            lets.pop_back();
            return;
        }
        case ir::IRNodeType::AssertStmt:
            expr(c, s.as<ir::AssertStmt>()->condition);
            return;
        case ir::IRNodeType::IfThenElse: {
            const ir::IfThenElse *op = s.as<ir::IfThenElse>();
            expr(c, op->condition);
            const auto taken = uniform(op->condition);
            if (!taken || *taken) add_stmt(c, op->then_case);
            if (!taken || !*taken) add_stmt(c, op->else_case);
            return;
        }
        case ir::IRNodeType::For: {
            const ir::For *op = s.as<ir::For>();
            expr(c, op->min);
            expr(c, op->extent);
            const auto min = uniform(op->min, false), extent = uniform(op->extent, false);
            user_assert(min && extent)
                << "The dataflow report cannot count kernel " << k.name << ": the bounds of "
                << "its loop " << op->name << " depend on data.";
            const size_t scope = lets.size();
            c.add(loop(op->name, *min, *min + *extent - 1,
                       [&] {
                           lets.resize(scope);
                           return stmt(op->body);
                       }),
                  1);
            return;
        }
        case ir::IRNodeType::Store: {
            const ir::Store *op = s.as<ir::Store>();
            const ir::Call *atomic = op->value.as<ir::Call>();
            if (atomic && atomic->is_intrinsic(Intrinsic::atomic_update)) {
                // A read-modify-write of one element: the operand and the index, and for
                // floats the operation itself (add, multiply, min or max), a flop.
                expr(c, atomic->args[1]);
                expr(c, op->index);
                const ir::Type t = op->value.type();
                if (t.is_float() || t.is_bfloat()) c.add_to(c.flops, t.lanes);
                access(c, op->name, op->index, 1, false);
                access(c, op->name, op->index, 1, true);
                return;
            }
            expr(c, op->value);
            expr(c, op->index);
            if (!ir::is_true(op->predicate)) expr(c, op->predicate);
            access(c, op->name, op->index, true_lanes(op->predicate), true);
            return;
        }
        case ir::IRNodeType::Evaluate: {
            const Expr &value = s.as<ir::Evaluate>()->value;
            const ir::Call *call = value.as<ir::Call>();
            if (call && call->is_intrinsic(Intrinsic::gpu_cp_async)) {
                const AsyncCopyCall copy = async_copy_parts(call);
                expr(c, copy.dst_index);
                expr(c, copy.src_index);
                expr(c, copy.valid);
                const auto valid = uniform(copy.valid);
                // (A copy of one element, 4 bytes, reads at its index.)
                const Expr elements =
                    copy.type.lanes == 1
                        ? copy.src_index
                        : ir::Ramp::make(copy.src_index, ir::make_one(copy.src_index.type()),
                                         copy.type.lanes);
                access(c, copy.src, elements, valid.value_or(copy.type.lanes), false);
                return;
            }
            expr(c, value);
            return;
        }
        default:
            internal_error << "report: kernel " << k.name << " holds a statement the counter "
                           << "does not know:\n"
                           << s;
        }
    }
};

} // namespace

StaticRun static_launches(const LoweredPipeline &p, const ConcreteArguments &args) {
    for (const Argument &a : p.args) {
        if (a.is_buffer) {
            user_assert(args.buffers.count(a.name))
                << "The dataflow report needs the shape of buffer " << a.name << ".";
        } else {
            user_assert(args.scalars.count(a.name))
                << "The dataflow report needs the value of " << a.name << ".";
        }
    }
    return HostWalk(p, args).run(p.body);
}

KernelCost static_kernel_cost(const LoweredKernel &k, const StaticLaunch &launch,
                              const std::map<std::string, std::vector<aicf_dim_t>> &shapes) {
    return KernelCounter(k, launch, shapes).run();
}

} // namespace lowering
} // namespace aicf
