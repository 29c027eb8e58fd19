#include "lowering/ScheduleFunctions.h"

#include "dsl/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/Substitute.h"
#include "lowering/Inline.h"
#include "lowering/Names.h"

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

bool is_output(const Function &f, const std::vector<Function> &outputs) {
    for (const Function &o : outputs)
        if (o.same_as(f)) return true;
    return false;
}

// The loops of one stage around its Provide.
Stmt build_stage(const Function &f, int stage) {
    const Definition &d = f.stage(stage);
    std::map<std::string, Expr> loop_vars;
    for (const std::string &a : f.args()) {
        loop_vars[a] = Variable::make(Int(32), loop_name(f.name(), stage, a));
    }
    if (d.rdom.defined()) {
        for (const ReductionVariable &rv : d.rdom.domain()) {
            loop_vars[rv.var] = Variable::make(Int(32), loop_name(f.name(), stage, rv.var));
        }
    }
    std::vector<Expr> values, args;
    for (const Expr &v : d.values) values.push_back(substitute(loop_vars, v));
    for (const Expr &a : d.args) args.push_back(substitute(loop_vars, a));
    Stmt body = Provide::make(f.name(), values, args);
    if (d.rdom.defined() && d.rdom.predicate().defined()) {
        body = IfThenElse::make(substitute(loop_vars, d.rdom.predicate()), body);
    }

    for (const Dim &dim : d.schedule.dims) {
        std::string name = loop_name(f.name(), stage, dim.var);
        Expr min, extent;
        if (dim.is_rvar) {
            const ReductionVariable *rv = nullptr;
            for (const ReductionVariable &r : d.rdom.domain())
                if (r.var == dim.var) rv = &r;
            internal_assert(rv) << "stage " << stage << " of " << f.name() << " has no RVar "
                                << dim.var;
            min = rv->min;
            extent = rv->extent;
        } else {
            min = Variable::make(Int(32), loop_min_name(f.name(), stage, dim.var));
            Expr max = Variable::make(Int(32), loop_max_name(f.name(), stage, dim.var));
            extent = Add::make(Sub::make(max, min), make_one(Int(32)));
        }
        body = For::make(name, min, extent, dim.for_type, body);
    }
    return body;
}

Stmt build_produce(const Function &f) {
    std::vector<Stmt> stages;
    for (int s = 0; s < f.stages(); s++) stages.push_back(build_stage(f, s));
    return ProducerConsumer::make_produce(f.name(), Block::make(stages));
}

} // namespace

bool is_inlined(const Function &f, const std::vector<Function> &outputs) {
    if (is_output(f, outputs)) return false;
    const FuncSchedule &s = f.schedule();
    if (s.compute_level_set) {
        user_assert(!s.compute_level.is_inlined() || !f.has_update_definition())
            << "Func " << f.name() << " has update definitions, so it cannot be computed "
            << "inline. Use " << f.name() << ".compute_root() (or compute_at) instead.";
        return s.compute_level.is_inlined();
    }
    return !f.has_update_definition();
}

Stmt schedule_functions(const std::vector<Function> &outputs, const std::vector<std::string> &order,
                        const std::map<std::string, Function> &env) {
    std::vector<Stmt> produce_outputs;
    for (const Function &o : outputs) produce_outputs.push_back(build_produce(o));
    Stmt s = Block::make(produce_outputs);

    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Function &f = env.at(*it);
        if (is_output(f, outputs) || is_inlined(f, outputs)) continue;
        Region region;
        for (const std::string &a : f.args()) {
            region.emplace_back(Variable::make(Int(32), realized_min_name(f.name(), a)),
                                Variable::make(Int(32), realized_extent_name(f.name(), a)));
        }
        Stmt body = Block::make(build_produce(f), ProducerConsumer::make_consume(f.name(), s));
        s = Realize::make(f.name(), f.output_types(), f.schedule().memory_type, region, body);
    }

    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Function &f = env.at(*it);
        if (is_inlined(f, outputs)) s = inline_function(s, f);
    }
    return s;
}

} // namespace lowering
} // namespace aicf
