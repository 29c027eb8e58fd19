#include "lowering/RegisterTiles.h"

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
#include "lowering/CrossThreadReductions.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Stand-ins for the thread index while boxes are computed (interval analysis treats free
// variables as symbols).
std::string thread_symbol(int d) {
    return std::string("__thread_index.") + "xyz"[d];
}

bool uses_thread(const Expr &e) {
    for (int d = 0; d < 3; d++)
        if (e.defined() && uses_var(e, thread_symbol(d))) return true;
    return false;
}

// How far e moves when the thread index in dimension d grows by one, where that is a
// constant.
std::optional<int64_t> step_per_thread(const Expr &e, int d) {
    return step_along(e, thread_symbol(d));
}

// Where a thread's reads move at another rate than its writes as the thread index grows (a
// read at x / 2 of a Func computed at x): the dimension of the thread index, and both steps.
struct ScaleMismatch {
    int thread_dim = -1;
    int64_t read_step = 0, write_step = 0;
};
std::optional<ScaleMismatch> scale_mismatch(const Interval &read, const Interval &write) {
    for (int d = 0; d < 3; d++) {
        auto r = step_per_thread(read.min, d), w = step_per_thread(write.min, d);
        if (r && w && *r != *w) return ScaleMismatch{d, *r, *w};
    }
    return std::nullopt;
}

struct Access {
    bool write = false;
    bool of_one_value = false; // a write every thread of the loops around makes alike
    std::vector<Interval> box; // per dimension, in terms of the thread-index symbols
    std::string text;
};

// The boxes of a Func one thread touches, at each access.
class Accesses : public IRVisitor {
public:
    // `outer_lets`: the kernel's lets around the storage, to bound loop counts with.
    Accesses(const std::string &func, const std::vector<std::pair<std::string, Expr>> &outer_lets)
        : func(func), outer_lets(outer_lets) {}
    std::vector<Access> accesses;
    std::string outside_threads; // an access made outside thread loops, if any
    // Loops of the whole block inside the storage (outside thread loops): every thread runs
    // each iteration, and the thread's part is taken at one iteration.
    std::set<std::string> block_loops;
    // Whether every access, inside thread loops or not, touches points that do not depend on
    // the thread, and every write inside thread loops is the result of a cross-thread
    // reduction (which all its threads hold): then each thread can hold the whole Func.
    bool thread_invariant = true;

private:
    const std::string &func;
    const std::vector<std::pair<std::string, Expr>> &outer_lets;
    Scope<Interval> scope;                                // loops and lets inside thread loops
    std::map<std::string, Expr> thread_vars;              // thread loop variable -> min + symbol
    std::vector<std::pair<std::string, Expr>> block_lets; // lets outside thread loops
    int depth = 0;
    int reductions = 0; // cross-thread reduction loops around

    using IRVisitor::visit;

    Expr in_thread_terms(Expr e) const {
        return substitute_lets(block_lets, substitute(thread_vars, e));
    }

    void visit(const For *op) override {
        if (op->for_type == ForType::GPUThread) {
            thread_vars[op->name] = Add::make(
                in_thread_terms(op->min), Variable::make(Int(32), thread_symbol(int(op->gpu_dim))));
            const bool reduction = is_cross_thread_reduction(op);
            depth++;
            reductions += reduction;
            op->body.accept(this);
            reductions -= reduction;
            depth--;
            thread_vars.erase(op->name);
            return;
        }
        if (depth == 0) {
            // A loop of the whole block: its variable is one value. Where it runs at most once
            // (the outer loop of a split whose tile covers the whole region, its count not a
            // constant where the region's is not), that value is its min: the stages that
            // write and read the Func then name the same point.
            op->min.accept(this);
            op->extent.accept(this);
            auto runs = constant_upper_bound(
                simplify(substitute_lets(outer_lets, in_thread_terms(op->extent))));
            if (runs && *runs <= 1) {
                block_lets.emplace_back(op->name, op->min);
                op->body.accept(this);
                block_lets.pop_back();
                return;
            }
            block_loops.insert(op->name);
            op->body.accept(this);
            return;
        }
        Expr min = in_thread_terms(op->min);
        Expr max =
            simplify(Sub::make(Add::make(min, in_thread_terms(op->extent)), make_one(Int(32))));
        ScopedBinding<Interval> bind(scope, op->name, Interval(min, max));
        op->body.accept(this);
    }

    void visit(const LetStmt *op) override {
        op->value.accept(this); // the value may read the Func (a tensor-core operand does)
        if (depth == 0) {
            block_lets.emplace_back(op->name, op->value);
            op->body.accept(this);
            block_lets.pop_back();
            return;
        }
        Interval i = bounds_of_expr_in_scope(in_thread_terms(op->value), scope);
        ScopedBinding<Interval> bind(scope, op->name, i);
        op->body.accept(this);
    }

