#ifndef AICF_LOWERING_RANGES_OVER_ITERATIONS_H
#define AICF_LOWERING_RANGES_OVER_ITERATIONS_H

#include "dsl/ir/IR.h"
#include "dsl/ir/Interval.h"
#include "lowering/BoxesRequired.h"

#include <map>
#include <string>

namespace aicf {
namespace lowering {

// What a statement's Funcs and accesses span over every iteration of its loops, in 64 bits.
struct RangesOverIterations {
    // For each Func of `regions` (below) realized in the statement: its region's range.
    std::map<std::string, ir::Box> realized;
    // What the statement reads of the buffer or Func asked for. The ends name lets of their
    // own (`read.definitions`, in terms of names outside the statement, each before its uses),
    // and so do the ends of `realized`.
    Access read;
};

// Bounds, in one walk of `s`, the regions in `regions` (the box each Func is realized over, in
// terms of the names where it is realized) and what `s` reads of `reads` (when not empty), over
// every iteration of the loops of `s`. Each let and loop of `s` gets a range in terms of names
// outside `s` once, so that nothing is expanded twice: the cost grows with the statement, where
// the regions that box_required finds grow with the number of stages whose regions they nest.
// The price is precision: guards are not seen, and lets past a few variables stand for their
// ranges, so a tile's start and length are bounded apart. An end that cannot be bounded from
// names outside `s` (one that loads) is left undefined.
RangesOverIterations ranges_over_iterations(const ir::Stmt &s,
                                            const std::map<std::string, ir::Box> &regions,
                                            const std::string &reads = "");

} // namespace lowering
} // namespace aicf

#endif
