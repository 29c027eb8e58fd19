#include "dsl/Func.h"

#include "dsl/Operators.h"
#include "dsl/Pipeline.h"
#include "dsl/base/Changes.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace aicf {

using namespace ir;

const Buffer<> &Realization::single() const {
    user_assert(buffers_.size() == 1)
        << "A Realization of " << buffers_.size() << " buffers (a Tuple-valued Func) cannot "
        << "convert to one Buffer; pick one with r[i].";
    return buffers_[0];
}

size_t Tuple::checked(size_t i) const {
    user_assert(i < values_.size())
        << "A Tuple of " << values_.size() << " value" << (values_.size() == 1 ? "" : "s")
        << " has no element " << i << ".";
    return i;
}

const Buffer<> &Realization::operator[](size_t i) const {
    user_assert(i < buffers_.size()) << [&] {
        std::string names;
        for (size_t k = 0; k < buffers_.size(); k++)
            names += (k ? ", " : "") + buffers_[k].name();
        return "A Realization of " + std::to_string(buffers_.size()) + " buffer" +
               (buffers_.size() == 1 ? "" : "s") + " (" + names + ") has no element " +
               std::to_string(i) + ".";
    }();
    return buffers_[i];
}

namespace {

bool is_pure_var(const Expr &e) {
    const Variable *v = e.as<Variable>();
    return v && !v->rdom.defined() && !v->param.defined();
}

} // namespace

void FuncRef::define(const std::vector<Expr> &values) {
    bool all_pure = true;
    for (const Expr &a : args)
        all_pure = all_pure && a.defined() && is_pure_var(a);
    if (func.has_pure_definition()) {
        func.define_update(args, values);
        return;
    }
    if (!all_pure) {
        std::string shown;
        for (size_t i = 0; i < args.size(); i++) {
            user_assert(args[i].defined()) << "Argument " << i << " in the definition of Func "
                                           << func.name() << " is undefined.";
            if (!is_pure_var(args[i])) {
                user_error << "The first definition of Func " << func.name()
                           << " must be a pure definition, with a Var in each argument, but "
                           << "argument " << i << " is " << args[i]
                           << ". Define it over Vars first (e.g. " << func.name()
                           << "(x) = 0), then add this as an update definition.";
            }
        }
    }
    std::vector<std::string> names;
    for (const Expr &a : args)
        names.push_back(a.as<Variable>()->name);
    func.define(names, values);
}

FuncRef &FuncRef::operator=(const Expr &e) {
    user_assert(e.defined()) << "Func " << func.name() << " defined with an undefined Expr.";
    define({e});
    return *this;
}

FuncRef &FuncRef::operator=(const Tuple &t) {
    user_assert(t.size() >= 1) << "Func " << func.name() << " defined with an empty Tuple.";
    define(t.as_vector());
    return *this;
}

FuncRef &FuncRef::operator=(const FuncRef &other) {
    if (other.func.outputs() > 1) {
        std::vector<Expr> values;
        for (int i = 0; i < other.func.outputs(); i++)
            values.push_back(other[i]);
        define(values);
        return *this;
    }
    return *this = Expr(other);
}

void FuncRef::update_with(const Expr &e, const Expr &identity, char op) {
    user_assert(e.defined()) << "Update of Func " << func.name() << " with an undefined Expr.";
    if (!func.has_pure_definition()) {
        // f(...) += e with no pure definition means f starts from the operation's identity.
        std::vector<Expr> pure_args;
        std::vector<std::string> names;
        for (size_t i = 0; i < args.size(); i++) {
            if (is_pure_var(args[i])) {
                names.push_back(args[i].as<Variable>()->name);
            } else {
                names.push_back(detail::unique_name("_"));
            }
        }
        func.define(names, {identity});
    }
    user_assert(func.outputs() == 1)
        << "Func " << func.name() << " is Tuple-valued; update it with f(...) = Tuple(...).";
    Expr current = func.call(args, 0);
    Expr rhs = e;
    // The update keeps the Func's type: the right side converts to it. An integer constant
    // must fit, as a literal must in an operator (f(x) += 300 on an int8 f would add 44).
    if (auto c = as_const_int(rhs); c && !current.type().is_float()) {
        user_assert(current.type().element_of().can_represent(*c))
            << "In the update of Func " << func.name() << ", the constant " << *c
            << " does not fit in " << to_string(current.type().element_of()) << ", the type of "
            << func.name() << ". Widen " << func.name() << "'s type, or cast the constant "
            << "explicitly to say how it wraps.";
    }
    if (rhs.type() != current.type()) rhs = aicf::cast(current.type(), rhs);
    Expr value;
    switch (op) {
    case '+':
        value = current + rhs;
        break;
    case '-':
        value = current - rhs;
        break;
    case '*':
        value = current * rhs;
        break;
    default:
        value = current / rhs;
        break;
    }
    func.define_update(args, {value});
}

