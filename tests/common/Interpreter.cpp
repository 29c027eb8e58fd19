#include "Interpreter.h"

#include "dsl/Function.h"
#include "dsl/ir/IR.h"

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace aicf_test {

using aicf::ir::Type;
using namespace aicf::ir;

namespace {

[[noreturn]] void fail(const std::string &what) {
    throw std::runtime_error("reference interpreter: " + what);
}

// The precision (significand bits, with the implicit one) and exponent range of a float type.
struct Format {
    int precision, emin, emax;
};

Format format_of(Type t) {
    if (t.is_bfloat()) return {8, -126, 127};
    switch (t.bits) {
    case 16:
        return {11, -14, 15};
    case 32:
        return {24, -126, 127};
    case 64:
        return {53, -1022, 1023};
    }
    fail("no float type of " + std::to_string(t.bits) + " bits");
}

// x rounded to nearest (ties to even) in the format: subnormals below emin, infinity past the
// largest finite value. x is exact (long double holds every 64-bit integer and every double),
// so this is the one rounding of a conversion.
long double round_to(long double x, const Format &fmt) {
    if (std::isnan(x) || std::isinf(x) || x == 0) return x;
    int e = std::max(int(std::ilogb(x)), fmt.emin);
    long double scaled = std::ldexp(x, fmt.precision - 1 - e); // exact: a power of two
    long double rounded = std::nearbyint(scaled);              // to nearest even
    long double y = std::ldexp(rounded, e - fmt.precision + 1);
    long double largest = std::ldexp(2.0L - std::ldexp(1.0L, 1 - fmt.precision), fmt.emax);
    if (std::fabs(y) > largest) return std::copysign(INFINITY, x);
    return y;
}

// Sign- or zero-extends the low `bits` bits of v.
uint64_t extend(Type t, uint64_t v) {
    if (t.bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    v &= mask;
    if (t.is_int() && (v >> (t.bits - 1)) & 1) v |= ~mask;
    return v;
}

__int128 wide(const Value &v) {
    return v.type.is_int() ? __int128(int64_t(v.bits)) : __int128(v.bits);
}

// The integer result of an operation done exactly: wrapped to the type, or undefined when the
// type is a signed one of 32 bits or more and the result does not fit.
Value int_result(Type t, __int128 exact, bool defined) {
    Value r;
    r.type = t;
    r.defined = defined;
    r.bits = extend(t, uint64_t(exact));
    if (t.is_int() && t.bits >= 32) {
        __int128 lo = -(__int128(1) << (t.bits - 1)), hi = (__int128(1) << (t.bits - 1)) - 1;
        if (exact < lo || exact > hi) r.defined = false;
    }
    return r;
}

Value bool_value(bool b, bool defined) {
    Value r = make_int(Bool(), b ? 1 : 0);
    r.defined = defined;
    return r;
}

Value float_result(Type t, long double exact, bool defined) {
    Value r = make_float(t, double(0));
    r.f = double(round_to(exact, format_of(t)));
    r.defined = defined;
    return r;
}

// Arithmetic in double is exact for the sums and products of float16 and bfloat16, and its one
// rounding before the final one cannot change a correctly rounded result of +, -, *, / for
// float16, bfloat16 or float32 (53 >= 2 * 24 + 2). float64 is computed natively.
double arith(char op, double a, double b) {
    switch (op) {
    case '+':
        return a + b;
    case '-':
        return a - b;
    case '*':
        return a * b;
    case '/':
        return a / b;
    }
    fail(std::string("unknown operator ") + op);
}

// Euclidean division and remainder: 0 <= r < |b|; x / 0 == x % 0 == 0.
void euclid(__int128 a, __int128 b, __int128 &q, __int128 &r) {
    if (b == 0) {
        q = r = 0;
        return;
    }
    q = a / b;
    r = a % b;
    if (r < 0) {
        if (b > 0) {
            q -= 1;
            r += b;
        } else {
            q += 1;
            r -= b;
        }
    }
}

} // namespace

uint64_t Value::storage_bits() const {
    if (!type.is_float()) return type.bits >= 64 ? bits : bits & ((uint64_t(1) << type.bits) - 1);
    if (type.bits == 64) {
        uint64_t b;
        std::memcpy(&b, &f, 8);
        return b;
    }
    float v = float(f); // exact: f is a value of the type
    uint32_t b;
    std::memcpy(&b, &v, 4);
    if (type.bits == 32) return b;
    if (type.is_bfloat()) return std::isnan(v) ? 0x7fc0 : b >> 16;
    // float16 from the float32 encoding of one of its values.
    uint32_t sign = (b >> 16) & 0x8000;
    if (std::isnan(v)) return sign | 0x7e00;
    if (std::isinf(v)) return sign | 0x7c00;
    float a = std::fabs(v);
    if (a == 0) return sign;
    int e = std::ilogb(a);
    if (e < -14) return sign | uint32_t(std::ldexp(a, 24)); // subnormal: units of 2^-24
    uint32_t mantissa = uint32_t(std::ldexp(a, 10 - e)) & 0x3ff;
    return sign | uint32_t(e + 15) << 10 | mantissa;
}

std::string Value::to_string() const {
    std::ostringstream s;
    if (!defined) s << "undefined ";
    if (type.is_float()) {
        s.precision(17);
        s << f;
    } else if (type.is_int()) {
        s << int64_t(bits);
    } else {
        s << bits;
    }
    s << " (" << aicf::ir::to_string(type) << ")";
    return s.str();
}

Value make_int(Type t, int64_t v) {
    Value r;
    r.type = t;
    r.bits = extend(t, uint64_t(v));
    return r;
}

Value make_float(Type t, double v) {
    Value r;
    r.type = t;
    r.f = double(round_to(v, format_of(t)));
    return r;
}

Value load_value(Type t, const void *bytes) {
    uint64_t raw = 0;
    std::memcpy(&raw, bytes, size_t(t.bytes()));
    if (!t.is_float()) {
        Value r;
        r.type = t;
        r.bits = extend(t, raw);
        return r;
    }
    Value r;
    r.type = t;
    if (t.bits == 64) {
        std::memcpy(&r.f, &raw, 8);
        return r;
    }
    uint32_t b32 = uint32_t(raw);
    if (t.bits == 16 && t.is_bfloat()) b32 <<= 16;
    if (t.bits == 16 && !t.is_bfloat()) {
        uint32_t sign = raw & 0x8000 ? 1 : 0, e = (raw >> 10) & 0x1f, m = raw & 0x3ff;
        double v = e == 0    ? std::ldexp(double(m), -24)
                   : e == 31 ? (m ? NAN : INFINITY)
                             : std::ldexp(double(m | 0x400), int(e) - 25);
        r.f = sign ? -v : v;
        return r;
    }
    float v;
    std::memcpy(&v, &b32, 4);
    r.f = v;
    return r;
}

bool same_value(const Value &a, const Value &b) {
    if (a.type != b.type || a.defined != b.defined) return false;
    if (!a.type.is_float()) return a.bits == b.bits;
    if (std::isnan(a.f) || std::isnan(b.f)) return std::isnan(a.f) && std::isnan(b.f);
    return a.f == b.f && std::signbit(a.f) == std::signbit(b.f);
}

bool close_value(const Value &got, const Value &want, double rtol, double atol) {
    if (got.type != want.type) return false;
    if (!got.type.is_float()) return got.bits == want.bits;
    if (std::isnan(got.f) || std::isnan(want.f)) return std::isnan(got.f) && std::isnan(want.f);
    if (std::isinf(got.f) || std::isinf(want.f)) return got.f == want.f;
    return std::fabs(got.f - want.f) <= atol + rtol * std::fabs(want.f);
}

Value convert(Type to, const Value &v) {
    to = to.element_of();
    if (to == v.type) return v;
    if (to.is_bool()) {
        bool nonzero = v.type.is_float() ? v.f != 0 : v.bits != 0;
        return bool_value(nonzero, v.defined);
    }
    Value r;
    r.type = to;
    r.defined = v.defined;
    if (to.is_float()) {
        long double exact = v.type.is_float() ? (long double)v.f
                            : v.type.is_int() ? (long double)int64_t(v.bits)
                                              : (long double)v.bits;
        r.f = double(round_to(exact, format_of(to)));
        return r;
    }
    if (!v.type.is_float()) {
        r.bits = extend(to, v.bits);
        return r;
    }
    // Float to integer: truncate, saturate, NaN -> 0.
    if (std::isnan(v.f)) return r;
    long double lo = to.is_int() ? -std::ldexp(1.0L, to.bits - 1) : 0.0L;
    long double hi =
        to.is_int() ? std::ldexp(1.0L, to.bits - 1) - 1 : std::ldexp(1.0L, to.bits) - 1;
    long double t = std::trunc((long double)v.f);
    t = std::min(std::max(t, lo), hi);
    r.bits = to.is_int() ? extend(to, uint64_t(int64_t(t))) : uint64_t(t);
    return r;
}

// ---------------------------------------------------------------------------------------
// Expressions.

Value Interpreter::evaluate(const Expr &e, const std::map<std::string, Value> &bindings) {
    std::map<std::string, Value> saved = scope;
    for (const auto &[name, v] : bindings)
        scope[name] = v;
    Value r = eval(e);
    scope = saved;
    return r;
}

Value Interpreter::eval(const Expr &e) {
    if (!e.defined()) fail("an undefined expression");
    Type t = e.type();
    if (!t.is_scalar()) fail("a vector expression: " + aicf::ir::to_string(t));
    if (const IntImm *op = e.as<IntImm>()) return make_int(t, op->value);
    if (const UIntImm *op = e.as<UIntImm>()) return make_int(t, int64_t(op->value));
    if (const FloatImm *op = e.as<FloatImm>()) return make_float(t, op->value);
    if (const Cast *op = e.as<Cast>()) return convert(t, eval(op->value));
    if (const Variable *op = e.as<Variable>()) {
        auto it = scope.find(op->name);
        if (it != scope.end()) return it->second;
        if (op->param.defined() && !op->param.is_buffer()) {
            if (!op->param.scalar_set()) fail("the Param " + op->name + " has no value");
            uint64_t raw = op->param.scalar_bits();
            return load_value(t, &raw);
        }
        fail("the variable " + op->name + " is not bound");
    }
    if (const Let *op = e.as<Let>()) {
        Value v = eval(op->value);
        auto saved = scope.find(op->name) != scope.end() ? scope[op->name] : Value();
        bool had = scope.count(op->name) != 0;
        scope[op->name] = v;
        Value r = eval(op->body);
        if (had) {
            scope[op->name] = saved;
        } else {
            scope.erase(op->name);
        }
        return r;
    }
    if (const Select *op = e.as<Select>()) {
        Value c = eval(op->condition);
        Value r = c.bits ? eval(op->true_value) : eval(op->false_value);
        r.defined = r.defined && c.defined;
        return r;
    }
    if (const Not *op = e.as<Not>()) {
        Value a = eval(op->a);
        return bool_value(!a.bits, a.defined);
    }
    if (const Call *op = e.as<Call>()) return eval_call(op);

    // Binary operators.
    Expr ea, eb;
    char arith_op = 0;
    if (const Add *op = e.as<Add>()) ea = op->a, eb = op->b, arith_op = '+';
    if (const Sub *op = e.as<Sub>()) ea = op->a, eb = op->b, arith_op = '-';
    if (const Mul *op = e.as<Mul>()) ea = op->a, eb = op->b, arith_op = '*';
    if (arith_op) {
        Value a = eval(ea), b = eval(eb);
        bool defined = a.defined && b.defined;
        if (t.is_float()) {
            if (t.bits == 64) {
                Value r = make_float(t, 0);
                r.f = arith(arith_op, a.f, b.f);
                r.defined = defined;
                return r;
            }
            return float_result(t, arith(arith_op, a.f, b.f), defined);
        }
        __int128 x = wide(a), y = wide(b);
        __int128 exact = arith_op == '+' ? x + y : arith_op == '-' ? x - y : x * y;
        return int_result(t, exact, defined);
    }
    if (e.as<Div>() || e.as<Mod>()) {
        bool is_div = e.as<Div>() != nullptr;
        Value a = eval(is_div ? e.as<Div>()->a : e.as<Mod>()->a);
        Value b = eval(is_div ? e.as<Div>()->b : e.as<Mod>()->b);
        bool defined = a.defined && b.defined;
        if (t.is_float()) {
            if (is_div) {
                if (t.bits == 64) {
                    Value r = make_float(t, 0);
                    r.f = a.f / b.f;
                    r.defined = defined;
                    return r;
                }
                return float_result(t, a.f / b.f, defined);
            }
            // x - y * floor(x / y), each step rounded in float32 (16-bit floats) or the type,
            // and the result in the type.
            Type step = t.bits == 64 ? t : Float(32);
            Value q = float_result(step, std::floor(float_result(step, a.f / b.f, true).f), true);
            Value p = float_result(step, arith('*', b.f, q.f), true);
            return float_result(t, float_result(step, arith('-', a.f, p.f), true).f, defined);
        }
        __int128 q, r;
        euclid(wide(a), wide(b), q, r);
        return int_result(t, is_div ? q : r, defined);
    }
    if (e.as<Min>() || e.as<Max>()) {
        bool is_min = e.as<Min>() != nullptr;
        Value a = eval(is_min ? e.as<Min>()->a : e.as<Max>()->a);
        Value b = eval(is_min ? e.as<Min>()->b : e.as<Max>()->b);
        bool take_a;
        if (t.is_float()) {
            take_a = is_min ? a.f < b.f : a.f > b.f;
        } else {
            take_a = is_min ? wide(a) < wide(b) : wide(a) > wide(b);
        }
        Value r = take_a ? a : b;
        r.defined = a.defined && b.defined;
        return r;
    }
    auto compare = [&](const Expr &x, const Expr &y, int kind) {
        Value a = eval(x), b = eval(y);
        bool defined = a.defined && b.defined, result;
        if (a.type.is_float()) {
            switch (kind) {
            case 0:
                result = a.f == b.f;
                break;
            case 1:
                result = !(a.f == b.f); // unordered: NaN != anything
                break;
            case 2:
                result = a.f < b.f;
                break;
            case 3:
                result = a.f <= b.f;
                break;
            case 4:
                result = a.f > b.f;
                break;
            default:
                result = a.f >= b.f;
            }
        } else {
            __int128 p = wide(a), q = wide(b);
            const bool results[] = {p == q, p != q, p<q, p <= q, p> q, p >= q};
            result = results[kind];
        }
        return bool_value(result, defined);
    };
    if (const EQ *op = e.as<EQ>()) return compare(op->a, op->b, 0);
    if (const NE *op = e.as<NE>()) return compare(op->a, op->b, 1);
    if (const LT *op = e.as<LT>()) return compare(op->a, op->b, 2);
    if (const LE *op = e.as<LE>()) return compare(op->a, op->b, 3);
    if (const GT *op = e.as<GT>()) return compare(op->a, op->b, 4);
    if (const GE *op = e.as<GE>()) return compare(op->a, op->b, 5);
    if (const And *op = e.as<And>()) {
        Value a = eval(op->a);
        if (a.defined && !a.bits) return a;
        Value b = eval(op->b);
        return bool_value(a.bits && b.bits, a.defined && b.defined);
    }
    if (const Or *op = e.as<Or>()) {
        Value a = eval(op->a);
        if (a.defined && a.bits) return a;
        Value b = eval(op->b);
        return bool_value(a.bits || b.bits, a.defined && b.defined);
    }
    std::ostringstream s;
    s << "no reference semantics for " << e;
    fail(s.str());
}

Value Interpreter::eval_call(const Call *op) {
    if (op->call_type == Call::Image) return eval_image(op);
    if (op->call_type == Call::Func) {
        std::vector<int64_t> point;
        bool defined = true;
        for (const Expr &a : op->args) {
            Value v = eval(a);
            defined = defined && v.defined;
            point.push_back(v.as_int());
        }
        Function f(op->func.get());
        Value r;
        bool found = false;
        for (auto it = running.rbegin(); it != running.rend(); ++it) {
            if (it->func != op->func.get()) continue;
            if (*it->point == point) {
                r = (*it->values)[size_t(op->value_index)];
            } else {
                // Another point, as the updates so far left it.
                PartialKey key{{op->func.get(), point}, it->stage, it->iteration};
                auto m = partial_memo.find(key);
                if (m == partial_memo.end())
                    m = partial_memo.emplace(key, compute(f, point, it->stage, it->iteration))
                            .first;
                r = m->second[size_t(op->value_index)];
            }
            found = true;
            break;
        }
        if (!found) r = at(f, point, op->value_index);
        r.defined = r.defined && defined;
        return r;
    }
    return eval_intrinsic(op);
}

Value Interpreter::eval_image(const Call *op) {
    const auto &storage = op->param.buffer();
    if (!storage) fail("the input " + op->name + " is not bound to a buffer");
    storage->copy_to_host();
    std::vector<int> coords;
    for (const Expr &a : op->args) {
        Value v = eval(a);
        if (!v.defined) fail("an undefined coordinate of " + op->name);
        coords.push_back(int(v.as_int()));
    }
    if (int(coords.size()) != storage->dimensions())
        fail(op->name + " read with " + std::to_string(coords.size()) + " coordinates");
    for (int d = 0; d < storage->dimensions(); d++) {
        const aicf_dim_t &dim = storage->dim(d);
        if (coords[size_t(d)] < dim.min || coords[size_t(d)] >= dim.min + dim.extent)
            fail("the algorithm reads " + op->name + " at " + std::to_string(coords[size_t(d)]) +
                 " in dimension " + std::to_string(d) + ", outside [" + std::to_string(dim.min) +
                 ", " + std::to_string(dim.min + dim.extent) + ")");
    }
    const uint8_t *host = reinterpret_cast<const uint8_t *>(storage->raw()->host);
    const uint8_t *p = host + storage->offset_of(coords.data(), int(coords.size()));
    Value v = load_value(storage->type(), p);
    if (v.type != op->type) fail("the input " + op->name + " has another type than its call");
    return v;
}

Value Interpreter::eval_intrinsic(const Call *op) {
    Type t = op->type;
    std::vector<Value> args;
    bool defined = true;
    if (op->is_intrinsic(Intrinsic::likely)) return eval(op->args[0]);
    for (const Expr &a : op->args) {
        args.push_back(eval(a));
        defined = defined && args.back().defined;
    }
    auto bitwise = [&](uint64_t r) {
        Value v = make_int(t, int64_t(r));
        v.defined = defined;
        return v;
    };
    auto real = [&](double r) { return float_result(t, r, defined); };
    switch (op->intrinsic) {
    case Intrinsic::bitwise_and:
        return bitwise(args[0].bits & args[1].bits);
    case Intrinsic::bitwise_or:
        return bitwise(args[0].bits | args[1].bits);
    case Intrinsic::bitwise_xor:
        return bitwise(args[0].bits ^ args[1].bits);
    case Intrinsic::bitwise_not:
        return bitwise(~args[0].bits);
    case Intrinsic::shift_left:
    case Intrinsic::shift_right: {
        // The amount as an unsigned number of the type's width.
        uint64_t amount = args[1].bits;
        if (t.bits < 64) amount &= (uint64_t(1) << t.bits) - 1;
        bool too_far = amount >= uint64_t(t.bits);
        if (op->is_intrinsic(Intrinsic::shift_left))
            return bitwise(too_far ? 0 : args[0].bits << amount);
        if (t.is_int()) return bitwise(uint64_t(int64_t(args[0].bits) >> (too_far ? 63 : amount)));
        return bitwise(too_far ? 0 : args[0].bits >> amount);
    }
    case Intrinsic::abs:
        if (t.is_float()) return real(std::fabs(args[0].f));
        return int_result(t, wide(args[0]) < 0 ? -wide(args[0]) : wide(args[0]), defined);
    case Intrinsic::sqrt:
        return real(std::sqrt(args[0].f));
    case Intrinsic::rsqrt:
        return real(1.0 / std::sqrt(args[0].f));
    case Intrinsic::exp:
        return real(std::exp(args[0].f));
    case Intrinsic::log:
        return real(std::log(args[0].f));
    case Intrinsic::tanh:
        return real(std::tanh(args[0].f));
    case Intrinsic::erf:
        return real(std::erf(args[0].f));
    case Intrinsic::sin:
        return real(std::sin(args[0].f));
    case Intrinsic::cos:
        return real(std::cos(args[0].f));
    case Intrinsic::pow:
        return real(std::pow(args[0].f, args[1].f));
    case Intrinsic::fma:
        return real(double(
            std::fma((long double)args[0].f, (long double)args[1].f, (long double)args[2].f)));
    case Intrinsic::floor:
        return real(std::floor(args[0].f));
    case Intrinsic::ceil:
        return real(std::ceil(args[0].f));
    case Intrinsic::round:
        return real(std::nearbyint(args[0].f)); // to nearest even
    case Intrinsic::trunc:
        return real(std::trunc(args[0].f));
    case Intrinsic::is_nan:
        return bool_value(std::isnan(args[0].f), defined);
    case Intrinsic::is_inf:
        return bool_value(std::isinf(args[0].f), defined);
    default:
        fail(std::string("no reference semantics for the intrinsic ") +
             aicf::ir::to_string(op->intrinsic));
    }
}

// ---------------------------------------------------------------------------------------
// Funcs.

Value Interpreter::at(const Function &f, const std::vector<int64_t> &point, int value_index) {
    Key key{f.get(), point};
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, compute(f, point)).first;
    return it->second.at(size_t(value_index));
}

std::vector<Value> Interpreter::compute(const Function &f, const std::vector<int64_t> &point,
                                        int stop_stage, int64_t stop_iteration) {
    const std::vector<std::string> &args = f.args();
    if (point.size() != args.size())
        fail(f.name() + " called with " + std::to_string(point.size()) + " coordinates");
    std::map<std::string, Value> saved = scope;
    // A Func's definition sees only its own variables (and Params).
    scope.clear();
    for (size_t d = 0; d < args.size(); d++)
        scope[args[d]] = make_int(Int(32), point[d]);
    std::vector<Value> values;
    for (const Expr &v : f.stage(0).values)
        values.push_back(eval(v));
    running.push_back({f.get(), &point, &values, 0, 0});
    const int last_stage = stop_stage < 0 ? f.stages() - 1 : stop_stage;
    for (int s = 1; s <= last_stage; s++) {
        running.back().stage = s;
        const Definition &def = f.stage(s);
        // The update's RDom, innermost variable first; none: a single point.
        std::vector<ReductionVariable> dom;
        if (def.rdom.defined()) dom = def.rdom.domain();
        std::vector<int64_t> mins, extents;
        for (const ReductionVariable &rv : dom) {
            Value lo = eval(rv.min), n = eval(rv.extent);
            mins.push_back(lo.as_int());
            extents.push_back(n.as_int());
        }
        bool empty = false;
        for (int64_t n : extents)
            empty = empty || n <= 0;
        if (empty) continue;
        std::vector<int64_t> r(dom.size(), 0);
        for (int64_t iteration = 0;; iteration++) {
            if (s == stop_stage && iteration == stop_iteration) break;
            running.back().iteration = iteration;
            for (size_t k = 0; k < dom.size(); k++)
                scope[dom[k].var] = make_int(Int(32), mins[k] + r[k]);
            bool take = true;
            if (def.rdom.defined() && def.rdom.predicate().defined())
                take = eval(def.rdom.predicate()).bits != 0;
            if (take) {
                for (size_t d = 0; d < def.args.size() && take; d++)
                    take = eval(def.args[d]).as_int() == point[d];
            }
            if (take) {
                std::vector<Value> next;
                for (const Expr &v : def.values)
                    next.push_back(eval(v));
                values = next;
            }
            size_t k = 0;
            while (k < dom.size() && ++r[k] == extents[k])
                r[k++] = 0;
            if (k == dom.size()) break;
        }
        for (const ReductionVariable &rv : dom)
            scope.erase(rv.var);
    }
    running.pop_back();
    scope = saved;
    return values;
}

std::vector<aicf::Buffer<>> Interpreter::realize(const aicf::Func &func,
                                                 const std::vector<int> &sizes) {
    const Function &f = func.function();
    std::vector<aicf::Buffer<>> out;
    for (Type t : f.output_types())
        out.emplace_back(t, sizes, f.name() + "_reference");
    std::vector<int> c(sizes.size(), 0);
    for (int n : sizes)
        if (n <= 0) return out;
    while (true) {
        std::vector<int64_t> point(c.begin(), c.end());
        for (size_t k = 0; k < out.size(); k++) {
            Value v = at(f, point, int(k));
            if (!v.defined) {
                std::ostringstream s;
                s << f.name() << " overflows a signed 32- or 64-bit type at (";
                for (size_t d = 0; d < point.size(); d++)
                    s << (d ? ", " : "") << point[d];
                s << ")";
                fail(s.str());
            }
            uint64_t bits = v.storage_bits();
            uint8_t *host = static_cast<uint8_t *>(out[k].raw_data());
            int64_t off = out[k].storage()->offset_of(c.data(), int(c.size()));
            std::memcpy(host + off, &bits, size_t(v.type.bytes()));
        }
        size_t d = 0;
        while (d < c.size() && ++c[d] == sizes[d])
            c[d++] = 0;
        if (d == c.size()) break;
    }
    return out;
}

std::string compare_with_reference(const std::vector<aicf::Buffer<>> &got,
                                   const std::vector<aicf::Buffer<>> &want, double rtol,
                                   double atol) {
    if (got.size() != want.size()) return "a different number of outputs than the reference";
    for (size_t k = 0; k < got.size(); k++) {
        const aicf::Buffer<> &g = got[k], &w = want[k];
        if (g.type() != w.type() || g.dimensions() != w.dimensions())
            return "output " + std::to_string(k) + " has another type or rank than the reference";
        for (int d = 0; d < g.dimensions(); d++)
            if (g.extent(d) != w.extent(d))
                return "output " + std::to_string(k) + " has another extent than the reference";
        int64_t mismatches = 0, n = w.number_of_elements();
        std::string first;
        std::vector<int> c(size_t(w.dimensions()), 0);
        const uint8_t *gp = static_cast<const uint8_t *>(g.raw_data());
        const uint8_t *wp = static_cast<const uint8_t *>(w.raw_data());
        for (int64_t i = 0; i < n; i++) {
            std::vector<int> gc(c), wc(c);
            for (int d = 0; d < g.dimensions(); d++) {
                gc[size_t(d)] += g.min(d);
                wc[size_t(d)] += w.min(d);
            }
            Value gv = load_value(g.type(), gp + g.storage()->offset_of(gc.data(), int(gc.size())));
            Value wv = load_value(w.type(), wp + w.storage()->offset_of(wc.data(), int(wc.size())));
            if (!close_value(gv, wv, rtol, atol)) {
                if (mismatches++ == 0) {
                    std::ostringstream s;
                    s << "output " << k << " at (";
                    for (size_t d = 0; d < c.size(); d++)
                        s << (d ? ", " : "") << c[d];
                    s << "): the reference gives " << wv.to_string() << ", AICF " << gv.to_string();
                    first = s.str();
                }
            }
            size_t d = 0;
            while (d < c.size() && ++c[d] == w.extent(int(d)))
                c[d++] = 0;
        }
        if (mismatches)
            return first + " (" + std::to_string(mismatches) + " of " + std::to_string(n) +
                   " values differ)";
    }
    return "";
}

} // namespace aicf_test
