#include "lowering/FuncPlacement.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "lowering/ScheduleFunctions.h"

#include <optional>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The loops of the statement, outermost first, for error messages.
std::vector<std::string> loop_names_in(const Stmt &s) {
    std::vector<std::string> names;
    visit_each<For>(s, [&](const For *op) { names.push_back(op->name); });
    return names;
}

} // namespace

std::string find_level_loop(const Stmt &s, const LoopLevel &level) {
    std::string found;
    int found_stage = -1;
    visit_each<For>(s, [&](const For *op) {
        LoopNameParts loop = parse_loop_name(op->name);
        if (loop.func != level.func() || loop.var != level.var()) return;
        if (level.stage() >= 0 && loop.stage != level.stage()) return;
        if (loop.stage > found_stage) {
            found_stage = loop.stage;
            found = op->name;
        }
    });
    return found;
}

std::set<std::string> names_that_use(const Function &f, const std::vector<Function> &outputs,
                                     const std::map<std::string, Function> &env) {
    std::set<std::string> names{f.name()};
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto &[name, g] : env) {
            if (names.count(name) || !is_inlined(g, outputs)) continue;
            bool calls = false;
            auto look = [&](const Expr &e) {
                visit_each<Call>(e, [&](const Call *c) {
                    calls = calls || (c->call_type == Call::Func && names.count(c->name));
                });
            };
            for (const Expr &e : g.definition().args)
                look(e);
            for (const Expr &e : g.definition().values)
                look(e);
            if (calls) grew = names.insert(name).second;
        }
    }
    return names;
}

std::string innermost_loop_around_uses(const Stmt &s, const std::set<std::string> &uses) {
    struct Walk : IRVisitor {
        const std::set<std::string> &uses;
        std::vector<const For *> loops;
        std::optional<std::vector<const For *>> common;
        std::map<std::string, std::set<std::string>> let_vars; // the variables a let stands for
        std::set<std::string> depends;                         // what the uses' points name
        explicit Walk(const std::set<std::string> &u) : uses(u) {}
        using IRVisitor::visit;
        std::set<std::string> vars_of(const Expr &e) {
            std::set<std::string> vars;
            visit_each<Variable>(e, [&](const Variable *v) {
                vars.insert(v->name);
                auto it = let_vars.find(v->name);
                if (it != let_vars.end()) vars.insert(it->second.begin(), it->second.end());
            });
            return vars;
        }
        void visit(const LetStmt *op) override {
            op->value.accept(this);
            std::set<std::string> vars = vars_of(op->value);
            auto saved = let_vars.find(op->name) == let_vars.end()
                             ? std::optional<std::set<std::string>>()
                             : std::optional<std::set<std::string>>(let_vars[op->name]);
            let_vars[op->name] = vars;
            op->body.accept(this);
            if (saved)
                let_vars[op->name] = *saved;
            else
                let_vars.erase(op->name);
        }
        void visit(const For *op) override {
            op->min.accept(this);
            op->extent.accept(this);
            loops.push_back(op);
            op->body.accept(this);
            loops.pop_back();
        }
        void visit(const Call *op) override {
            IRVisitor::visit(op);
            if (op->call_type != Call::Func || !uses.count(op->name)) return;
            for (const Expr &a : op->args) {
                std::set<std::string> vars = vars_of(a);
                depends.insert(vars.begin(), vars.end());
            }
            if (!common) {
                common = loops;
                return;
            }
            size_t n = 0;
            while (n < common->size() && n < loops.size() && (*common)[n] == loops[n])
                n++;
            common->resize(n);
        }
    } walk(uses);
    s.accept(&walk);
    if (!walk.common) return "";
    const std::vector<const For *> &around = *walk.common;
    // The innermost loop the points depend on, and the innermost GPU thread loop.
    int deepest = -1, thread = -1;
    for (int i = 0; i < int(around.size()); i++) {
        if (walk.depends.count(around[size_t(i)]->name)) deepest = i;
        if (around[size_t(i)]->for_type == ForType::GPUThread ||
            around[size_t(i)]->for_type == ForType::GPULane)
            thread = i;
    }
    if (thread > deepest) deepest = thread; // inside a kernel: in its threads
    for (int i = deepest; i >= 0; i--) {
        const ForType t = around[size_t(i)]->for_type;
        if (t != ForType::Vectorized && t != ForType::Unrolled) return around[size_t(i)]->name;
    }
    return "";
}

