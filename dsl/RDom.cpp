#include "dsl/RDom.h"

#include "dsl/Buffer.h"
#include "dsl/Param.h"
#include "dsl/Var.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"

namespace aicf {

using namespace ir;

namespace {

// x, y, z and w of an RDom with fewer dimensions exist as members: using one is an error that
// says so (the RDom is defined; the dimension is not).
void check_dimension(const ReductionDomain &dom, int index) {
    if (!dom.defined() || index < int(dom.domain().size())) return;
    static const char *suffix[] = {"x", "y", "z", "w"};
    const std::string &first = dom.domain()[0].var;
    const std::string base = first.substr(0, first.rfind('.'));
    user_error << "RDom " << base << " has " << dom.domain().size() << " dimension"
               << (dom.domain().size() == 1 ? "" : "s") << ", so " << base << "."
               << (index < 4 ? suffix[index] : std::to_string(index)) << " (dimension " << index
               << ") does not exist. Its dimensions are " << base << ".x"
               << (dom.domain().size() > 1 ? " to " + dom.domain().back().var : "") << ".";
}

} // namespace

RVar::RVar() : name_(detail::unique_name("rv")) {}

const std::string &RVar::name() const {
    if (!dom_.defined() && !name_.empty()) return name_;
    user_assert(dom_.defined()) << "Use of an RVar of an undefined RDom.";
    check_dimension(dom_, index_);
    return dom_.domain().at(index_).var;
}
Expr RVar::min() const {
    user_assert(dom_.defined()) << "RVar " << name()
                                << " names a loop made by a schedule; it has no range of its own.";
    check_dimension(dom_, index_);
    return dom_.domain().at(index_).min;
}
Expr RVar::extent() const {
    user_assert(dom_.defined()) << "RVar " << name()
                                << " names a loop made by a schedule; it has no range of its own.";
    check_dimension(dom_, index_);
    return dom_.domain().at(index_).extent;
}
RVar::operator Expr() const {
    user_assert(dom_.defined())
        << (name_.empty()
                ? "Use of an RVar of an undefined RDom."
                : "RVar " + name_ +
                      " names a loop made by a schedule (a split or fuse of "
                      "reduction variables); it cannot be used in an algorithm. Use the RDom's own "
                      "variables there.");
    return Variable::make(Int(32), name(), dom_);
}

RDom::RDom(Expr min, Expr extent, const std::string &name) {
    init({{min, extent}}, name);
}

RDom::RDom(const std::vector<std::pair<Expr, Expr>> &ranges, const std::string &name) {
    init(ranges, name);
}

RDom::RDom(const BufferBase &buffer, const std::string &name) {
    user_assert(buffer.defined()) << "An RDom over an undefined Buffer.";
    std::vector<std::pair<Expr, Expr>> ranges;
    for (int d = 0; d < buffer.dimensions(); d++)
        ranges.emplace_back(Expr(buffer.min(d)), Expr(buffer.extent(d)));
    user_assert(!ranges.empty()) << "An RDom over Buffer " << buffer.name()
                                 << ", which has no dimensions: it has one point, and no loop "
                                    "to reduce over.";
    init(ranges, name);
}

RDom::RDom(const ImageParam &image, const std::string &name) {
    user_assert(image.parameter().defined()) << "An RDom over an ImageParam that was never given "
                                             << "a type and rank (default-constructed).";
    std::vector<std::pair<Expr, Expr>> ranges;
    for (int d = 0; d < image.dimensions(); d++)
        ranges.emplace_back(image.dim(d).min(), image.dim(d).extent());
    user_assert(!ranges.empty()) << "An RDom over ImageParam " << image.name()
                                 << ", which has no dimensions: it has one point, and no loop "
                                    "to reduce over.";
    init(ranges, name);
}

RDom::RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, const std::string &name) {
    init({{min0, extent0}, {min1, extent1}}, name);
}

RDom::RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, Expr min2, Expr extent2,
           const std::string &name) {
    init({{min0, extent0}, {min1, extent1}, {min2, extent2}}, name);
}

