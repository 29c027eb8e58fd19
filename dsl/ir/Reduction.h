#ifndef AICF_IR_REDUCTION_H
#define AICF_IR_REDUCTION_H

// The domain of a reduction (RDom): named dimensions with a min and an extent each, innermost
// first, and an optional predicate that selects the points of the domain taking part.

#include "dsl/ir/Expr.h"

#include <string>
#include <vector>

namespace aicf {
namespace ir {

struct ReductionVariable {
    std::string var;
    Expr min, extent;
};

struct ReductionDomainContents : RefCounted {
    std::vector<ReductionVariable> domain;
    Expr predicate;
    bool used = false; // by a definition: no more where() clauses
};

class ReductionDomain {
public:
    ReductionDomain() = default;
    explicit ReductionDomain(const std::vector<ReductionVariable> &domain);

    bool defined() const { return contents.defined(); }
    const std::vector<ReductionVariable> &domain() const;
    // The conjunction of all `where` clauses (undefined when there are none). Inside it, the
    // domain's own variables are plain Variables named as in domain().
    Expr predicate() const;
    void where(Expr predicate);
    // Once a definition uses the domain, where() is refused: the definition was checked
    // with the predicate it had.
    void mark_used() { contents->used = true; }
    // The predicate, rewritten by its user (a definition that holds its own Func weakly in
    // it: a where() reading the Func it reduces would otherwise keep both alive forever).
    void set_predicate(Expr p) { contents->predicate = std::move(p); }
    bool used() const { return contents->used; }
    bool same_as(const ReductionDomain &o) const { return contents.same_as(o.contents); }
    const ReductionDomainContents *get() const { return contents.get(); }

private:
    IntrusivePtr<ReductionDomainContents> contents;
};

} // namespace ir
} // namespace aicf

#endif