    void record(bool write, const std::vector<Expr> &args, const std::string &text) {
        for (const Expr &arg : args)
            thread_invariant = thread_invariant && !uses_thread(in_thread_terms(arg));
        if (write && depth > 0 && reductions == 0) thread_invariant = false;
        if (depth == 0) {
            if (outside_threads.empty()) outside_threads = text;
            return;
        }
        Access a;
        a.write = write;
        a.text = text;
        for (const Expr &arg : args) {
            Interval i = bounds_of_expr_in_scope(in_thread_terms(arg), scope);
            a.box.emplace_back(i.has_lower_bound() ? simplify(i.min) : Expr(),
                               i.has_upper_bound() ? simplify(i.max) : Expr());
        }
        accesses.push_back(a);
    }

    void visit(const Provide *op) override {
        IRVisitor::visit(op);
        if (op->name == func) record(true, op->args, statement_text(Stmt(op)));
    }

    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Func && op->name == func)
            record(false, op->args, to_string(Expr(op)));
    }
};

// Replaces the thread-index symbols by the thread index.
Expr with_thread_index(Expr e) {
    for (int d = 0; d < 3; d++) {
        e = substitute(
            thread_symbol(d),
            Call::make(Int(32), Intrinsic::gpu_thread_index, {make_const(Int(32), int64_t(d))}), e);
    }
    return e;
}

class RegisterTiles : public IRMutator {
    int thread_depth = 0;
    std::string block_loop;                                // the innermost enclosing block loop
    std::vector<std::pair<std::string, Expr>> kernel_lets; // lets around, inside the kernel

    using IRMutator::visit;

    // e with the kernel's lets around the Realize expanded, for comparing positions.
    Expr expanded(const Expr &e) const { return substitute_lets(kernel_lets, e); }
    Interval expanded_interval(const Interval &i) const {
        return Interval(expanded(i.min), expanded(i.max));
    }

    Stmt visit(const LetStmt *op) override {
        if (block_loop.empty()) return IRMutator::visit(op);
        kernel_lets.emplace_back(op->name, op->value);
        Stmt body = mutate(op->body);
        kernel_lets.pop_back();
        return LetStmt::make(op->name, op->value, body);
    }

    Stmt visit(const For *op) override {
        bool thread = op->for_type == ForType::GPUThread;
        std::string saved = block_loop;
        if (op->for_type == ForType::GPUBlock) block_loop = op->name;
        thread_depth += thread;
        Stmt s = IRMutator::visit(op);
        thread_depth -= thread;
        block_loop = saved;
        return s;
    }

    // Why a read of a Func in registers reaches outside its thread's part in one dimension,
    // said in terms of the thread's own points rather than the region symbols: how many
    // points before or after them it reads, where that is a constant; otherwise what the
    // distance depends on.
    std::string reach_explained(const Interval &read, const Interval &written, size_t d,
                                const std::set<std::string> &block_loops,
                                const std::string &f) const {
        auto offset = [&](const Expr &a, const Expr &b) {
            return simplify(expanded(Sub::make(a, b)));
        };
        Expr before = offset(written.min, read.min), after = offset(read.max, written.max);
        auto b = as_const_int(before), e = as_const_int(after);
        std::ostringstream os;
        if (b && e) {
            auto points = [](int64_t n) {
                return std::to_string(n) + (n == 1 ? " point " : " points ");
            };
            os << " reads another thread's part in dimension " << d << " (it reads";
            if (*b > 0) os << " " << points(*b) << "before";
            if (*b > 0 && *e > 0) os << " and";
            if (*e > 0) os << " " << points(*e) << "after";
            os << " the points its thread computes there).";
            return os.str();
        }
        std::vector<std::string> loops;
        for (const Expr &side : {before, after})
            for (const std::string &n : free_vars(side))
                if (block_loops.count(n) && std::find(loops.begin(), loops.end(), n) == loops.end())
                    loops.push_back(n);
        if (!loops.empty()) {
            os << " reads, in dimension " << d << ", points its thread may not hold: its "
               << "registers hold the points it computes in one iteration of ";
            for (size_t i = 0; i < loops.size(); i++)
                os << (i ? " and of " : "") << "the loop " << loop_for_users(loops[i]);
            os << ", which every thread runs (" << (loops.size() == 1 ? "it is" : "they are")
               << " not mapped onto threads) and which " << (loops.size() == 1 ? "runs" : "run")
               << " more than once where the region of " << f
               << " its consumers read (a stencil's reads widen it) is larger than one tile "
               << "of its threads. Make one tile of " << f << "'s threads cover that region, "
               << "with the loops that split it mapped onto threads.";
            return os.str();
        }
        os << " reads another thread's part in dimension " << d << ": how far depends on the "
           << "tile, as where it is read at another scale (x / 2 of a Func computed at x) or "
           << "where the splits of " << f << " and of its consumers treat their tails "
           << "differently (one guards it with GuardWithIf, the other shifts it inwards or rounds "
           << "it up; Auto guards a split whose outer loop runs on threads, except for a Func in "
           << "registers): give them the same tail, RoundUp on both or GuardWithIf on both.";
        return os.str();
    }

