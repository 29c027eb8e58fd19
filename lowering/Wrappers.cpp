#include "lowering/Wrappers.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IRVisitor.h"

#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

bool is_wrapper_of(const Function &f, const std::string &name) {
    for (const auto &w : f.get()->wrappers)
        if (w.second->name == name) return true;
    return false;
}

class Redirect : public IRGraphMutator {
public:
    Redirect(const std::string &consumer, const std::map<std::string, Function> &env)
        : consumer(consumer), env(env) {}
    bool changed = false;

private:
    const std::string &consumer;
    const std::map<std::string, Function> &env;
    using IRGraphMutator::visit;

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        // A Func reading itself in its updates is not one of its consumers: f.in() wraps f for
        // the other Funcs only.
        if (c->call_type != Call::Func || c->name == consumer) return e;
        auto it = env.find(c->name);
        if (it == env.end() || is_wrapper_of(it->second, consumer)) return e;
        const auto &wrappers = it->second.get()->wrappers;
        auto w = wrappers.find(consumer);
        if (w == wrappers.end()) w = wrappers.find("");
        if (w == wrappers.end()) return e;
        changed = true;
        return Call::make_func(c->type, w->second->name, c->args, FunctionPtr(w->second.get()),
                               c->value_index);
    }
};

bool rewrite(Definition &d, Redirect &r) {
    bool before = r.changed;
    for (Expr &e : d.args)
        e = r.mutate(e);
    for (Expr &e : d.values)
        e = r.mutate(e);
    return r.changed && !before;
}

} // namespace

std::vector<Function> redirect_to_wrappers(const std::vector<Function> &outputs,
                                           std::map<std::string, Function> &env) {
    // Each round moves calls one wrapper further along a chain; chains are finite.
    for (size_t round = 0; round <= env.size(); round++) {
        bool any = false;
        for (auto &kv : env) {
            Redirect probe(kv.first, env);
            Function g = kv.second;
            for (int s = 0; s < g.stages() && !probe.changed; s++) {
                Definition d = g.stage(s);
                rewrite(d, probe);
            }
            if (!probe.changed) continue;
            Function copy = g.copy();
            Redirect r(kv.first, env);
            for (int s = 0; s < copy.stages(); s++)
                rewrite(copy.stage(s), r);
            kv.second = copy;
            any = true;
        }
        if (!any) break;
    }
    // A wrapper for a consumer of this pipeline that does not call the wrapped Func would
    // never be read, and its schedule would silently do nothing. (The consumer's calls now
    // go to the wrapper or to the end of a chain of wrappers of it, f.in(g).in(g).)
    for (const auto &kv : env) {
        for (const auto &[consumer, w] : kv.second.get()->wrappers) {
            auto c = env.find(consumer);
            if (consumer.empty() || c == env.end()) continue;
            std::set<std::string> chain = {kv.first};
            for (const FunctionContents *link = w.get(); link;) {
                chain.insert(link->name);
                auto next = link->wrappers.find(consumer);
                if (next == link->wrappers.end()) next = link->wrappers.find("");
                link = next == link->wrappers.end() ? nullptr : next->second.get();
            }
            auto calls = [&](const Expr &e) {
                bool found = false;
                visit_each<Call>(e, [&](const Call *op) {
                    found = found || (op->call_type == Call::Func && chain.count(op->name));
                });
                return found;
            };
            bool reads = false, in_where = false;
            for (int s = 0; s < c->second.stages(); s++) {
                const Definition &d = c->second.stage(s);
                for (const std::vector<Expr> *list : {&d.args, &d.values})
                    for (const Expr &e : *list)
                        reads = reads || calls(e);
                if (d.rdom.defined() && d.rdom.predicate().defined())
                    in_where = in_where || calls(d.rdom.predicate());
            }
            user_assert(reads || !in_where)
                << "Func " << w->name << " wraps " << kv.first << " for " << consumer << " ("
                << kv.first << ".in(" << consumer << ")), but " << consumer << " reads " << kv.first
                << " only in the where() of an RDom, which reads the Func itself, "
                << "not a wrapper: the wrapper would never be read. Schedule " << kv.first
                << " itself, or read it through a Func of your own.";
            user_assert(reads) << "Func " << w->name << " wraps " << kv.first << " for " << consumer
                               << " (" << kv.first << ".in(" << consumer << ")), but " << consumer
                               << " does not call " << kv.first
                               << ", so the wrapper would never be read and its schedule would "
                                  "do nothing. Wrap "
                               << kv.first << " for a Func that calls it.";
        }
    }
    std::vector<Function> result;
    for (const Function &o : outputs)
        result.push_back(env.at(o.name()));
    return result;
}

} // namespace lowering
} // namespace aicf
