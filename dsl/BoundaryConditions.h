#ifndef AICF_BOUNDARY_CONDITIONS_H
#define AICF_BOUNDARY_CONDITIONS_H

// Boundary conditions: a Func defined everywhere that reads an input (or a Func) inside a
// region and says what lies outside it. Reads of the source stay inside the region in every
// case, so bounds inference asks the input for exactly that region.
//
//   Func padded = BoundaryConditions::repeat_edge(in);    // in: an ImageParam or a Buffer
//   blur(x, y) = (padded(x - 1, y) + padded(x, y) + padded(x + 1, y)) / 3;
//
// The region is the input's own (its mins and extents, at run time for an ImageParam, as the
// Buffer has them now for a Buffer), or given for a Func: one {min, extent} per dimension,
// from dimension 0; a dimension left out, or given as {Expr(), Expr()}, is read as it is.
// Outside the region, along each bounded dimension:
//   repeat_edge        the nearest edge point:       a a a | a b c d | d d d
//   constant_exterior  `value`, in every dimension:   v v v | a b c d | v v v
//   repeat_image       the region tiled:             b c d | a b c d | a b c
//   mirror_image       reflected, edges repeated:    c b a | a b c d | d c b
//   mirror_interior    reflected about the edges:    d c b | a b c d | c b a
// The result is a plain Func: inlined into its consumers by default, or scheduled like any
// other (compute_at a tile of its consumer, stored in shared memory on a GPU).

#include "dsl/Func.h"
#include "dsl/Operators.h"
#include "dsl/Param.h"

#include <utility>
#include <vector>

namespace aicf {

class BufferBase;

namespace BoundaryConditions {

// Per dimension, from dimension 0: the first point and the number of points of the region
// where the source is read.
using Region = std::vector<std::pair<Expr, Expr>>;

Func repeat_edge(const ImageParam &source);
Func repeat_edge(const BufferBase &source);
Func repeat_edge(const Func &source, const Region &bounds);

Func constant_exterior(const ImageParam &source, Expr value);
Func constant_exterior(const BufferBase &source, Expr value);
Func constant_exterior(const Func &source, Expr value, const Region &bounds);

Func repeat_image(const ImageParam &source);
Func repeat_image(const BufferBase &source);
Func repeat_image(const Func &source, const Region &bounds);

Func mirror_image(const ImageParam &source);
Func mirror_image(const BufferBase &source);
Func mirror_image(const Func &source, const Region &bounds);

Func mirror_interior(const ImageParam &source);
Func mirror_interior(const BufferBase &source);
Func mirror_interior(const Func &source, const Region &bounds);

// A generator's buffer input (Input<Buffer<T, D>>), read over its own region.
template <typename In, typename = decltype(std::declval<const In &>().image())>
Func repeat_edge(const In &source) {
    return repeat_edge(source.image());
}
template <typename In, typename = decltype(std::declval<const In &>().image())>
Func constant_exterior(const In &source, Expr value) {
    return constant_exterior(source.image(), std::move(value));
}
template <typename In, typename = decltype(std::declval<const In &>().image())>
Func repeat_image(const In &source) {
    return repeat_image(source.image());
}
template <typename In, typename = decltype(std::declval<const In &>().image())>
Func mirror_image(const In &source) {
    return mirror_image(source.image());
}
template <typename In, typename = decltype(std::declval<const In &>().image())>
Func mirror_interior(const In &source) {
    return mirror_interior(source.image());
}

} // namespace BoundaryConditions
} // namespace aicf

#endif
