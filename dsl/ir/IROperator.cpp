#include "dsl/ir/IROperator.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace aicf {
namespace ir {

Expr make_const(Type t, int64_t v) {
    Expr scalar;
    Type e = t.element_of();
    if (e.is_int()) {
        scalar = IntImm::make(e, v);
    } else if (e.is_uint()) {
        scalar = UIntImm::make(e, static_cast<uint64_t>(v));
    } else if (e.is_float()) {
        scalar = FloatImm::make(e, static_cast<double>(v));
    } else {
        internal_error << "make_const of type " << to_string(t);
    }
    return broadcast(scalar, t.lanes);
}

Expr make_const(Type t, double v) {
    Type e = t.element_of();
    if (e.is_float()) return broadcast(FloatImm::make(e, v), t.lanes);
    return make_const(t, static_cast<int64_t>(v));
}

Expr make_zero(Type t) {
    return make_const(t, int64_t(0));
}
Expr make_one(Type t) {
    return make_const(t, int64_t(1));
}
Expr const_true(int lanes) {
    return make_const(Bool(lanes), int64_t(1));
}
Expr const_false(int lanes) {
    return make_const(Bool(lanes), int64_t(0));
}

std::optional<int64_t> as_const_int(const Expr &e) {
    if (!e.defined()) return std::nullopt;
    if (const Broadcast *b = e.as<Broadcast>()) return as_const_int(b->value);
    if (const IntImm *i = e.as<IntImm>()) return i->value;
    if (const UIntImm *u = e.as<UIntImm>()) {
        if (u->value <= uint64_t(INT64_MAX)) return static_cast<int64_t>(u->value);
    }
    return std::nullopt;
}

std::optional<uint64_t> as_const_uint(const Expr &e) {
    if (!e.defined()) return std::nullopt;
    if (const Broadcast *b = e.as<Broadcast>()) return as_const_uint(b->value);
    if (const UIntImm *u = e.as<UIntImm>()) return u->value;
    return std::nullopt;
}

std::optional<double> as_const_float(const Expr &e) {
    if (!e.defined()) return std::nullopt;
    if (const Broadcast *b = e.as<Broadcast>()) return as_const_float(b->value);
    if (const FloatImm *f = e.as<FloatImm>()) return f->value;
    return std::nullopt;
}

bool is_const(const Expr &e) {
    return as_const_int(e) || as_const_uint(e) || as_const_float(e);
}

bool is_const(const Expr &e, int64_t v) {
    if (auto i = as_const_int(e)) return *i == v;
    if (auto f = as_const_float(e)) return *f == static_cast<double>(v);
    return false;
}

bool is_const_zero(const Expr &e) {
    return is_const(e, 0);
}
bool is_const_one(const Expr &e) {
    return is_const(e, 1);
}
bool is_true(const Expr &e) {
    return e.defined() && e.type().is_bool() && is_const(e, 1);
}
bool is_false(const Expr &e) {
    return e.defined() && e.type().is_bool() && is_const(e, 0);
}

bool is_positive_const(const Expr &e) {
    if (auto i = as_const_int(e)) return *i > 0;
    if (auto u = as_const_uint(e)) return *u > 0;
    if (auto f = as_const_float(e)) return *f > 0;
    return false;
}

bool is_negative_const(const Expr &e) {
    if (auto i = as_const_int(e)) return *i < 0;
    if (auto f = as_const_float(e)) return *f < 0;
    return false;
}

Expr broadcast(Expr e, int lanes) {
    if (lanes == 1) return e;
    return Broadcast::make(std::move(e), lanes);
}

Expr make_vector(const std::vector<Expr> &scalars) {
    internal_assert(!scalars.empty()) << "make_vector of no scalars";
    if (scalars.size() == 1) return scalars[0];
    const Type t = scalars[0].type();
    for (const Expr &x : scalars)
        internal_assert(x.type() == t && t.is_scalar())
            << "make_vector of " << to_string(x.type()) << " with " << to_string(t);
    return Call::make(t.with_lanes(int(scalars.size())), Intrinsic::make_vector, scalars,
                      Call::PureIntrinsic);
}

Expr extract_element(const Expr &v, int i) {
    internal_assert(i >= 0 && i < v.type().lanes)
        << "lane " << i << " of " << with_article(v.type());
    if (v.type().is_scalar()) return v;
    if (const Call *c = v.as<Call>(); c && c->is_intrinsic(Intrinsic::make_vector))
        return c->args[size_t(i)];
    return Call::make(v.type().element_of(), Intrinsic::extract_element, {v, Expr(i)},
                      Call::PureIntrinsic);
}

namespace {

// An integer (exact in a long double) as the double that a float constant of type t made from it
// must hold: rounded once to t. Into a 16-bit float it goes through a double rounded to odd
// (truncated, the last bit set when anything was lost), which FloatImm then rounds to nearest.
double integer_as_float(Type t, long double x) {
    if (t.bits == 64) return static_cast<double>(x);
    if (t.bits == 32 && !t.is_bfloat()) return static_cast<float>(x);
    double d = static_cast<double>(x);
    if (static_cast<long double>(d) == x) return d;
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    if (std::fabs(static_cast<long double>(d)) > std::fabs(x)) bits -= 1;
    bits |= 1;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

} // namespace

Expr cast(Type t, Expr e) {
    internal_assert(e.defined()) << "cast of undefined Expr";
    if (e.type() == t) return e;
    if (t.lanes != e.type().lanes && e.type().is_scalar()) {
        return broadcast(cast(t.element_of(), e), t.lanes);
    }
    if (const Broadcast *b = e.as<Broadcast>()) {
        return broadcast(cast(t.element_of(), b->value), t.lanes);
    }
    // Fold conversions of constants.
    if (t.is_scalar()) {
        if (t.is_bool()) {
            if (auto i = as_const_int(e)) return make_const(t, int64_t(*i != 0));
            if (auto f = as_const_float(e)) return make_const(t, int64_t(*f != 0));
        } else if (t.is_int_or_uint()) {
            if (auto i = as_const_int(e)) return make_const(t, *i);
            if (auto u = as_const_uint(e)) return make_const(t, static_cast<int64_t>(*u));
            if (auto f = as_const_float(e)) {
                // As the code generators and the simulator convert: toward zero, saturating
                // at the type's limits, NaN to 0.
                if (std::isnan(*f)) return make_const(t, int64_t(0));
                const double v = std::trunc(*f);
                if (t.bits <= 32) {
                    const double lo = t.is_uint() ? 0.0 : double(t.min_int());
                    const double hi = t.is_uint() ? double(t.max_uint()) : double(t.max_int());
                    return make_const(t, static_cast<int64_t>(std::min(std::max(v, lo), hi)));
                }
                if (t.is_uint() && v <= 0) return make_const(t, int64_t(0));
                if (std::fabs(v) < 9e18) return make_const(t, static_cast<int64_t>(v));
            }
        } else if (t.is_float()) {
            if (auto i = as_const_int(e)) return make_const(t, integer_as_float(t, *i));
            if (auto u = as_const_uint(e)) return make_const(t, integer_as_float(t, *u));
            if (auto f = as_const_float(e)) return make_const(t, *f);
        }
    }
    return Cast::make(t, e);
}

Expr make_and(Expr a, Expr b) {
    if (is_true(a)) return b;
    if (is_true(b)) return a;
    if (is_false(a)) return a;
    if (is_false(b)) return b;
    return And::make(std::move(a), std::move(b));
}

Expr make_or(Expr a, Expr b) {
    if (is_false(a)) return b;
    if (is_false(b)) return a;
    if (is_true(a)) return a;
    if (is_true(b)) return b;
    return Or::make(std::move(a), std::move(b));
}

std::vector<Expr> conjuncts(const Expr &e) {
    const And *a = e.as<And>();
    if (!a) return {e};
    std::vector<Expr> terms = conjuncts(a->a), rest = conjuncts(a->b);
    terms.insert(terms.end(), rest.begin(), rest.end());
    return terms;
}

Stmt assert_positive(const Expr &value, const std::string &what) {
    Expr msg = Call::make(Int(32), Intrinsic::runtime_error,
                          {make_const(Int(32), int64_t(RuntimeErrorKind::ScheduleValueNotPositive)),
                           StringImm::make(what), Cast::make(Int(64), value)},
                          Call::Intrinsic);
    return AssertStmt::make(GT::make(value, make_zero(value.type())), msg);
}

Expr widen_int32(const Expr &e) {
    if (!e.defined() || e.type() != Int(32)) return e;
    if (const IntImm *c = e.as<IntImm>()) return make_const(Int(64), c->value);
    if (const Add *op = e.as<Add>()) return Add::make(widen_int32(op->a), widen_int32(op->b));
    if (const Sub *op = e.as<Sub>()) return Sub::make(widen_int32(op->a), widen_int32(op->b));
    if (const Mul *op = e.as<Mul>()) return Mul::make(widen_int32(op->a), widen_int32(op->b));
    if (const Div *op = e.as<Div>()) return Div::make(widen_int32(op->a), widen_int32(op->b));
    if (const Mod *op = e.as<Mod>()) return Mod::make(widen_int32(op->a), widen_int32(op->b));
    if (const Min *op = e.as<Min>()) return Min::make(widen_int32(op->a), widen_int32(op->b));
    if (const Max *op = e.as<Max>()) return Max::make(widen_int32(op->a), widen_int32(op->b));
    if (const Select *op = e.as<Select>()) {
        return Select::make(op->condition, widen_int32(op->true_value),
                            widen_int32(op->false_value));
    }
    return Cast::make(Int(64), e);
}

Expr type_max(Type t) {
    Type e = t.element_of();
    if (e.is_int()) return make_const(t, e.max_int());
    if (e.is_uint()) return broadcast(UIntImm::make(e, e.max_uint()), t.lanes);
    return make_const(t, INFINITY);
}

Expr type_min(Type t) {
    Type e = t.element_of();
    if (e.is_int_or_uint()) return make_const(t, e.min_int());
    return make_const(t, -INFINITY);
}

int64_t mod_euclid(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r < 0) r = b < 0 ? r - b : r + b; // (not r + -b: -INT64_MIN wraps)
    return r;
}

int64_t div_euclid(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return a == INT64_MIN ? a : -a;
    // Truncating division, then one step toward the Euclidean quotient (a - a mod b would
    // wrap for a near INT64_MIN).
    const int64_t q = a / b, r = a % b;
    if (r >= 0) return q;
    return b > 0 ? q - 1 : q + 1;
}

namespace {

class TreeSize : public IRVisitor {
public:
    TreeSize(const Scope<int64_t> &lets, int64_t limit) : lets(lets), left(limit) {}
    const Scope<int64_t> &lets;
    int64_t left;

