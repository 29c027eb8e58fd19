#ifndef AICF_TUPLE_H
#define AICF_TUPLE_H

// Tuple: several values computed together by one Func (e.g. a running max and its index).

#include "dsl/ir/IR.h"

#include <initializer_list>
#include <vector>

namespace aicf {

class Tuple {
public:
    Tuple(std::initializer_list<ir::Expr> values) : values_(values) {}
    explicit Tuple(const std::vector<ir::Expr> &values) : values_(values) {}
    template <typename... Args>
    Tuple(const ir::Expr &a, const ir::Expr &b, const Args &...rest)
        : values_{a, b, ir::Expr(rest)...} {}

    size_t size() const { return values_.size(); }
    // A CompileError past the last value.
    const ir::Expr &operator[](size_t i) const { return values_[checked(i)]; }
    ir::Expr &operator[](size_t i) { return values_[checked(i)]; }
    const std::vector<ir::Expr> &as_vector() const { return values_; }

private:
    std::vector<ir::Expr> values_;
    size_t checked(size_t i) const;
};

} // namespace aicf

#endif