FuncRef &FuncRef::operator+=(const Expr &e) {
    update_with(e, make_zero(e.type()), '+');
    return *this;
}
FuncRef &FuncRef::operator-=(const Expr &e) {
    update_with(e, make_zero(e.type()), '-');
    return *this;
}
FuncRef &FuncRef::operator*=(const Expr &e) {
    update_with(e, make_one(e.type()), '*');
    return *this;
}
FuncRef &FuncRef::operator/=(const Expr &e) {
    update_with(e, make_one(e.type()), '/');
    return *this;
}

FuncRef::operator Expr() const {
    user_assert(!func.has_pure_definition() || func.outputs() == 1)
        << "Func " << func.name() << " has " << func.outputs() << " values (a Tuple); pick one "
        << "with " << func.name() << "(...)[i].";
    return func.call(args, 0);
}

Expr FuncRef::operator[](int i) const {
    user_assert(func.has_pure_definition())
        << "Func " << func.name() << " is called before it is defined.";
    user_assert(i >= 0 && i < func.outputs())
        << "Func " << func.name() << " has " << func.outputs() << " value"
        << (func.outputs() == 1 ? "" : "s") << "; element " << i << " does not exist.";
    return func.call(args, i);
}

Func::Func() : func(detail::unique_name("f")) {}

Func::Func(const std::string &name) : func(name) {
    detail::check_user_name(name, "Func");
}

Func::Func(const Expr &e) : Func() {
    (*this)() = e;
}

FuncRef Func::operator()(const std::vector<Var> &vars) const {
    std::vector<Expr> args(vars.begin(), vars.end());
    return FuncRef(func, args);
}

int Func::dimensions() const {
    return func.dimensions();
}
int Func::outputs() const {
    return func.outputs();
}

Type Func::type() const {
    user_assert(defined()) << "Func " << name() << " has no definition, so it has no type yet.";
    user_assert(outputs() == 1) << "Func " << name() << " is Tuple-valued; use types().";
    return func.output_types()[0];
}

const std::vector<Type> &Func::types() const {
    return func.output_types();
}

std::vector<Var> Func::args() const {
    std::vector<Var> vars;
    for (const std::string &a : func.args())
        vars.emplace_back(a);
    return vars;
}

Expr Func::value() const {
    user_assert(defined() && outputs() == 1) << "Func " << name() << " has no single value.";
    return func.definition().values[0];
}

Tuple Func::values() const {
    user_assert(defined()) << "Func " << name() << " has no definition.";
    return Tuple(func.definition().values);
}

std::shared_ptr<Pipeline> Func::realize_pipeline() {
    std::shared_ptr<Pipeline> p = std::atomic_load(&pipeline_);
    if (p && p->output_functions()[0].same_as(func)) return p;
    p = std::make_shared<Pipeline>(*this);
    std::atomic_store(&pipeline_, p);
    return p;
}

Realization Func::realize(const std::vector<int> &sizes) {
    return realize_pipeline()->realize(sizes);
}
Realization Func::realize(const std::vector<int> &sizes, const Target &target) {
    return realize_pipeline()->realize(sizes, target);
}
void Func::realize(const Realization &outputs) {
    realize_pipeline()->realize(outputs);
}
void Func::realize(const Realization &outputs, const Target &target) {
    realize_pipeline()->realize(outputs, target);
}