    Stmt visit(const Realize *op) override {
        if (op->memory_type != MemoryType::Register || thread_depth > 0 || block_loop.empty())
            return IRMutator::visit(op);
        const std::string &f = op->name;
        Accesses a(f, kernel_lets);
        op->body.accept(&a);
        // Small and the same in every thread (a row's statistics after a cross-thread
        // reduction): each thread holds all of it.
        if (a.thread_invariant) return IRMutator::visit(op);
        user_assert(a.outside_threads.empty())
            << "Func " << f << " is stored in registers at the GPU block loop "
            << loop_for_users(block_loop) << ", so each thread holds the part it computes, but "
            << with_user_loop_names(a.outside_threads)
            << " accesses it outside any thread loop. Map the loops of " << f
            << " and of its consumers onto threads (gpu_threads), or store it in GPUShared.";
        const Access *write = nullptr;
        for (const Access &x : a.accesses)
            if (x.write) {
                write = &x;
                break;
            }
        internal_assert(write) << "register tile " << f << " is never written";
        Region region;
        // Dimensions along which the thread does not choose its part: each thread holds the
        // whole region there, as allocated.
        std::vector<bool> whole(write->box.size());
        for (size_t d = 0; d < write->box.size(); d++) {
            const Interval &w = write->box[d];
            if (w.is_bounded() && !uses_thread(w.min) && !uses_thread(w.max)) {
                whole[d] = true;
                region.push_back(op->bounds[d]);
                continue;
            }
            auto extent =
                w.is_bounded() ? as_const_int(simplify(Sub::make(w.max, w.min))) : std::nullopt;
            user_assert(extent.has_value())
                << "Func " << f << " is stored in registers at the GPU block loop "
                << loop_for_users(block_loop)
                << ", so each thread holds the part it computes, but the part "
                << with_user_loop_names(write->text) << " computes in dimension " << d
                << " does not have a constant size. Split the "
                << "loops of " << f << " so that each thread computes a constant number of points.";
            region.emplace_back(with_thread_index(w.min), make_const(Int(32), *extent + 1));
        }
        for (const Access &x : a.accesses) {
            for (size_t d = 0; d < x.box.size(); d++) {
                if (whole[d]) continue;
                const Interval &w = write->box[d], &r = x.box[d];
                auto below = r.is_bounded()
                                 ? as_const_int(simplify(expanded(Sub::make(r.min, w.min))))
                                 : std::nullopt;
                auto above = r.is_bounded()
                                 ? as_const_int(simplify(expanded(Sub::make(w.max, r.max))))
                                 : std::nullopt;
                if (below && above && *below >= 0 && *above >= 0) continue;
                const auto mismatch =
                    r.is_bounded() ? scale_mismatch(expanded_interval(r), expanded_interval(w))
                                   : std::nullopt;
                user_assert(!mismatch)
                    << "Func " << f << " is stored in registers at the GPU block loop "
                    << loop_for_users(block_loop)
                    << ", so each thread holds only the part it computes, but "
                    << with_user_loop_names(x.text) << " reads it at another scale in dimension "
                    << d << ": from one thread to the next in "
                    << "xyz"[mismatch->thread_dim] << " the point read moves by "
                    << mismatch->read_step << " and the point computed by " << mismatch->write_step
                    << ", so threads read points other threads computed. Store " << f
                    << " in GPUShared (not a tensor-core accumulator, which lives in registers), "
                    << "or compute it where it is read (compute_at the consumer's innermost "
                    << "thread loop, or inline).";
                user_assert(false)
                    << "Func " << f << " is stored in registers at the GPU block loop "
                    << loop_for_users(block_loop)
                    << ", so each thread holds only the part it computes, but "
                    << with_user_loop_names(x.text) << reach_explained(r, w, d, a.block_loops, f)
                    << " Give " << f << " and its consumers the same thread mapping, or store " << f
                    << " in GPUShared (not a tensor-core accumulator, which lives "
                    << "in registers).";
            }
        }
        return Realize::make(op->name, op->types, op->memory_type, region, mutate(op->body));
    }
};

} // namespace

Stmt register_tiles(const Stmt &s) {
    return RegisterTiles().mutate(s);
}

} // namespace lowering
} // namespace aicf
