#ifndef AICF_RDOM_H
#define AICF_RDOM_H

// RDom: a reduction domain, the multi-dimensional range an update definition iterates over.
// RVar: one of its dimensions, or a name for the loops that splitting one produces
// (`RVar ko("ko"), ki("ki"); f.update().split(k, ko, ki, 128)`). `where` restricts the domain
// to points satisfying a predicate.

#include "dsl/ir/IR.h"

#include <string>
#include <utility>
#include <vector>

namespace aicf {

class BufferBase;
class ImageParam;

class RVar {
public:
    // A reduction loop of a new name ("rv0", "rv1", ...), for the loops a split or fuse makes.
    RVar();
    RVar(ir::ReductionDomain dom, int index) : dom_(std::move(dom)), index_(index) {}
    // A reduction loop known only by name: the result of a split or fuse of RVars.
    explicit RVar(const std::string &name) : name_(name) {}

    const std::string &name() const;
    ir::Expr min() const;
    ir::Expr extent() const;
    const ir::ReductionDomain &domain() const { return dom_; }
    int index() const { return index_; }
    operator ir::Expr() const;

private:
    ir::ReductionDomain dom_;
    int index_ = 0;
    std::string name_;
};

class RDom {
public:
    RDom() = default;
    // One dimension from min to min + extent - 1.
    RDom(ir::Expr min, ir::Expr extent, const std::string &name = "");
    // One dimension per (min, extent) pair, innermost first.
    RDom(const std::vector<std::pair<ir::Expr, ir::Expr>> &ranges, const std::string &name = "");
    // Every point of a buffer's region: one dimension per dimension of the buffer, over its
    // mins and extents (an ImageParam's at run time; a Buffer's as they are now).
    explicit RDom(const BufferBase &buffer, const std::string &name = "");
    explicit RDom(const ImageParam &image, const std::string &name = "");
    RDom(ir::Expr min0, ir::Expr extent0, ir::Expr min1, ir::Expr extent1,
         const std::string &name = "");
    RDom(ir::Expr min0, ir::Expr extent0, ir::Expr min1, ir::Expr extent1, ir::Expr min2,
         ir::Expr extent2, const std::string &name = "");

    int dimensions() const;
    RVar operator[](int i) const;
    // A one-dimensional RDom converts to its only RVar.
    operator RVar() const;
    operator ir::Expr() const;

    // Keeps only the points where `predicate` holds (may be called several times).
    RDom &where(ir::Expr predicate);

    const ir::ReductionDomain &domain() const { return dom_; }
    bool defined() const { return dom_.defined(); }

    RVar x, y, z, w;

private:
    ir::ReductionDomain dom_;
    void init(const std::vector<std::pair<ir::Expr, ir::Expr>> &ranges, const std::string &name);
};

} // namespace aicf

#endif
