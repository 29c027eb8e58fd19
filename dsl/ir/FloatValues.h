#ifndef AICF_DSL_IR_FLOATVALUES_H
#define AICF_DSL_IR_FLOATVALUES_H

// What a float expression's values may be, for converting its bounds to an integer type.
// The ends of a float interval are the operations of the expression applied to its operands'
// ends, and float rounding keeps order, so a conversion to an integer (which saturates, and
// keeps order too) carries the ends over, provided that
// - no value is NaN, which converts to 0 wherever the interval lies: `magnitude` bounds every
//   value's size, finite only where the expression is built from integers and finite constants
//   by operations that cannot overflow to an infinity (which inf - inf or 0 * inf would turn
//   into NaN);
// - the values and the ends are rounded alike, each operation on its own: the code generators
//   neither fuse a product and a sum into one multiply-add nor regroup the arithmetic that
//   feeds a conversion from float (backends/llvm/CodeGen_LLVM.h; the simulator never does),
//   and the simplifier folds constants with the type's rounding.

#include "dsl/ir/IR.h"

#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aicf {
namespace ir {

struct FloatValues {
    double magnitude = INFINITY; // every value lies in [-magnitude, magnitude]; INFINITY: unknown
};

// FloatValues of expressions, each node looked at once while the float lets around it stay the
// same (a chain of steps that each use the one before twice is a small graph).
class FloatFacts {
public:
    FloatValues get(const Expr &e);
    // A let around the expressions asked about next, until pop_let. Only float lets change
    // an answer (an integer is finite whatever its value).
    void push_let(const std::string &name, const Expr &value);
    void pop_let(const Expr &value);

private:
    std::vector<std::pair<std::string, FloatValues>> lets; // float lets around, innermost last
    std::unordered_map<const IRNode *, std::pair<Expr, FloatValues>> memo;

    FloatValues compute(const Expr &e);
    FloatValues sum(const Expr &x, const Expr &y);
    FloatValues either(const Expr &x, const Expr &y);
};

} // namespace ir
} // namespace aicf

#endif
