#include "dsl/Function.h"

#include "dsl/base/Changes.h"
#include "dsl/base/Error.h"
#include "dsl/ir/Bounds.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <unordered_map>

namespace aicf {
namespace ir {

void intrusive_ptr_add_ref(FunctionContents *p) {
    p->ref_count.fetch_add(1, std::memory_order_relaxed);
}
void intrusive_ptr_release(FunctionContents *p) {
    if (p->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p;
}

namespace {

std::string signature(const std::string &name, const std::vector<std::string> &args) {
    std::string s = name + "(";
    for (size_t i = 0; i < args.size(); i++)
        s += (i ? ", " : "") + args[i];
    return s + ")";
}

std::string signature(const std::string &name, const std::vector<Expr> &args) {
    std::string s = name + "(";
    for (size_t i = 0; i < args.size(); i++)
        s += (i ? ", " : "") + to_string(args[i]);
    return s + ")";
}

// The variables an expression uses, split by kind. Each shared node is visited once (outside
// lets, where a node means the same wherever it is reached).
struct VarUses : IRGraphVisitor {
    std::set<std::string> pure;         // plain Vars
    std::vector<ReductionDomain> rdoms; // distinct RDoms
    std::set<std::string> rvars;
    std::set<std::string> let_bound;
    using IRGraphVisitor::visit;
    std::set<std::string> predicate_rvars;    // domain variables, as named in predicates
    std::set<std::string> outside_predicates; // the plain Vars used outside any predicate
    int in_predicate = 0;
    std::set<std::string> params; // scalar Params, by name
    bool deduplicate() const override { return let_bound.empty(); }
    void visit(const Variable *op) override {
        if (!first_visit(op)) return;
        if (op->param.defined()) params.insert(op->name);
        if (op->param.defined() || let_bound.count(op->name)) return;
        if (op->rdom.defined()) {
            rvars.insert(op->name);
            bool seen = false;
            for (const ReductionDomain &r : rdoms)
                seen = seen || r.same_as(op->rdom);
            if (seen) return;
            rdoms.push_back(op->rdom);
            // The RDom's predicate may use more variables.
            if (op->rdom.predicate().defined()) {
                for (const ReductionVariable &rv : op->rdom.domain())
                    predicate_rvars.insert(rv.var);
                in_predicate++;
                op->rdom.predicate().accept(this);
                in_predicate--;
            }
            return;
        }
        if (predicate_rvars.count(op->name)) return;
        pure.insert(op->name);
        if (!in_predicate) outside_predicates.insert(op->name);
    }
    void visit(const Let *op) override {
        if (!first_visit(op)) return;
        op->value.accept(this);
        bool fresh = let_bound.insert(op->name).second;
        op->body.accept(this);
        if (fresh) let_bound.erase(op->name);
    }
};

// The nesting depth of an expression, measured without recursing deeper than `limit` levels
// (each distinct node's height is computed once): every pass of the compiler walks the IR
// recursively, so an expression built by a C++ loop a hundred thousand steps deep would
// overflow the stack.
class DepthCheck : public IRVisitor {
public:
    explicit DepthCheck(int limit) : limit(limit) {}
    bool exceeded = false;
    using IRVisitor::visit;
#define AICF_DEPTH_VISIT(N)                                                                        \
    void visit(const N *op) override {                                                             \
        measure(op, [&] { IRVisitor::visit(op); });                                                \
    }
    AICF_FOR_EACH_EXPR(AICF_DEPTH_VISIT)
#undef AICF_DEPTH_VISIT

private:
    int limit, depth = 0, tallest = 0;
    std::unordered_map<const IRNode *, int> heights;

    template <typename Descend> void measure(const IRNode *op, Descend descend) {
        if (exceeded) return;
        int h;
        if (auto it = heights.find(op); it != heights.end()) {
            h = it->second;
        } else {
            if (++depth > limit) {
                exceeded = true;
                depth--;
                return;
            }
            int outer = tallest;
            tallest = 0;
            descend();
            h = tallest + 1;
            tallest = outer;
            depth--;
            heights[op] = h;
        }
        exceeded = exceeded || depth + h > limit;
        tallest = std::max(tallest, h);
    }
};

void check_depth(const std::string &func, const std::vector<Expr> &exprs) {
    DepthCheck check(max_expression_depth);
    for (const Expr &e : exprs)
        if (e.defined()) e.accept(&check);
    user_assert(!check.exceeded)
        << "The definition of Func " << func << " is an expression more than "
        << max_expression_depth
        << " operations deep. Compute parts of it in Funcs of their own (compute_root() them), "
        << "or reduce over an RDom instead of building a long sum or product in a C++ loop.";
}

void check_value_types(const std::string &func, const std::vector<Expr> &values) {
    check_depth(func, values);
    for (size_t i = 0; i < values.size(); i++) {
        user_assert(values[i].defined())
            << "The definition of Func " << func << " has an undefined value"
            << (values.size() > 1 ? " at Tuple element " + std::to_string(i) : std::string())
            << ".";
        Type t = values[i].type();
        user_assert(is_valid_value_type(t))
            << "The definition of Func " << func << " has a value of type " << to_string(t)
            << ". A Func holds scalars of type bool, int8-64, uint8-64, float16, bfloat16, "
               "float32 or float64.";
    }
}

// A Param and a variable of the Func share one namespace in the lowered code, where the Param
// would read as the variable.
void check_param_names(const VarUses &uses, const std::string &func,
                       const std::vector<std::string> &vars) {
    for (const std::string &v : vars) {
        user_assert(!uses.params.count(v))
            << "Func " << func << " uses the Param " << v << ", which has the name of its variable "
            << v << ", so one would be read as the other. Give the Param another name.";
    }
}

} // namespace

Expr weaken_calls_to(const Expr &e, const FunctionContents *callee) {
    struct Weaken : IRGraphMutator {
        const FunctionContents *callee;
        using IRGraphMutator::visit;
        Expr visit(const Call *op) override {
            Expr r = IRMutator::visit(op);
            const Call *c = r.as<Call>();
            if (c->call_type != Call::Func || c->func.get() != callee || !c->func.strong.defined())
                return r;
            auto *n = new Call(*c);
            n->func = c->func.as_weak();
            return n;
        }
    } weaken;
    weaken.callee = callee;
    return weaken.mutate(e);
}

Function::Function(const std::string &name) : contents(new FunctionContents) {
    contents->name = name;
}

bool Function::has_pure_definition() const {
    return contents->init.defined();
}
bool Function::has_update_definition() const {
    return !contents->updates.empty();
}
const std::string &Function::name() const {
    return contents->name;
}
const std::vector<std::string> &Function::args() const {
    return contents->args;
}
int Function::dimensions() const {
    return static_cast<int>(contents->args.size());
}
const std::vector<Type> &Function::output_types() const {
    return contents->output_types;
}
int Function::outputs() const {
    return static_cast<int>(contents->output_types.size());
}
const Definition &Function::definition() const {
    return contents->init;
}
Definition &Function::definition() {
    detail::note_definition_change();
    return contents->init;
}
const std::vector<Definition> &Function::updates() const {
    return contents->updates;
}
Definition &Function::update(int i) {
    detail::note_definition_change();
    return contents->updates.at(i);
}
Definition &Function::stage(int s) {
    detail::note_definition_change();
    return s == 0 ? contents->init : contents->updates.at(s - 1);
}
const Definition &Function::stage(int s) const {
    return s == 0 ? contents->init : contents->updates.at(s - 1);
}
int Function::stages() const {
    return 1 + static_cast<int>(contents->updates.size());
}
FuncSchedule &Function::schedule() {
    detail::note_definition_change();
    return contents->schedule;
}
const FuncSchedule &Function::schedule() const {
    return contents->schedule;
}

void Function::define(const std::vector<std::string> &args, const std::vector<Expr> &values) {
    detail::note_definition_change();
    const std::string &name = contents->name;
    user_assert(!has_pure_definition())
        << "Func " << name << " already has a pure definition. To change its values, add an "
        << "update definition such as " << signature(name, contents->args) << " += ...";
    check_value_types(name, values);

    std::set<std::string> seen;
    for (const std::string &a : args) {
        user_assert(seen.insert(a).second)
            << "In the definition of Func " << signature(name, args) << ", the variable " << a
            << " appears twice on the left side. Each argument of a pure definition must be a "
            << "distinct Var.";
    }

    VarUses uses;
    for (const Expr &v : values)
        v.accept(&uses);
    check_param_names(uses, name, args);
    if (!uses.rvars.empty()) {
        std::string r = *uses.rvars.begin();
        user_error << "The pure definition of Func " << signature(name, args)
                   << " uses the reduction variable " << r
                   << ". Reduction variables may appear only in update definitions: define "
                   << signature(name, args) << " = <initial value> first, then update it, e.g. "
                   << signature(name, args) << " += ... over the RDom.";
    }
    for (const std::string &v : uses.pure) {
        user_assert(seen.count(v))
            << "In the definition of Func " << signature(name, args)
            << ", the right side uses the variable " << v
            << ", which is not on the left side. Every pure variable used on the right must "
            << "appear on the left: add " << v << " as an argument of " << name
            << ", or replace it with an expression of the arguments.";
    }

    contents->args = args;
    contents->output_types.clear();
    for (const Expr &v : values)
        contents->output_types.push_back(v.type());
    contents->init.args.clear();
    for (const std::string &a : args)
        contents->init.args.push_back(Variable::make(Int(32), a));
    // A Func's definitions refer to the Func itself weakly, so it does not own itself.
    contents->init.values.clear();
    for (const Expr &v : values)
        contents->init.values.push_back(weaken_calls_to(v, contents.get()));
    contents->init.schedule.dims.clear();
    for (const std::string &a : args)
        contents->init.schedule.dims.push_back(Dim{a});
}

void Function::define_update(const std::vector<Expr> &args, const std::vector<Expr> &values) {
    detail::note_definition_change();
    const std::string &name = contents->name;
    int stage = static_cast<int>(contents->updates.size());
    user_assert(has_pure_definition())
        << "Func " << name << " has no pure definition, so it cannot be updated. Give it one "
        << "first, e.g. " << name << "(x) = 0.";
    // A wrapper made by in() is a copy of the Func it wraps, which its consumers read instead:
    // an update of it would change what they read behind the algorithm's back.
    for (const Expr &v : contents->init.values) {
        const Call *c = v.as<Call>();
        if (!c || c->call_type != Call::Func || !c->func.defined()) continue;
        for (const auto &w : c->func.get()->wrappers) {
            user_assert(w.second.get() != contents.get())
                << "Func " << name << " is the wrapper " << c->name << ".in("
                << (w.first.empty() ? "" : w.first) << ") made, a copy of " << c->name
                << " that its consumers read instead; it takes a schedule, not definitions. "
                << "Define a Func of your own to compute something else.";
        }
    }
    user_assert(args.size() == contents->args.size())
        << "Update definition " << stage << " of Func " << name << " has " << args.size()
        << " argument" << (args.size() == 1 ? "" : "s") << ", but " << name << " was defined "
        << "with " << contents->args.size() << ": " << signature(name, contents->args) << ".";
    user_assert(values.size() == contents->output_types.size())
        << "Update definition " << stage << " of Func " << name << " gives " << values.size()
        << " value" << (values.size() == 1 ? "" : "s") << ", but its pure definition gives "
        << contents->output_types.size() << ".";
    check_depth(name, args);
    check_value_types(name, values);
    for (size_t i = 0; i < values.size(); i++) {
        user_assert(values[i].type() == contents->output_types[i])
            << "In update definition " << stage << " of Func " << name << ", "
            << (values.size() > 1 ? "Tuple element " + std::to_string(i) : std::string("the value"))
            << " has type " << to_string(values[i].type()) << " but the pure definition has "
            << "type " << to_string(contents->output_types[i]) << ". Cast it, e.g. cast("
            << to_string(contents->output_types[i]) << ", ...).";
    }

    // Pure variables appear as bare arguments, in the position they have in the pure
    // definition; an argument computed from one (a partial histogram's bin, computed from
    // the data of its chunk u: h(in(r, u), u)) needs it bare in its own position too.
    std::set<std::string> bare_pure;
    for (size_t i = 0; i < args.size(); i++) {
        const Variable *v = args[i].as<Variable>();
        if (v && !v->rdom.defined() && !v->param.defined()) {
            user_assert(v->name == contents->args[i])
                << "In update definition " << stage << " of Func " << signature(name, args)
                << ", the pure variable " << v->name << " is argument " << i << ", but argument "
                << i << " of " << signature(name, contents->args) << " is " << contents->args[i]
                << ". A pure variable must stay in its position in every update.";
            bare_pure.insert(v->name);
        }
    }
    for (size_t i = 0; i < args.size(); i++) {
        if (const Variable *v = args[i].as<Variable>(); v && bare_pure.count(v->name)) continue;
        VarUses uses;
        args[i].accept(&uses);
        for (const std::string &p : uses.pure) {
            user_assert(bare_pure.count(p))
                << "In update definition " << stage << " of Func " << signature(name, args)
                << ", argument " << i << " (" << to_string(args[i]) << ") uses the pure variable "
                << p << ". A pure variable may appear in an argument only where it is also the "
                << "argument in its own position.";
        }
    }

    VarUses uses;
    for (const Expr &a : args)
        a.accept(&uses);
    for (const Expr &v : values)
        v.accept(&uses);
    check_param_names(uses, name, contents->args);
    for (const std::string &v : uses.pure) {
        user_assert(bare_pure.count(v))
            << "In update definition " << stage << " of Func " << signature(name, args) << ", "
            << (uses.outside_predicates.count(v) ? "the right side"
                                                 : "the where() predicate of its RDom")
            << " uses the variable " << v
            << ", which is not on the left side. Every pure variable used on the right must "
            << "appear on the left in its position of " << signature(name, contents->args) << ".";
    }
    // A read of the Func itself must be at the same point in every pure dimension, in the
    // values and in the RDom's where(); otherwise the result would depend on the order and
    // region of the update's loops.
    std::vector<Expr> reading = values;
    if (!uses.rdoms.empty() && uses.rdoms[0].predicate().defined())
        reading.push_back(uses.rdoms[0].predicate());
    for (const Expr &v : reading) {
        const bool in_predicate = v.same_as(reading.back()) && reading.size() > values.size();
        visit_each_distinct<Call>(v, [&](const Call *c) {
            if (c->call_type != Call::Func || c->func.get() != contents.get()) return;
            for (size_t i = 0; i < args.size(); i++) {
                const Variable *lhs = args[i].as<Variable>();
                if (!lhs || lhs->rdom.defined() || lhs->param.defined()) continue;
                const Variable *rhs = c->args[i].as<Variable>();
                user_assert(rhs && rhs->name == lhs->name)
                    << "In update definition " << stage << " of Func " << signature(name, args)
                    << (in_predicate ? ", the where() predicate of its RDom reads "
                                     : ", the right side reads ")
                    << to_string(Expr(c)) << ": argument " << i << " must be the pure variable "
                    << lhs->name
                    << ", as on the left side. An update may read its Func only at the same "
                    << "point in each pure dimension.";
            }
        });
    }
    user_assert(uses.rdoms.size() <= 1)
        << "Update definition " << stage << " of Func " << signature(name, args)
        << " uses reduction variables of more than one RDom. Put all dimensions of the "
        << "reduction into a single RDom.";

    Definition d;
    for (const Expr &a : args)
        d.args.push_back(weaken_calls_to(cast(Int(32), a), contents.get()));
    for (const Expr &v : values)
        d.values.push_back(weaken_calls_to(v, contents.get()));
    if (!uses.rdoms.empty()) {
        d.rdom = uses.rdoms[0];
        d.rdom.mark_used();
        if (d.rdom.predicate().defined())
            d.rdom.set_predicate(weaken_calls_to(d.rdom.predicate(), contents.get()));
    }
    // Loops: reduction variables inside pure variables, as written. The update runs over the
    // whole RDom, including dimensions it does not mention (s() += in(r.x) over a 3 x 5 RDom
    // adds each value 5 times), as in Halide.
    if (d.rdom.defined()) {
        for (const ReductionVariable &rv : d.rdom.domain())
            d.schedule.dims.push_back(Dim{rv.var, ForType::Serial, true});
    }
    for (size_t i = 0; i < args.size(); i++) {
        if (bare_pure.count(contents->args[i])) d.schedule.dims.push_back(Dim{contents->args[i]});
    }
    contents->updates.push_back(std::move(d));
}

Function Function::copy() const {
    auto *c = new FunctionContents;
    c->name = contents->name;
    c->args = contents->args;
    c->output_types = contents->output_types;
    c->init = contents->init;
    c->updates = contents->updates;
    c->schedule = contents->schedule;
    c->wrappers = contents->wrappers;
    return Function(c);
}

namespace {

// Whether every value integer `e` may take fits in int32: through the simplifier's bounds, or
// through interval analysis over the domains of the reduction variables it uses (a shift or a
// quotient of a uint32, cast<int64_t>(r) - 3).
bool fits_in_int32(const Expr &e) {
    const bool is_signed = e.type().is_int();
    auto within = [&](const Expr &lo, const Expr &hi) {
        Expr c = LE::make(hi, make_const(hi.type(), int64_t(INT32_MAX)));
        if (is_signed) c = And::make(GE::make(lo, make_const(lo.type(), int64_t(INT32_MIN))), c);
        return can_prove(c);
    };
    if (within(e, e)) return true;
    Scope<Interval> domains;
    std::set<std::string> seen;
    visit_each<Variable>(e, [&](const Variable *v) {
        if (!v->rdom.defined() || !seen.insert(v->name).second) return;
        for (const ReductionVariable &rv : v->rdom.domain()) {
            if (rv.var != v->name) continue;
            const Expr last = Sub::make(Add::make(rv.min, rv.extent), make_one(rv.min.type()));
            domains.push(v->name, Interval(rv.min, simplify(last)));
        }
    });
    const Interval i = bounds_of_expr_in_scope(e, domains);
    return i.is_bounded() && within(i.min, i.max);
}

} // namespace

Expr Function::call(const std::vector<Expr> &args, int value_index) const {
    const std::string &n = contents->name;
    user_assert(has_pure_definition())
        << "Func " << n << " is called before it is defined. Define it (" << n
        << "(x, ...) = ...) before using it on the right side of another definition.";
    user_assert(args.size() == contents->args.size())
        << "Func " << n << " is called with " << args.size() << " argument"
        << (args.size() == 1 ? "" : "s") << " in " << signature(n, args) << ", but it was defined "
        << "with " << contents->args.size() << ": " << signature(n, contents->args) << ".";
    internal_assert(value_index >= 0 && value_index < outputs()) << "Func value index";
    std::vector<Expr> int_args;
    for (size_t i = 0; i < args.size(); i++) {
        user_assert(args[i].defined())
            << "Argument " << i << " of a call to " << n << " is undefined.";
        Type t = args[i].type();
        user_assert(t.is_int_or_uint() && t.is_scalar())
            << "Argument " << i << " of the call " << signature(n, args) << " has type "
            << to_string(t) << ". Func arguments must be integers; convert it explicitly, "
            << "e.g. cast<int>(floor(...)).";
        // Coordinates are int32: a wider argument, or an unsigned 32-bit one, is narrowed
        // only where every value it may take fits (a clamp into the Func's range shows it).
        // Narrowed as it is, an int64 id of 2^32 + 2 would name point 2.
        if (!Int(32).can_represent(t)) {
            user_assert(fits_in_int32(args[i]))
                << "Argument " << i << " of the call " << signature(n, args) << " has type "
                << to_string(t) << ", but the coordinates of a Func are int32 and " << args[i]
                << " may not fit in one (a value of 2^32 + 2 would name point 2). Clamp it to "
                << "the points " << n << " is used at, with int32 bounds (clamp(id, 0, rows - "
                << "1)), or cast it to int where every value fits.";
        }
        int_args.push_back(cast(Int(32), args[i]));
    }
    return Call::make_func(contents->output_types[value_index], n, int_args,
                           FunctionPtr(contents.get()), value_index);
}

std::vector<Function> direct_callees(const Function &f) {
    std::vector<Function> result;
    auto add = [&](const Expr &e) {
        visit_each_distinct<Call>(e, [&](const Call *c) {
            if (c->call_type != Call::Func) return;
            Function g(c->func.get());
            for (const Function &r : result)
                if (r.same_as(g)) return;
            result.push_back(g);
        });
    };
    for (int s = 0; s < f.stages(); s++) {
        const Definition &d = f.stage(s);
        for (const Expr &e : d.args)
            add(e);
        for (const Expr &e : d.values)
            add(e);
        if (d.rdom.defined()) {
            for (const ReductionVariable &rv : d.rdom.domain()) {
                add(rv.min);
                add(rv.extent);
            }
            add(d.rdom.predicate());
        }
    }
    return result;
}

} // namespace ir
} // namespace aicf