    template <typename T> void count(const T *op) {
        if constexpr (std::is_same_v<T, Variable>) {
            const int64_t *size = lets.find(op->name);
            left -= size ? *size : 1;
        } else if (--left >= 0) {
            IRVisitor::visit(op);
        }
    }
#define AICF_COUNT_NODE(N)                                                                         \
    void visit(const N *op) override {                                                             \
        count(op);                                                                                 \
    }
    AICF_FOR_EACH_EXPR(AICF_COUNT_NODE)
#undef AICF_COUNT_NODE
};

} // namespace

std::string buffer_descriptor_name(const std::string &buffer) {
    return buffer + ".buffer";
}

StorageReferences storage_references(const Stmt &s, const std::string &name) {
    StorageReferences r;
    const std::string descriptor = buffer_descriptor_name(name);
    visit_each<Load>(s, [&](const Load *l) { r.loads += l->name == name; });
    visit_each<Store>(s, [&](const Store *st) { r.stores += st->name == name; });
    visit_each<Variable>(
        s, [&](const Variable *v) { r.others += v->name == name || v->name == descriptor; });
    visit_each<Call>(s, [&](const Call *c) { r.others += c->name == name; });
    visit_each<Allocate>(s, [&](const Allocate *a) { r.others += a->name == name; });
    return r;
}

int64_t tree_size(const Expr &e, int64_t limit, const Scope<int64_t> &lets) {
    TreeSize counter(lets, limit);
    if (e.defined()) e.accept(&counter);
    return counter.left < 0 ? limit + 1 : limit - counter.left;
}

bool tree_larger_than(const Expr &e, int64_t limit) {
    return tree_size(e, limit) > limit;
}

} // namespace ir
} // namespace aicf
