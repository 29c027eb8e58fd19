#ifndef AICF_FIELDS_H
#define AICF_FIELDS_H

// The fields of an aggregate (a struct with public members and no constructors), visited in
// order without naming them: for_each_field(s, f) calls f on each member of s. Code that
// must see every field of a struct (the pipeline fingerprint reads every schedule field) uses
// it, so a field added later cannot be left out: it is visited, and a field of a type the
// visitor does not know fails to compile.
//
// The count is found by trying to brace-initialize the struct from N values that convert to
// anything: the largest N that compiles is the number of fields.

#include <cstddef>
#include <type_traits>
#include <utility>

namespace aicf {
namespace detail {

struct AnyField {
    template <typename T> operator T() const; // never defined: used in unevaluated contexts only
};

template <typename T, typename... Fields>
constexpr auto brace_initializable(int) -> decltype(T{std::declval<Fields>()...}, true) {
    return true;
}
template <typename T, typename... Fields> constexpr bool brace_initializable(...) {
    return false;
}

template <typename T, size_t... I> constexpr bool initializable_from(std::index_sequence<I...>) {
    return brace_initializable<T, decltype((void)I, AnyField{})...>(0);
}

template <typename T, size_t N = 0> constexpr size_t field_count() {
    if constexpr (N < 16 && initializable_from<T>(std::make_index_sequence<N + 1>())) {
        return field_count<T, N + 1>();
    } else {
        return N;
    }
}

template <typename T, typename F> void for_each_field(const T &s, F &&f) {
    static_assert(std::is_aggregate_v<T>, "for_each_field needs an aggregate");
    constexpr size_t n = field_count<T>();
    static_assert(n >= 1 && n <= 14, "for_each_field handles aggregates of 1 to 14 fields");
    if constexpr (n == 1) {
        const auto &[a] = s;
        f(a);
    } else if constexpr (n == 2) {
        const auto &[a, b] = s;
        f(a), f(b);
    } else if constexpr (n == 3) {
        const auto &[a, b, c] = s;
        f(a), f(b), f(c);
    } else if constexpr (n == 4) {
        const auto &[a, b, c, d] = s;
        f(a), f(b), f(c), f(d);
    } else if constexpr (n == 5) {
        const auto &[a, b, c, d, e] = s;
        f(a), f(b), f(c), f(d), f(e);
    } else if constexpr (n == 6) {
        const auto &[a, b, c, d, e, g] = s;
        f(a), f(b), f(c), f(d), f(e), f(g);
    } else if constexpr (n == 7) {
        const auto &[a, b, c, d, e, g, h] = s;
        f(a), f(b), f(c), f(d), f(e), f(g), f(h);
    } else if constexpr (n == 8) {
        const auto &[a, b, c, d, e, g, h, i] = s;
        f(a), f(b), f(c), f(d), f(e), f(g), f(h), f(i);
    } else if constexpr (n == 9) {
        const auto &[a, b, c, d, e, g, h, i, j] = s;
        f(a), f(b), f(c), f(d), f(e), f(g), f(h), f(i), f(j);
    } else if constexpr (n == 10) {
        const auto &[a, b, c, d, e, g, h, i, j, k] = s;
        f(a), f(b), f(c), f(d), f(e), f(g), f(h), f(i), f(j), f(k);
    } else if constexpr (n == 11) {
        const auto &[a, b, c, d, e, g, h, i, j, k, l] = s;
        f(a), f(b), f(c), f(d), f(e), f(g), f(h), f(i), f(j), f(k), f(l);
    } else if constexpr (n == 12) {
        const auto &[a, b, c, d, e, g, h, i, j, k, l, m] = s;
        f(a), f(b), f(c), f(d), f(e), f(g), f(h), f(i), f(j), f(k), f(l), f(m);
    } else if constexpr (n == 13) {
        const auto &[a, b, c, d, e, g, h, i, j, k, l, m, o] = s;
        f(a), f(b), f(c), f(d), f(e), f(g), f(h), f(i), f(j), f(k), f(l), f(m), f(o);
    } else {
        const auto &[a, b, c, d, e, g, h, i, j, k, l, m, o, p] = s;
        f(a), f(b), f(c), f(d), f(e), f(g), f(h), f(i), f(j), f(k), f(l), f(m), f(o), f(p);
    }
}

} // namespace detail
} // namespace aicf

#endif