std::string describe_valid_levels(const std::set<std::string> &uses_of_f, const Stmt &s) {
    // A loop can hold the Func when every use lies inside it.
    auto uses_in = [&](const Stmt &where) {
        int64_t n = 0;
        visit_each<Call>(where, [&](const Call *c) {
            n += c->call_type == Call::Func && uses_of_f.count(c->name);
        });
        return n;
    };
    const int64_t all = uses_in(s);
    std::string text;
    for (const std::string &n : loop_names_in(s)) {
        int64_t inside = 0;
        visit_each<For>(s, [&](const For *op) {
            if (op->name == n) inside += uses_in(Stmt(op));
        });
        if (inside > 0 && inside == all) text += "  " + loop_for_users(n) + "\n";
    }
    if (text.empty()) return "  none: no loop encloses every use (only the root, or inline)";
    return text + "  (or root, or inline)";
}

void check_uses_enclosed(const Function &f, const std::set<std::string> &uses_of_f, const Stmt &s,
                         const std::string &site, const std::map<std::string, Function> &env) {
    struct Checker : IRVisitor {
        const std::string &name;
        const std::set<std::string> &uses;
        int depth = 0;
        std::vector<std::string> producers; // the Funcs being computed around the current node
        std::string stray, stray_in;
        Checker(const std::string &n, const std::set<std::string> &u) : name(n), uses(u) {}
        using IRVisitor::visit;
        void visit(const ProducerConsumer *op) override {
            depth += op->name == name;
            if (op->is_producer) producers.push_back(op->name);
            IRVisitor::visit(op);
            if (op->is_producer) producers.pop_back();
            depth -= op->name == name;
        }
        void visit(const Call *op) override {
            if (uses.count(op->name) && op->call_type == Call::Func && depth == 0 &&
                stray.empty()) {
                stray = with_user_loop_names(to_string(Expr(op)));
                if (op->name != name) stray += " (inlined, it calls " + name + ")";
                if (!producers.empty()) stray_in = producers.back();
            }
            IRVisitor::visit(op);
        }
    } checker(f.name(), uses_of_f);
    s.accept(&checker);
    if (checker.stray.empty()) return;
    // A use inside a Func that has update definitions and was given no place: it is computed
    // at the root by default, outside the loop, and placing it there too is the usual fix.
    std::string advice;
    auto user = env.find(checker.stray_in);
    if (user != env.end() && user->second.has_update_definition() &&
        !user->second.schedule().compute_level_set &&
        parse_loop_name(site).func != checker.stray_in) {
        const std::string &u = checker.stray_in;
        advice = " The use is in " + u +
                 ", which has update definitions and no compute_at, so it is " +
                 "computed at the root (the default for such a Func). Compute " + u +
                 " inside that " + "loop too (" + u + ".compute_at(" + loop_stage_for_users(site) +
                 ", " + loop_var_for_users(site) + ")), or compute_root() " + f.name() + ".";
    }
    const std::string in_func =
        checker.stray_in.empty() ? "" : " in the definition of " + checker.stray_in;
    user_error << "Func " << f.name() << " is computed inside the loop " << loop_for_users(site)
               << ", but the call " << checker.stray << in_func
               << " uses it outside that loop. Compute " << f.name()
               << " at a loop that encloses all its uses, or compute_root() it." << advice;
}

} // namespace lowering
} // namespace aicf