std::string Func::lowered_stmt() const {
    return Pipeline(*this).lowered_stmt();
}
std::string Func::loop_nest() const {
    return Pipeline(*this).loop_nest();
}
void Func::print_loop_nest() const {
    std::printf("%s", loop_nest().c_str());
}
std::string Func::lowered_stmt(const Target &t) const {
    return Pipeline(*this).lowered_stmt(t);
}
std::string Func::ptx(const Target &t) const {
    return Pipeline(*this).ptx(t);
}
void Func::compile_to_ptx(const std::string &filename, const Target &t) const {
    Pipeline(*this).compile_to_ptx(filename, t);
}
std::string Func::assembly() const {
    return Pipeline(*this).assembly();
}
std::string Func::assembly(const Target &t) const {
    return Pipeline(*this).assembly(t);
}
void Func::compile_to_assembly(const std::string &filename) const {
    Pipeline(*this).compile_to_assembly(filename);
}
void Func::compile_to_assembly(const std::string &filename, const Target &t) const {
    Pipeline(*this).compile_to_assembly(filename, t);
}
std::string Func::kernel_resources(const Target &t) const {
    return Pipeline(*this).kernel_resources(t);
}
DataflowReport Func::report(const std::vector<int> &sizes, const Target &t,
                            const ReportArguments &args, bool baseline) const {
    return Pipeline(*this).report(sizes, t, args, baseline);
}
std::string Func::loop_nest(const Target &t) const {
    return Pipeline(*this).loop_nest(t);
}
void Func::print_loop_nest(const Target &t) const {
    std::printf("%s", loop_nest(t).c_str());
}

void Func::compile_to_lowered_stmt(const std::string &filename) const {
    std::ofstream out(filename);
    user_assert(out.good()) << "compile_to_lowered_stmt: cannot open " << filename
                            << " for writing.";
    out << lowered_stmt();
}

Stage Func::update(int i) {
    user_assert(i >= 0 && i < num_update_definitions())
        << "Func " << name() << " has " << num_update_definitions() << " update definition"
        << (num_update_definitions() == 1 ? "" : "s") << "; update(" << i << ") does not exist."
        << (num_update_definitions() == 0
                ? " (An inline reduction such as sum() in its definition is a Func of its own, "
                  "with no handle to schedule: to schedule the reduction, write it as an update, "
                  "f(x) = 0; f(x) += ..., and schedule f.update(0).)"
                : "");
    return Stage(func, i + 1);
}

Func &Func::split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner,
                  const Expr &factor, TailStrategy tail) {
    Stage(func, 0).split(old, outer, inner, factor, tail);
    return *this;
}
Func &Func::fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused) {
    Stage(func, 0).fuse(inner, outer, fused);
    return *this;
}
Func &Func::reorder(const std::vector<VarOrRVar> &vars) {
    Stage(func, 0).reorder(vars);
    return *this;
}
Func &Func::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
                 const VarOrRVar &xi, const VarOrRVar &yi, const Expr &xfactor, const Expr &yfactor,
                 TailStrategy tail) {
    Stage(func, 0).tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail);
    return *this;
}
Func &Func::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi,
                 const Expr &xfactor, const Expr &yfactor, TailStrategy tail) {
    Stage(func, 0).tile(x, y, xi, yi, xfactor, yfactor, tail);
    return *this;
}
Func &Func::rename(const VarOrRVar &old, const VarOrRVar &new_name) {
    Stage(func, 0).rename(old, new_name);
    return *this;
}
Func &Func::serial(const VarOrRVar &v) {
    Stage(func, 0).serial(v);
    return *this;
}
Func &Func::never_partition(const VarOrRVar &v) {
    Stage(func, 0).never_partition(v);
    return *this;
}
Func &Func::never_partition_all() {
    Stage(func, 0).never_partition_all();
    return *this;
}
Func &Func::parallel(const VarOrRVar &v) {
    Stage(func, 0).parallel(v);
    return *this;
}
Func &Func::parallel(const VarOrRVar &v, const Expr &task_size, TailStrategy tail) {
    Stage(func, 0).parallel(v, task_size, tail);
    return *this;
}
Func &Func::vectorize(const VarOrRVar &v) {
    Stage(func, 0).vectorize(v);
    return *this;
}
Func &Func::vectorize(const VarOrRVar &v, const Expr &factor, TailStrategy tail) {
    Stage(func, 0).vectorize(v, factor, tail);
    return *this;
}
Func &Func::unroll(const VarOrRVar &v) {
    Stage(func, 0).unroll(v);
    return *this;
}
Func &Func::unroll(const VarOrRVar &v, const Expr &factor, TailStrategy tail) {
    Stage(func, 0).unroll(v, factor, tail);
    return *this;
}

