#ifndef AICF_APPS_MODEL_OPS_H
#define AICF_APPS_MODEL_OPS_H

// Operators of transformer models, each written once as an algorithm: pure Funcs over index
// variables and reductions, with nothing about where they run. Schedules live elsewhere
// (NormSchedules.h); tests and benchmarks pair the two.
//
// Tensors are row-major [rows][cols] buffers, so a row is dimension 0: in(col, row). Values
// are stored as T (float or bfloat16_t) and computed in float.

#include "dsl/aicf.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace aicf_apps {

// A row-wise operator: per-row statistics reduced over the row, then each element of the row
// computed from the element and the statistics. Its stages are exposed for scheduling.
struct RowwiseOp {
    aicf::Var x{"x"}, y{"y"};
    aicf::RDom r;                   // one row
    aicf::Func row;                 // the input, in float
    std::vector<aicf::Func> params; // per-column parameters (weight, bias), in float
    std::vector<aicf::Func> stats;  // per-row reductions over r, in the order they run
    aicf::Func out;                 // the result, stored as T
    int width = 0;
};

namespace detail {

template <typename Src>
RowwiseOp rowwise_start(const Src &in, int width, const std::string &name,
                        const std::optional<aicf::Func> &out) {
    using namespace aicf;
    RowwiseOp op;
    op.width = width;
    op.r = RDom(0, width, name + "_r");
    op.row = Func(name + "_row");
    op.row(op.x, op.y) = cast<float>(in(op.x, op.y));
    op.out = out ? *out : Func(name);
    return op;
}

template <typename Src>
aicf::Func column_param(const Src &p, const aicf::Var &x, const std::string &name) {
    aicf::Func f(name);
    f(x) = aicf::cast<float>(p(x));
    return f;
}

} // namespace detail

// out = (in - mean) / sqrt(variance + eps) * weight + bias, per row; the variance about the
// mean (two reductions, the second over the row's deviations).
template <typename T, typename Src>
RowwiseOp layer_norm(const Src &in, const Src &weight, const Src &bias, int width, float eps,
                     const std::string &name, const std::optional<aicf::Func> &out = {}) {
    using namespace aicf;
    RowwiseOp op = detail::rowwise_start(in, width, name, out);
    const Var &x = op.x, &y = op.y;
    const RDom &r = op.r;
    Func w = detail::column_param(weight, x, name + "_weight");
    Func b = detail::column_param(bias, x, name + "_bias");
    Func sum(name + "_sum"), squares(name + "_squares");
    sum(y) = 0.0f;
    sum(y) += op.row(r, y);
    Expr mean = sum(y) / float(width);
    Expr d = op.row(r, y) - mean;
    squares(y) = 0.0f;
    squares(y) += d * d;
    Expr rstd = rsqrt(squares(y) / float(width) + eps);
    op.out(x, y) = cast<T>((op.row(x, y) - mean) * rstd * w(x) + b(x));
    op.params = {w, b};
    op.stats = {sum, squares};
    return op;
}

// out = in / sqrt(mean(in^2) + eps) * weight, per row.
template <typename T, typename Src>
RowwiseOp rms_norm(const Src &in, const Src &weight, int width, float eps, const std::string &name,
                   const std::optional<aicf::Func> &out = {}) {
    using namespace aicf;
    RowwiseOp op = detail::rowwise_start(in, width, name, out);
    const Var &x = op.x, &y = op.y;
    Func w = detail::column_param(weight, x, name + "_weight");
    Func squares(name + "_squares");
    squares(y) = 0.0f;
    squares(y) += op.row(op.r, y) * op.row(op.r, y);
    op.out(x, y) = cast<T>(op.row(x, y) * rsqrt(squares(y) / float(width) + eps) * w(x));
    op.params = {w};
    op.stats = {squares};
    return op;
}

// out = exp(in - max) / sum(exp(in - max)), per row.
template <typename T, typename Src>
RowwiseOp softmax(const Src &in, int width, const std::string &name,
                  const std::optional<aicf::Func> &out = {}) {
    using namespace aicf;
    RowwiseOp op = detail::rowwise_start(in, width, name, out);
    const Var &x = op.x, &y = op.y;
    Func hi(name + "_max"), total(name + "_total");
    hi(y) = -std::numeric_limits<float>::infinity();
    hi(y) = max(hi(y), op.row(op.r, y));
    total(y) = 0.0f;
    total(y) += exp(op.row(op.r, y) - hi(y));
    op.out(x, y) = cast<T>(exp(op.row(x, y) - hi(y)) / total(y));
    op.stats = {hi, total};
    return op;
}

} // namespace aicf_apps

#endif
