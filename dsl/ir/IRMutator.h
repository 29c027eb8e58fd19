#ifndef AICF_IR_IR_MUTATOR_H
#define AICF_IR_IR_MUTATOR_H

// Rebuilds IR bottom-up. The default visit of each node mutates its children and returns the
// node itself when none of them changed, so a mutator that changes nothing copies nothing.

#include "dsl/ir/IR.h"

#include <unordered_map>

#include <vector>

namespace aicf {
namespace ir {

class IRMutator {
public:
    virtual ~IRMutator() = default;
    virtual Expr mutate(const Expr &e);
    virtual Stmt mutate(const Stmt &s);
    Expr operator()(const Expr &e) { return mutate(e); }
    Stmt operator()(const Stmt &s) { return mutate(s); }

    // Mutates each element; returns true when any changed.
    bool mutate_exprs(const std::vector<Expr> &in, std::vector<Expr> &out);

#define AICF_MUTATE_EXPR_DECL(N) virtual Expr visit(const N *);
#define AICF_MUTATE_STMT_DECL(N) virtual Stmt visit(const N *);
    AICF_FOR_EACH_EXPR(AICF_MUTATE_EXPR_DECL)
    AICF_FOR_EACH_STMT(AICF_MUTATE_STMT_DECL)
#undef AICF_MUTATE_EXPR_DECL
#undef AICF_MUTATE_STMT_DECL
};

// A mutator that rewrites each distinct expression node once and reuses the result wherever
// the node is shared, so that an expression that is small as a graph but exponential as a
// tree takes time in proportion to the graph. Only for rewrites that do not depend on where
// a node is reached (no scopes).
class IRGraphMutator : public IRMutator {
public:
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override;

private:
    std::unordered_map<const IRNode *, Expr> done;
};

} // namespace ir
} // namespace aicf

#endif