namespace {

void check_pure_arg(const Function &f, const Var &v, const char *directive) {
    for (const std::string &a : f.args())
        if (a == v.name()) return;
    std::string args;
    for (const std::string &a : f.args())
        args += (args.empty() ? "" : ", ") + a;
    user_error << directive << "(" << v.name() << ") on Func " << f.name() << ": " << v.name()
               << " is not one of its variables (" << args << ").";
}

void check_positive_int(const Expr &e, const char *what, const Function &f) {
    user_assert(e.defined() && e.type().is_int_or_uint() && e.type().is_scalar())
        << "The " << what << " given to Func " << f.name() << " must be an integer.";
    if (auto c = as_const_int(e)) {
        user_assert(*c > 0) << "The " << what << " given to Func " << f.name() << " is " << *c
                            << "; it must be positive.";
    }
}

// Adds constraint c to f's schedule in place of an earlier one of the same Var and kind (a
// size, from bound or bound_extent, or an alignment): a schedule changed between realizes
// would otherwise keep both, and they would contradict each other.
void replace_region_constraint(Function &f, RegionConstraint c) {
    const bool alignment = c.modulus.defined();
    auto &constraints = f.schedule().region_constraints;
    constraints.erase(std::remove_if(constraints.begin(), constraints.end(),
                                     [&](const RegionConstraint &o) {
                                         return o.var == c.var && (alignment ? o.modulus.defined()
                                                                             : o.extent.defined());
                                     }),
                      constraints.end());
    constraints.push_back(std::move(c));
}

} // namespace

Func &Func::bound(const Var &var, const Expr &min, const Expr &extent) {
    check_pure_arg(func, var, "bound");
    user_assert(min.defined() && min.type().is_int_or_uint())
        << "The min given to bound on Func " << name() << " must be an integer.";
    check_positive_int(extent, "extent in bound", func);
    detail::check_schedule_size(min,
                                "The min given to bound(" + var.name() + ") on Func " + name());
    detail::check_schedule_size(extent,
                                "The extent given to bound(" + var.name() + ") on Func " + name());
    replace_region_constraint(
        func, {var.name(), ir::cast(Int(32), min), ir::cast(Int(32), extent), Expr(), Expr()});
    return *this;
}

Func &Func::bound_extent(const Var &var, const Expr &extent) {
    check_pure_arg(func, var, "bound_extent");
    check_positive_int(extent, "extent in bound_extent", func);
    detail::check_schedule_size(extent, "The extent given to bound_extent(" + var.name() +
                                            ") on Func " + name());
    // As bound, which it replaces: an undefined min is the first point needed.
    replace_region_constraint(func,
                              {var.name(), Expr(), ir::cast(Int(32), extent), Expr(), Expr()});
    return *this;
}

Func &Func::align_bounds(const Var &var, const Expr &modulus, const Expr &remainder) {
    check_pure_arg(func, var, "align_bounds");
    check_positive_int(modulus, "modulus in align_bounds", func);
    detail::check_schedule_size(modulus, "The modulus given to align_bounds(" + var.name() +
                                             ") on Func " + name());
    detail::check_schedule_size(remainder, "The remainder given to align_bounds(" + var.name() +
                                               ") on Func " + name());
    replace_region_constraint(func, {var.name(), Expr(), Expr(), ir::cast(Int(32), modulus),
                                     ir::cast(Int(32), remainder)});
    return *this;
}

Func &Func::reorder_storage(const std::vector<Var> &vars) {
    std::vector<std::string> order;
    for (const Var &v : vars) {
        check_pure_arg(func, v, "reorder_storage");
        user_assert(std::find(order.begin(), order.end(), v.name()) == order.end())
            << "reorder_storage on Func " << name() << " names " << v.name() << " twice.";
        order.push_back(v.name());
    }
    // Dimensions not named keep their relative order, outside the named ones.
    for (const std::string &a : func.args())
        if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
    func.schedule().storage_order = order;
    return *this;
}

Func &Func::gpu_launch_bounds(int min_blocks_per_sm) {
    user_assert(min_blocks_per_sm >= 1 && min_blocks_per_sm <= 32)
        << "gpu_launch_bounds(" << min_blocks_per_sm << ") on Func " << name()
        << ": a multiprocessor holds 1 to 32 blocks at once. Give a count in that range.";
    func.schedule().launch_bounds.min_blocks_per_sm = min_blocks_per_sm;
    return *this;
}

