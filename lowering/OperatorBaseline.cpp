#include "lowering/OperatorBaseline.h"

#include "dsl/Func.h"
#include "dsl/Pipeline.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/Substitute.h"

#include <map>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Calls to the Funcs of the algorithm, pointed at their copies (weakly within a Func's own
// definitions, as Function::define does).
class PointAtCopies : public IRMutator {
public:
    PointAtCopies(const std::map<std::string, Function> &copies, const std::string &self)
        : copies(copies), self(self) {}

private:
    using IRMutator::visit;
    const std::map<std::string, Function> &copies;
    const std::string &self;

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (c->call_type != Call::Func) return e;
        auto it = copies.find(c->name);
        internal_assert(it != copies.end()) << "baseline: no copy of " << c->name;
        FunctionPtr target(it->second.get());
        if (c->name == self) target = target.as_weak();
        return Call::make_func(c->type, c->name, c->args, target, c->value_index);
    }
};

// Whether f only renames another Func or an input: f(x, y, ...) = g(x, y, ...).
bool is_rename(const Function &f) {
    if (f.has_update_definition() || f.outputs() != 1) return false;
    const Call *c = f.definition().values[0].as<Call>();
    if (!c || (c->call_type != Call::Func && c->call_type != Call::Image)) return false;
    if (c->type != f.output_types()[0] || c->args.size() != f.args().size()) return false;
    for (size_t i = 0; i < c->args.size(); i++) {
        const Variable *v = c->args[i].as<Variable>();
        if (!v || v->name != f.args()[i]) return false;
    }
    return true;
}

// The loops a stage has before any schedule: its reduction variables (innermost first),
// then the pure variables it writes at their own coordinate.
std::vector<Dim> unscheduled_dims(const Function &f, const Definition &d, bool pure) {
    std::vector<Dim> dims;
    if (pure) {
        for (const std::string &a : f.args())
            dims.push_back(Dim{a});
        return dims;
    }
    if (d.rdom.defined()) {
        for (const ReductionVariable &rv : d.rdom.domain()) {
            bool used = false;
            for (const Expr &e : d.args)
                used = used || uses_var(e, rv.var);
            for (const Expr &e : d.values)
                used = used || uses_var(e, rv.var);
            if (used) dims.push_back(Dim{rv.var, ForType::Serial, true});
        }
    }
    for (size_t i = 0; i < d.args.size(); i++) {
        const Variable *v = d.args[i].as<Variable>();
        if (v && v->name == f.args()[i]) dims.push_back(Dim{f.args()[i]});
    }
    return dims;
}

// One kernel per stage: its pure loops as one, in blocks of 256 threads, the threads past the
// end idle, as a framework's elementwise kernel flattens a tensor (any size is valid: the
// grid's x holds 2^31 - 1 blocks, where its y and z hold at most 65535).
template <typename Stage> void schedule_stage(Stage stage, const std::vector<Dim> &dims) {
    std::vector<Var> pure;
    for (const Dim &d : dims) {
        if (!d.is_rvar) pure.push_back(Var(d.var));
    }
    Var bx("bx"), tx("tx");
    if (pure.empty()) {
        stage.gpu_single_thread();
        return;
    }
    Var all = pure[0];
    for (size_t i = 1; i < pure.size(); i++) {
        Var fused(all.name() + "_" + pure[i].name());
        stage.fuse(all, pure[i], fused);
        all = fused;
    }
    stage.gpu_tile(all, bx, tx, 256, TailStrategy::GuardWithIf);
}

} // namespace

std::vector<Function> operator_by_operator(const std::vector<Function> &outputs) {
    const std::map<std::string, Function> env = detail::find_transitive_calls(outputs);
    std::set<std::string> output_names;
    for (const Function &o : outputs)
        output_names.insert(o.name());
    std::map<std::string, Function> copies;
    for (const auto &kv : env) {
        Function copy = kv.second.copy();
        copy.get()->wrappers.clear();
        // Only whole bounds carry over: they say where a Func is defined, wherever it is
        // computed. An extent from the first point needed (bound_extent) or an alignment
        // (align_bounds) shapes the tiles of the schedule, and at the root, where the region
        // is the whole tensor, such an extent would not cover what the consumers read.
        FuncSchedule plain;
        for (const RegionConstraint &c : kv.second.schedule().region_constraints)
            if (c.min.defined() && c.extent.defined()) plain.region_constraints.push_back(c);
        copy.schedule() = plain;
        for (int s = 0; s < copy.stages(); s++) {
            Definition &d = copy.stage(s);
            // An update rfactor split is the algorithm's update again: its intermediates are
            // the schedule's.
            if (d.as_written) d = Definition(*d.as_written);
            d.as_written = nullptr;
            d.schedule = StageSchedule();
            d.schedule.dims = unscheduled_dims(copy, d, s == 0);
        }
        copies[kv.first] = copy;
    }
    // The Funcs the algorithm reads, from the outputs (not rfactor's intermediates).
    std::set<std::string> used;
    std::vector<std::string> work(output_names.begin(), output_names.end());
    while (!work.empty()) {
        const std::string f = work.back();
        work.pop_back();
        if (!used.insert(f).second) continue;
        for (const Function &g : direct_callees(copies.at(f)))
            work.push_back(g.name());
    }
    for (auto it = copies.begin(); it != copies.end();)
        it = used.count(it->first) ? std::next(it) : copies.erase(it);
    for (auto &kv : copies) {
        PointAtCopies point(copies, kv.first);
        for (int s = 0; s < kv.second.stages(); s++) {
            Definition &d = kv.second.stage(s);
            for (Expr &e : d.args)
                e = point.mutate(e);
            for (Expr &e : d.values)
                e = point.mutate(e);
        }
        if (is_rename(kv.second) && !output_names.count(kv.first)) {
            // Inlined: no region of its own for a bound to fix.
            kv.second.schedule().region_constraints.clear();
            continue;
        }
        Func f(kv.second);
        f.compute_root();
        schedule_stage(f, kv.second.stage(0).schedule.dims);
        for (int u = 0; u + 1 < kv.second.stages(); u++)
            schedule_stage(f.update(u), kv.second.stage(u + 1).schedule.dims);
    }
    std::vector<Function> result;
    for (const Function &o : outputs)
        result.push_back(copies.at(o.name()));
    return result;
}

} // namespace lowering
} // namespace aicf
