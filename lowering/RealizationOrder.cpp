#include "lowering/RealizationOrder.h"

#include "dsl/base/Error.h"

#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

struct TopoSort {
    const std::map<std::string, Function> &env;
    std::vector<std::string> order;
    std::set<std::string> done;
    std::vector<std::string> path;

    void visit(const Function &f) {
        if (done.count(f.name())) return;
        for (size_t i = 0; i < path.size(); i++) {
            if (path[i] != f.name()) continue;
            std::string cycle;
            for (size_t j = i; j < path.size(); j++)
                cycle += path[j] + " -> ";
            user_error << "Func " << f.name() << " depends on itself: " << cycle << f.name()
                       << ". A Func may read itself only in its own update definitions.";
        }
        path.push_back(f.name());
        for (const Function &g : direct_callees(f)) {
            // A Func's updates may read the Func itself. By name: lowering may have rewritten a
            // copy of f whose self-calls still point at the Func the user defined.
            if (g.name() == f.name()) continue;
            visit(env.at(g.name()));
        }
        path.pop_back();
        done.insert(f.name());
        order.push_back(f.name());
    }
};

} // namespace

std::vector<std::string> realization_order(const std::vector<Function> &outputs,
                                           const std::map<std::string, Function> &env) {
    TopoSort sort{env, {}, {}, {}};
    for (const Function &f : outputs)
        sort.visit(f);
    return sort.order;
}

} // namespace lowering
} // namespace aicf