Func &Func::gpu_pipeline(int stages, PipelineCopy copy) {
    const bool async = copy == PipelineCopy::Async;
    const int most = async ? 4 : 2;
    user_assert(stages >= 1 && stages <= most)
        << "gpu_pipeline(" << stages << ", PipelineCopy::" << (async ? "Async" : "Registers")
        << ") on Func " << name() << ": "
        << (stages < 1 ? "a pipeline has at least one stage"
            : async    ? "more than 4 shared buffers of one tile cost more shared memory "
                         "than further stages can hide"
                       : "through registers, a pipeline holds one iteration ahead")
        << ". Give 1 (none) to " << most
        << (async ? "." : ", or PipelineCopy::Async for up to 4 stages in shared memory.");
    func.schedule().gpu_pipeline.stages = stages;
    func.schedule().gpu_pipeline.copy = copy;
    return *this;
}

Func &Func::gpu_max_registers(int registers) {
    user_assert(registers >= 16 && registers <= 255)
        << "gpu_max_registers(" << registers << ") on Func " << name()
        << ": a thread may be limited to 16 to 255 registers. Give a count in that range.";
    func.schedule().launch_bounds.max_registers = registers;
    return *this;
}

Func &Func::align_storage(const Var &var, const Expr &alignment) {
    check_pure_arg(func, var, "align_storage");
    check_positive_int(alignment, "alignment in align_storage", func);
    detail::check_schedule_size(alignment, "The alignment given to align_storage(" + var.name() +
                                               ") on Func " + name());
    func.schedule().storage_alignment.push_back({var.name(), ir::cast(Int(32), alignment)});
    return *this;
}

Func &Func::swizzle_storage() {
    user_assert(func.args().size() >= 2)
        << "swizzle_storage on Func " << name() << ": the swizzle permutes the 16-byte pieces of "
        << "each row by the row's index, but " << name() << " has one dimension. Swizzle a "
        << "tile of two or more.";
    func.schedule().swizzled_storage = true;
    return *this;
}

Func &Func::core_matrix_storage() {
    user_assert(func.args().size() >= 2)
        << "core_matrix_storage on Func " << name() << ": core matrices tile rows (the "
        << "innermost stored dimension) 8 at a time, but " << name() << " has one dimension. "
        << "Store a tile of two or more.";
    func.schedule().core_matrix_storage = true;
    return *this;
}

namespace {

Func make_wrapper(const Function &f, const std::string &consumer) {
    auto &wrappers = f.get()->wrappers;
    auto it = wrappers.find(consumer);
    if (it != wrappers.end()) return Func(Function(it->second.get()));
    user_assert(f.has_pure_definition())
        << "Func " << f.name() << " has no definition yet, so it cannot be wrapped with in().";
    std::string name = f.name() + (consumer.empty() ? "_in" : "_in_" + consumer);
    Function w(name);
    std::vector<Expr> args;
    for (const std::string &a : f.args())
        args.push_back(Variable::make(Int(32), a));
    std::vector<Expr> values;
    // The wrapped Func owns its wrapper; the wrapper refers back weakly.
    for (int i = 0; i < f.outputs(); i++)
        values.push_back(weaken_calls_to(f.call(args, i), f.get()));
    w.define(f.args(), values);
    detail::note_definition_change();
    wrappers[consumer] = w.get();
    return Func(w);
}

} // namespace

Func Func::in(const Func &consumer) {
    user_assert(!consumer.function().same_as(func))
        << "Func " << name() << ".in(" << name() << "): a Func cannot wrap itself for itself.";
    return make_wrapper(func, consumer.name());
}

Func Func::in() {
    return make_wrapper(func, "");
}

Func &Func::compute_at(const Func &consumer, const VarOrRVar &var) {
    return compute_at(LoopLevel(consumer.name(), var.name()));
}

Func &Func::compute_at(const Stage &consumer, const VarOrRVar &var) {
    return compute_at(LoopLevel(consumer.func_name(), var.name(), consumer.index()));
}

Func &Func::compute_at(const LoopLevel &level) {
    func.schedule().compute_level = level;
    // Storage follows the computation unless store_at placed it elsewhere.
    if (!func.schedule().store_level_set) func.schedule().store_level = level;
    func.schedule().compute_level_set = true;
    return *this;
}

