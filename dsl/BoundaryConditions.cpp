#include "dsl/BoundaryConditions.h"

#include "dsl/Buffer.h"
#include "dsl/Operators.h"
#include "dsl/Var.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Simplify.h"

#include <functional>
#include <string>

namespace aicf {
namespace BoundaryConditions {

namespace {

enum class Kind { RepeatEdge, ConstantExterior, RepeatImage, MirrorImage, MirrorInterior };

const char *name_of(Kind k) {
    switch (k) {
    case Kind::RepeatEdge:
        return "repeat_edge";
    case Kind::ConstantExterior:
        return "constant_exterior";
    case Kind::RepeatImage:
        return "repeat_image";
    case Kind::MirrorImage:
        return "mirror_image";
    case Kind::MirrorInterior:
        return "mirror_interior";
    }
    return "";
}

// What the boundary condition reads: a name, a rank, a type, and a read at given coordinates.
struct Source {
    std::string name;
    int dimensions = 0;
    Type type;
    std::function<Expr(const std::vector<Expr> &)> read;
};

// The coordinate inside [m, m + e - 1] that `x` maps to. Each result is clamped into the
// region as well (a no-op for an extent of at least 1), so that bounds inference finds the
// region itself whatever it makes of the arithmetic. In dimension 0 (`likely`), a coordinate
// that wraps or reflects is x itself inside the region, which a likely() select says: loop
// partitioning then reads the interior as the clamp of x alone (no remainder, no gather of
// vector lanes). Only there: the loops over the other dimensions are outer ones, where the
// coordinate is computed once per row, and partitioning them too copied the loop nest per
// dimension (a 3-D stencil's output store 18 times; 13 s to compile a 125-point one).
Expr inside(Kind kind, const Expr &x, const Expr &m, const Expr &e, bool likely_inside) {
    const Expr last = m + e - 1;
    Expr t;
    switch (kind) {
    case Kind::RepeatEdge:
    case Kind::ConstantExterior:
        return clamp(x, m, last);
    case Kind::RepeatImage:
        t = (x - m) % e;
        break;
    case Kind::MirrorImage:
        t = (x - m) % (e * 2);
        t = select(t < e, t, e * 2 - 1 - t);
        break;
    case Kind::MirrorInterior:
        // Period 2e - 2; an extent of 1 gives period 0, and x % 0 is 0: the one point.
        t = (x - m) % (e * 2 - 2);
        t = select(t < e, t, e * 2 - 2 - t);
        break;
    }
    if (!likely_inside) return clamp(m + t, m, last);
    return select(likely(x >= m && x <= last), clamp(x, m, last), clamp(m + t, m, last));
}

Func make(Kind kind, const Source &source, const Region &bounds, const Expr &value) {
    const std::string what =
        std::string("BoundaryConditions::") + name_of(kind) + " of " + source.name;
    user_assert(int(bounds.size()) <= source.dimensions)
        << what << " is given a region of " << bounds.size() << " dimensions, but " << source.name
        << " has " << source.dimensions
        << ". Give one {min, extent} per dimension, from dimension 0 ({Expr(), Expr()} leaves "
        << "a dimension unbounded).";
    std::vector<Var> args;
    std::vector<Expr> coords;
    Expr in_region;
    for (int d = 0; d < source.dimensions; d++) {
        args.emplace_back(detail::unique_name("x"));
        Expr x = args.back();
        const bool bounded = d < int(bounds.size()) && bounds[d].first.defined();
        if (d < int(bounds.size())) {
            user_assert(bounds[d].first.defined() == bounds[d].second.defined())
                << what << ": dimension " << d << " is given "
                << (bounds[d].first.defined() ? "a min but no extent" : "an extent but no min")
                << ". Give both, or neither to leave the dimension unbounded.";
        }
        if (!bounded) {
            coords.push_back(x);
            continue;
        }
        Expr m = bounds[d].first, e = bounds[d].second;
        user_assert(m.type().is_int() && m.type().is_scalar() && e.type().is_int() &&
                    e.type().is_scalar())
            << what << ": the region of dimension " << d << " is [" << m << ", extent " << e
            << "], but a min and an extent are integers.";
        m = cast<int32_t>(m);
        e = cast<int32_t>(e);
        if (auto n = ir::as_const_int(ir::simplify(e))) {
            user_assert(*n > 0) << what << ": the region of dimension " << d << " has extent " << *n
                                << ", so there is no point to read. Give an extent of at "
                                   "least 1.";
        }
        coords.push_back(inside(kind, x, m, e, d == 0));
        if (kind == Kind::ConstantExterior) {
            // Likely inside in dimension 0 (see inside()): loop partitioning leaves the
            // interior of the innermost loop without the test.
            Expr here = x >= m && x < m + e;
            if (d == 0) here = likely(here);
            in_region = in_region.defined() ? Expr(in_region && here) : here;
        }
    }
    Func f(detail::unique_name(source.name + "_" + name_of(kind)));
    Expr read = source.read(coords);
    if (kind == Kind::ConstantExterior && in_region.defined()) {
        user_assert(value.defined()) << what << " is given no value for the points outside.";
        const Type t = source.type.element_of();
        if (value.type() != source.type) {
            // A constant converts where the type holds it (a float one rounds into a float
            // type); anything else must have the source's type already.
            auto i = ir::as_const_int(value);
            auto f = ir::as_const_float(value);
            const bool fits =
                t.is_float() ? (i || f) : (i ? t.can_represent(*i) : f && t.can_represent(*f));
            user_assert(fits) << what << " is given the value " << value << " for the points "
                              << "outside, but " << source.name << " holds " << to_string(t)
                              << ", which " << (i || f ? "cannot hold it" : "is another type")
                              << ". Give a value of that type (cast it to say how it converts).";
        }
        read = select(in_region, read, aicf::cast(source.type, value));
    }
    f(args) = read;
    return f;
}

Source source_of(const ImageParam &in) {
    user_assert(in.parameter().defined())
        << "A boundary condition of an ImageParam that was never given a type and rank "
        << "(default-constructed). Declare it as ImageParam(Float(32), 2, \"in\").";
    return {in.name(), in.dimensions(), in.type(),
            [in](const std::vector<Expr> &c) { return in(c); }};
}
Region region_of(const ImageParam &in) {
    Region r;
    for (int d = 0; d < in.dimensions(); d++)
        r.push_back({in.dim(d).min(), in.dim(d).extent()});
    return r;
}

Source source_of(const BufferBase &in) {
    return {in.name(), in.dimensions(), in.type(),
            [in](const std::vector<Expr> &c) { return in(c); }};
}
Region region_of(const BufferBase &in) {
    Region r;
    for (int d = 0; d < in.dimensions(); d++)
        r.push_back({Expr(in.min(d)), Expr(in.extent(d))});
    return r;
}

Source source_of(const Func &f, const char *kind) {
    user_assert(f.defined()) << "BoundaryConditions::" << kind << " of Func " << f.name()
                             << ", which has no definition yet. Define it first.";
    user_assert(f.outputs() == 1) << "BoundaryConditions::" << kind << " of Func " << f.name()
                                  << ", whose values are a "
                                  << "Tuple of " << f.outputs()
                                  << ". Apply it to a Func of each element.";
    return {f.name(), f.dimensions(), f.type(),
            [f](const std::vector<Expr> &c) { return Expr(f(c)); }};
}

} // namespace

#define AICF_BOUNDARY_CONDITION(NAME, KIND)                                                        \
    Func NAME(const ImageParam &source) {                                                          \
        return make(KIND, source_of(source), region_of(source), Expr());                           \
    }                                                                                              \
    Func NAME(const BufferBase &source) {                                                          \
        return make(KIND, source_of(source), region_of(source), Expr());                           \
    }                                                                                              \
    Func NAME(const Func &source, const Region &bounds) {                                          \
        return make(KIND, source_of(source, #NAME), bounds, Expr());                               \
    }
AICF_BOUNDARY_CONDITION(repeat_edge, Kind::RepeatEdge)
AICF_BOUNDARY_CONDITION(repeat_image, Kind::RepeatImage)
AICF_BOUNDARY_CONDITION(mirror_image, Kind::MirrorImage)
AICF_BOUNDARY_CONDITION(mirror_interior, Kind::MirrorInterior)
#undef AICF_BOUNDARY_CONDITION

Func constant_exterior(const ImageParam &source, Expr value) {
    return make(Kind::ConstantExterior, source_of(source), region_of(source), value);
}
Func constant_exterior(const BufferBase &source, Expr value) {
    return make(Kind::ConstantExterior, source_of(source), region_of(source), value);
}
Func constant_exterior(const Func &source, Expr value, const Region &bounds) {
    return make(Kind::ConstantExterior, source_of(source, "constant_exterior"), bounds, value);
}

} // namespace BoundaryConditions
} // namespace aicf
