#ifndef AICF_TESTS_INTERPRETER_H
#define AICF_TESTS_INTERPRETER_H

// An independent reference for the correctness tests: AICF's algorithms evaluated directly,
// point by point, from their definitions (no schedule, no bounds inference, no lowering, no
// code generation), with every scalar type's arithmetic written out in plain C++.
//
// The semantics it implements are AICF's documented ones:
// - integers of 8 and 16 bits, and unsigned integers of every width, wrap; signed 32- and
//   64-bit arithmetic is assumed not to overflow (the compiler relies on it), so a value that
//   overflows there is *undefined* and taints whatever is computed from it;
// - integer division and modulo are Euclidean, and x / 0 == x % 0 == 0; shifts by the width or
//   more give 0 (or the sign, for signed right shifts);
// - every float operation is correctly rounded in its own type (float16 and bfloat16 too:
//   round to nearest even, with subnormals, overflow to infinity), and so is every conversion
//   into a float type, from any integer or float (one rounding, never two);
// - float to integer conversions truncate and saturate, NaN giving 0;
// - min(a, b) is a < b ? a : b and max(a, b) is a > b ? a : b, so for NaN they give b;
// - exp, log, tanh, erf, pow and the like are the C library's in double, rounded to the type
//   (within an ulp of AICF's own: compare them with a tolerance);
// - an update applies at each point of its RDom in order, the innermost variable fastest, and
//   reads its own Func as the points before it left it (scans included).

#include "dsl/aicf.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aicf_test {

// One scalar of any AICF type.
struct Value {
    aicf::ir::Type type;
    bool defined = true; // false: a signed 32- or 64-bit overflow made it undefined
    uint64_t bits = 0;   // integers: the value, sign- or zero-extended to 64 bits
    double f = 0;        // floats: the value (exact in the type)

    int64_t as_int() const { return int64_t(bits); }
    // The value as the type stores it in memory (integers: the low bytes; floats: the bits of
    // the format).
    uint64_t storage_bits() const;
    std::string to_string() const;
};

Value make_int(aicf::ir::Type t, int64_t v);
Value make_float(aicf::ir::Type t, double v); // rounds v to t
// The element a buffer holds at `bytes`, as a Value of the buffer's type.
Value load_value(aicf::ir::Type t, const void *bytes);
// True when a and b are the same value of the same type: equal integers, or floats with the
// same value and zero sign, or both NaN.
bool same_value(const Value &a, const Value &b);
// Floats within atol + rtol * |want| (infinities equal, both NaN), integers equal.
bool close_value(const Value &got, const Value &want, double rtol, double atol);

// Conversion to `to`, as a Cast node converts.
Value convert(aicf::ir::Type to, const Value &v);

// Evaluates algorithms point by point: Func calls recursively, memoized per point; buffers
// (concrete ones and bound ImageParams) read from their host data; Params from their values.
class Interpreter {
public:
    // The value of an expression with the given variables bound.
    Value evaluate(const aicf::ir::Expr &e, const std::map<std::string, Value> &bindings = {});
    // Element `value_index` of Func f at the given point (dimension 0 first).
    Value at(const aicf::ir::Function &f, const std::vector<int64_t> &point, int value_index = 0);
    // The whole output of f over [0, sizes) in each dimension, one buffer per Tuple element.
    std::vector<aicf::Buffer<>> realize(const aicf::Func &f, const std::vector<int> &sizes);

private:
    struct Key {
        const void *func;
        std::vector<int64_t> point;
        bool operator<(const Key &o) const {
            return func != o.func ? func < o.func : point < o.point;
        }
    };
    std::map<Key, std::vector<Value>> memo;
    std::map<std::string, Value> scope;
    // While an update of a Func at a point is evaluated: the point, its running values (which
    // the update's calls of that point read), and how far the updates have gone: stage `stage`
    // at its `iteration`-th point of the RDom (calls of other points, as a scan makes, read
    // them as they were then).
    struct Running {
        const void *func;
        const std::vector<int64_t> *point;
        std::vector<Value> *values;
        int stage;
        int64_t iteration;
    };
    std::vector<Running> running;
    // The values of points as they were part-way through the updates, by (stage, iteration).
    struct PartialKey {
        Key key;
        int stage;
        int64_t iteration;
        bool operator<(const PartialKey &o) const {
            if (key < o.key || o.key < key) return key < o.key;
            return stage != o.stage ? stage < o.stage : iteration < o.iteration;
        }
    };
    std::map<PartialKey, std::vector<Value>> partial_memo;

    // The values of f at a point after its updates before `stop_stage` and the first
    // `stop_iteration` points of that stage's RDom (stop_stage -1: after all of them).
    std::vector<Value> compute(const aicf::ir::Function &f, const std::vector<int64_t> &point,
                               int stop_stage = -1, int64_t stop_iteration = 0);
    Value eval(const aicf::ir::Expr &e);
    Value eval_call(const aicf::ir::Call *op);
    Value eval_intrinsic(const aicf::ir::Call *op);
    Value eval_image(const aicf::ir::Call *op);
};

// Compares a realization with the interpreter's result element by element (floats within the
// tolerance, integers exactly); empty when they agree, otherwise where they first differ and
// how many do.
std::string compare_with_reference(const std::vector<aicf::Buffer<>> &got,
                                   const std::vector<aicf::Buffer<>> &want, double rtol,
                                   double atol);

} // namespace aicf_test

#endif