Func &Func::store_at(const Func &consumer, const VarOrRVar &var) {
    return store_at(LoopLevel(consumer.name(), var.name()));
}

Func &Func::store_at(const Stage &consumer, const VarOrRVar &var) {
    return store_at(LoopLevel(consumer.func_name(), var.name(), consumer.index()));
}

Func &Func::store_at(const LoopLevel &level) {
    func.schedule().store_level = level;
    func.schedule().store_level_set = true;
    return *this;
}

Func &Func::gpu_blocks(const VarOrRVar &x) {
    Stage(func, 0).gpu_blocks(x);
    return *this;
}
Func &Func::gpu_blocks(const VarOrRVar &x, const VarOrRVar &y) {
    Stage(func, 0).gpu_blocks(x, y);
    return *this;
}
Func &Func::gpu_blocks(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z) {
    Stage(func, 0).gpu_blocks(x, y, z);
    return *this;
}
Func &Func::gpu_threads(const VarOrRVar &x) {
    Stage(func, 0).gpu_threads(x);
    return *this;
}
Func &Func::gpu_threads(const VarOrRVar &x, const VarOrRVar &y) {
    Stage(func, 0).gpu_threads(x, y);
    return *this;
}
Func &Func::gpu_threads(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z) {
    Stage(func, 0).gpu_threads(x, y, z);
    return *this;
}
Func &Func::gpu_lanes(const VarOrRVar &x) {
    Stage(func, 0).gpu_lanes(x);
    return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &tx, const Expr &x_size,
                     TailStrategy tail) {
    Stage(func, 0).gpu_tile(x, tx, x_size, tail);
    return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &tx,
                     const VarOrRVar &ty, const Expr &x_size, const Expr &y_size,
                     TailStrategy tail) {
    Stage(func, 0).gpu_tile(x, y, tx, ty, x_size, y_size, tail);
    return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z,
                     const VarOrRVar &tx, const VarOrRVar &ty, const VarOrRVar &tz,
                     const Expr &x_size, const Expr &y_size, const Expr &z_size,
                     TailStrategy tail) {
    Stage(func, 0).gpu_tile(x, y, z, tx, ty, tz, x_size, y_size, z_size, tail);
    return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx,
                     const Expr &x_size, TailStrategy tail) {
    Stage(func, 0).gpu_tile(x, bx, tx, x_size, tail);
    return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx,
                     const VarOrRVar &by, const VarOrRVar &tx, const VarOrRVar &ty,
                     const Expr &x_size, const Expr &y_size, TailStrategy tail) {
    Stage(func, 0).gpu_tile(x, y, bx, by, tx, ty, x_size, y_size, tail);
    return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z,
                     const VarOrRVar &bx, const VarOrRVar &by, const VarOrRVar &bz,
                     const VarOrRVar &tx, const VarOrRVar &ty, const VarOrRVar &tz,
                     const Expr &x_size, const Expr &y_size, const Expr &z_size,
                     TailStrategy tail) {
    Stage(func, 0).gpu_tile(x, y, z, bx, by, bz, tx, ty, tz, x_size, y_size, z_size, tail);
    return *this;
}
Func &Func::gpu_single_thread() {
    Stage(func, 0).gpu_single_thread();
    return *this;
}

Func &Func::prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from, const Expr &offset,
                     PrefetchBoundStrategy strategy) {
    Stage(func, 0).prefetch(f, at, from, offset, strategy);
    return *this;
}
Func &Func::prefetch(const BufferBase &b, const VarOrRVar &at, const VarOrRVar &from,
                     const Expr &offset, PrefetchBoundStrategy strategy) {
    Stage(func, 0).prefetch(b, at, from, offset, strategy);
    return *this;
}
Func &Func::prefetch(const ImageParam &p, const VarOrRVar &at, const VarOrRVar &from,
                     const Expr &offset, PrefetchBoundStrategy strategy) {
    Stage(func, 0).prefetch(p, at, from, offset, strategy);
    return *this;
}

Func &Func::store_in(MemoryType t) {
    func.schedule().memory_type = t;
    return *this;
}

Func &Func::store_root() {
    return store_at(LoopLevel::root());
}

Func &Func::compute_root() {
    return compute_at(LoopLevel::root());
}

Func &Func::compute_inline() {
    func.schedule().store_level_set = false;
    return compute_at(LoopLevel::inlined());
}

} // namespace aicf
