#include "lowering/UnrollLoops.h"
#include "dsl/LoopLimits.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Unrolled loops inside one another multiply their copies; past this many copies of a body,
// compiling takes minutes (4096 copies of a small body: about a minute in LLVM's code
// generation).
const int64_t max_copies = 4096;
// Nor more lanes than this in all: compile time grows faster than the lanes (a one-line
// pipeline unrolled around vectors of 64 lanes: 256 copies about 5 s, 1024 copies about a
// minute).
const int64_t max_lanes = 16384;

// The lanes of the widest vector a body computes: its vectorized loops, and its stores.
int64_t widest_vector(const Stmt &s) {
    int64_t lanes = 1;
    visit_each<For>(s, [&](const For *f) {
        auto e = as_const_int(f->extent);
        if (f->for_type == ForType::Vectorized && e) lanes = std::max(lanes, *e);
    });
    visit_each<Store>(
        s, [&](const Store *st) { lanes = std::max<int64_t>(lanes, st->value.type().lanes); });
    return lanes;
}

class UnrollLoops : public IRMutator {
public:
    explicit UnrollLoops(const std::map<std::string, Function> &env) : env(env) {}

private:
    const std::map<std::string, Function> &env;
    using IRMutator::visit;
    // The unrolled loops around, outermost first, and their extents (at least 1).
    std::vector<std::pair<std::string, int64_t>> around;
    // The lets around the current point, outermost first.
    std::vector<std::pair<std::string, Expr>> lets;

    Stmt visit(const LetStmt *op) override {
        lets.emplace_back(op->name, op->value);
        Stmt body = mutate(op->body);
        lets.pop_back();
        return body.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, op->value, body);
    }

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Unrolled) return IRMutator::visit(op);
        auto extent = as_const_int(op->extent);
        // An extent that varies but has a constant bound (a region of a few rows that a
        // guarded tail cuts short at the image's edge): that many copies, each guarded.
        const bool guarded = !extent.has_value();
        if (!extent) {
            // (Not a bound that only the type's range gives.)
            auto bound = constant_upper_bound(substitute_lets(lets, op->extent));
            if (bound && *bound <= kMaxUnroll) extent = std::max<int64_t>(*bound, 0);
        }
        if (!extent) {
            // The example in the user's own names where the loop is a variable of theirs.
            const LoopNameParts parts = parse_loop_name(op->name);
            // (A reduction variable keeps its dot: r.x.)
            const bool plain = !parts.func.empty() && !parts.var.empty();
            // bound() takes the Func's own dimensions, not the loops of splits or reductions.
            auto it = env.find(parts.func);
            const bool dimension =
                plain && it != env.end() &&
                std::count(it->second.args().begin(), it->second.args().end(), parts.var) > 0;
            const std::string bound_advice =
                dimension ? ". Where " + parts.var + " runs over a dimension of known size " +
                                "(three colour channels), " + parts.func + ".bound(" + parts.var +
                                ", 0, 3) makes the extent that constant."
                          : ".";
            user_error << "The loop " << loop_for_users(op->name)
                       << " is unrolled, but its extent (" << op->extent
                       << ") is not a constant. Split it by a constant factor and unroll the "
                       << "inner loop with a guarded tail, e.g. "
                       << (plain ? loop_stage_for_users(op->name) : "f") << ".unroll("
                       << (plain ? parts.var : "x")
                       << ", 4, TailStrategy::GuardWithIf): the default tail shifts the last "
                       << "piece inwards, which needs an extent of at least the factor"
                       << bound_advice;
        }
        user_assert(*extent <= kMaxUnroll)
            << "The loop " << loop_for_users(op->name) << " is unrolled, but its extent is "
            << *extent << ": the body would be copied " << *extent
            << " times. AICF unrolls at most " << kMaxUnroll
            << " iterations; split the loop and unroll the inner part.";
        int64_t copies = *extent;
        for (const auto &[name, n] : around)
            copies *= n;
        const int64_t lanes = copies * kMaxVectorLanes > max_lanes ? widest_vector(op->body) : 1;
        if (copies > max_copies || copies * lanes > max_lanes) {
            // "x of f", "y of f and x of f", "z of f, y of f, and x of f".
            std::string loops, counts;
            for (const auto &[name, n] : around) {
                loops += loop_for_users(name) + (around.size() > 1 ? ", " : " ");
                counts += std::to_string(n) + " x ";
            }
            const std::string vector =
                lanes > 1 ? " around a vector of " + std::to_string(lanes) + " lanes" : "";
            const std::string limit =
                copies > max_copies
                    ? ". AICF makes at most " + std::to_string(max_copies) +
                          " copies of a body; keep some of these loops rolled (or unroll a " +
                          "split of them)."
                    : ", " + std::to_string(copies * lanes) + " lanes in all. AICF compiles at " +
                          "most " + std::to_string(max_lanes) + " lanes of unrolled code (" +
                          std::to_string(max_lanes / lanes) + " copies of this body); keep " +
                          "some of these loops rolled, or vectorize by fewer lanes.";
            user_error << (around.empty() ? "The loop " : "The loops ") << loops
                       << (around.empty() ? "" : "and ") << loop_for_users(op->name)
                       << (around.empty() ? " is unrolled" : " are unrolled inside one another")
                       << vector << ", so the innermost body would be copied " << counts << *extent
                       << (around.empty() ? "" : " = " + std::to_string(copies)) << " times"
                       << limit;
        }
        around.emplace_back(op->name, std::max<int64_t>(*extent, 1));
        Stmt body = mutate(op->body);
        around.pop_back();
        std::vector<Stmt> unrolled;
        for (int64_t i = 0; i < *extent; i++) {
            Expr value = Add::make(op->min, make_const(op->min.type(), i));
            Stmt copy = substitute(op->name, value, body);
            if (guarded)
                copy =
                    IfThenElse::make(LT::make(make_const(op->extent.type(), i), op->extent), copy);
            unrolled.push_back(copy);
        }
        if (unrolled.empty()) return Evaluate::make(make_zero(Int(32)));
        return Block::make(unrolled);
    }
};

} // namespace

Stmt unroll_loops(const Stmt &s, const std::map<std::string, Function> &env) {
    return UnrollLoops(env).mutate(s);
}

} // namespace lowering
} // namespace aicf
