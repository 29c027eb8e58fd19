#ifndef AICF_FUNCTION_H
#define AICF_FUNCTION_H

// The compiler's view of a Func: its name, pure arguments, value types, the pure definition,
// the update definitions and their schedules. `Func` (the user's handle) wraps a Function.

#include "dsl/Schedule.h"
#include "dsl/ir/IR.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace aicf {
struct AssociativeUpdate;
namespace ir {

// The deepest expression a definition may be (CompileError past it). Definitions are checked
// on the caller's thread, which needs about 2 MiB of stack at this depth (8 MiB is the usual
// default); compilation recurses over Funcs inlined into one another, deeper than any one
// definition, and runs on a thread of its own with a far larger stack.
constexpr int max_expression_depth = 8192;

// One definition of a Func: f(args) = values, over the reduction domain `rdom` (if any).
struct Definition {
    std::vector<Expr> args;
    std::vector<Expr> values;
    ReductionDomain rdom;
    StageSchedule schedule;
    // An update that rfactor rewrote into a merge of partial results: the update as the
    // algorithm wrote it (its args, values and domain), for what reads the algorithm apart
    // from its schedule (the report's operator-by-operator baseline).
    std::shared_ptr<const Definition> as_written;
    // Such a merge, or the update of the intermediate rfactor made: the form of the update
    // it replaced, whose steps its values are (the merge's apply merge() to the Func and each
    // partial of the Func `partials`), so that it too may run across GPU threads; and the
    // element of the partials that says whether each had any point (-1 where they carry
    // none; for an intermediate's update, whose `partials` is empty, its own such element).
    struct Merge {
        std::shared_ptr<const AssociativeUpdate> form;
        std::string partials;
        int had_point = -1;
    };
    std::shared_ptr<const Merge> merges;
    bool defined() const { return !values.empty(); }
};

class Function;

struct FunctionContents {
    mutable std::atomic<int> ref_count{0};
    std::string name;
    std::vector<std::string> args;  // the pure variables, innermost (dimension 0) first
    std::vector<Type> output_types; // one per Tuple element
    Definition init;
    std::vector<Definition> updates;
    FuncSchedule schedule;
    // Wrappers made by Func::in: by the name of the consumer they serve, "" for all
    // consumers. A wrapper calls this Func weakly (this Func owns it).
    std::map<std::string, IntrusivePtr<FunctionContents>> wrappers;
};

class Function {
public:
    Function() = default;
    explicit Function(const std::string &name);
    explicit Function(FunctionContents *c) : contents(c) {}

    bool defined() const { return contents.defined(); }
    bool has_pure_definition() const;
    bool has_update_definition() const;

    const std::string &name() const;
    const std::vector<std::string> &args() const;
    int dimensions() const;
    const std::vector<Type> &output_types() const;
    int outputs() const;

    const Definition &definition() const;
    Definition &definition();
    const std::vector<Definition> &updates() const;
    Definition &update(int i);
    // Stage 0 is the pure definition, stage i > 0 is update i - 1.
    Definition &stage(int s);
    const Definition &stage(int s) const;
    int stages() const;

    FuncSchedule &schedule();
    const FuncSchedule &schedule() const;

    // Sets the pure definition (checks the user-facing rules and raises CompileError).
    void define(const std::vector<std::string> &args, const std::vector<Expr> &values);
    // Adds an update definition (checks the rules and raises CompileError).
    void define_update(const std::vector<Expr> &args, const std::vector<Expr> &values);

    // A Call node reading element `value_index` of this Func at `args`.
    Expr call(const std::vector<Expr> &args, int value_index) const;

    // A new Function with the same name, definitions and schedule (for lowering to rewrite
    // without touching the user's Funcs).
    Function copy() const;

    FunctionContents *get() const { return contents.get(); }
    bool same_as(const Function &o) const { return contents.same_as(o.contents); }
    bool operator<(const Function &o) const { return contents.get() < o.contents.get(); }

private:
    IntrusivePtr<FunctionContents> contents;
};

// e with its calls to `callee` holding it weakly: for references back to a Func that owns
// the referring definition (its own updates, its wrappers, its rfactor merge).
Expr weaken_calls_to(const Expr &e, const FunctionContents *callee);

// The Funcs a Func calls directly, in each definition.
std::vector<Function> direct_callees(const Function &f);

} // namespace ir
} // namespace aicf

#endif