void RDom::init(const std::vector<std::pair<Expr, Expr>> &ranges, const std::string &name) {
    std::string base = name.empty() ? detail::unique_name("r") : name;
    if (!name.empty()) detail::check_user_name(name, "RDom");
    user_assert(!ranges.empty()) << "RDom " << base << " needs at least one dimension.";
    static const char *suffix[] = {"x", "y", "z", "w"};
    std::vector<ReductionVariable> vars;
    for (size_t i = 0; i < ranges.size(); i++) {
        Expr mn = ranges[i].first, ex = ranges[i].second;
        user_assert(mn.defined() && ex.defined())
            << "Dimension " << i << " of RDom " << base << " has an undefined min or extent.";
        for (const Expr *e : {&mn, &ex}) {
            user_assert(e->type().is_int_or_uint() && e->type().is_scalar())
                << "Dimension " << i << " of RDom " << base << " has a "
                << (e == &mn ? "min" : "extent") << " of type " << to_string(e->type()) << " ("
                << *e << "); RDom bounds must be integers.";
            visit_each<Variable>(*e, [&](const Variable *v) {
                user_assert(v->param.defined())
                    << "The " << (e == &mn ? "min" : "extent") << " of dimension " << i
                    << " of RDom " << base << " uses the variable " << v->name
                    << ". RDom bounds may use constants, Params and input buffer sizes, not "
                    << "Vars or RVars.";
            });
            visit_each<Call>(*e, [&](const Call *c) {
                user_assert(c->call_type != Call::Func)
                    << "The " << (e == &mn ? "min" : "extent") << " of dimension " << i
                    << " of RDom " << base << " calls the Func " << c->name
                    << ". RDom bounds may use constants, Params and input buffer sizes, not "
                    << "Funcs: realize " << c->name << " first and pass its value as a Param.";
            });
            // Coordinates are 32-bit: a bound that int32 does not hold would wrap.
            detail::check_schedule_size(*e, std::string("The ") + (e == &mn ? "min" : "extent") +
                                                " of dimension " + std::to_string(i) + " of RDom " +
                                                base);
        }
        if (auto c = as_const_int(ex)) {
            user_assert(*c >= 0) << "Dimension " << i << " of RDom " << base
                                 << " has a negative extent (" << *c << ").";
            // Loops count in 32 bits: the last point must be at most 2^31 - 2 (as the check
            // of bounds known only at run time requires).
            if (auto m = as_const_int(mn); m && *c > 0) {
                user_assert(*m + *c - 1 <= int64_t(INT32_MAX) - 1)
                    << "Dimension " << i << " of RDom " << base << " runs from " << *m << " over "
                    << *c << " points, past 2^31 - 2, the last coordinate 32-bit "
                    << "loops reach. Give it a smaller min or extent.";
            }
        }
        // "r.x": the name users write; the '.' keeps it apart from any Var.
        std::string vname = base + "." + (i < 4 ? suffix[i] : std::to_string(i));
        vars.push_back({vname, ir::cast(Int(32), mn), ir::cast(Int(32), ex)});
    }
    dom_ = ReductionDomain(vars);
    RVar *named[] = {&x, &y, &z, &w};
    for (size_t i = 0; i < 4; i++)
        *named[i] = RVar(dom_, static_cast<int>(i)); // past the dimensions: an error when used
}

int RDom::dimensions() const {
    return dom_.defined() ? static_cast<int>(dom_.domain().size()) : 0;
}

RVar RDom::operator[](int i) const {
    user_assert(i >= 0 && i < dimensions())
        << "RDom has " << dimensions() << " dimensions; index " << i << " is out of range.";
    return RVar(dom_, i);
}

RDom::operator RVar() const {
    user_assert(dimensions() != 0)
        << "An RDom made with no bounds (RDom r;) is used as a reduction variable. Give it its "
        << "bounds first: r = RDom(min, extent) for each dimension.";
    user_assert(dimensions() == 1)
        << "An RDom of " << dimensions() << " dimensions used as a single RVar; use r.x, r.y, ...";
    return RVar(dom_, 0);
}

RDom::operator Expr() const {
    return Expr(RVar(*this));
}

RDom &RDom::where(Expr predicate) {
    user_assert(dom_.defined()) << "where() on an undefined RDom.";
    user_assert(predicate.defined() && predicate.type().is_bool() && predicate.type().is_scalar())
        << "The predicate given to RDom::where must be a bool expression.";
    const std::string &first = dom_.domain()[0].var;
    const std::string name = first.substr(0, first.rfind('.'));
    user_assert(!dom_.used())
        << "RDom " << name << " is already used by a definition, so where() comes too late: "
        << "the definitions made so far would change behind their checks. Give where() "
        << "before the first definition that uses " << name << ", or make a new RDom.";
    dom_.where(predicate);
    return *this;
}

} // namespace aicf
