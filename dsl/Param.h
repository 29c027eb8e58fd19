#ifndef AICF_PARAM_H
#define AICF_PARAM_H

// Pipeline inputs whose values arrive at run time: Param<T> (a scalar) and ImageParam (a
// buffer of a given element type and rank, bound with set() before realizing).

#include "dsl/Buffer.h"
#include "dsl/ir/IR.h"

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace aicf {

namespace detail {
ir::Parameter make_scalar_param(ir::Type t, const std::string &name);
ir::Parameter make_buffer_param(ir::Type t, int dimensions, const std::string &name);
} // namespace detail

template <typename T> class Param {
public:
    explicit Param(const std::string &name = "")
        : param(detail::make_scalar_param(ir::type_of<T>(), name)) {}
    Param(T value, const std::string &name = "") : Param(name) { set(value); }
    // A name as a string literal: without this, Param<bool> flag("flag") would take the
    // literal as the value true (a pointer converts to bool before it converts to a string).
    template <typename S, typename = std::enable_if_t<std::is_same_v<S, const char *> ||
                                                      std::is_same_v<S, char *>>>
    explicit Param(S name) : Param(std::string(name)) {}

    void set(T value) {
        uint64_t bits = 0;
        std::memcpy(&bits, &value, sizeof(T));
        param.set_scalar_bits(bits);
    }
    T get() const {
        T v;
        uint64_t bits = param.scalar_bits();
        std::memcpy(&v, &bits, sizeof(T));
        return v;
    }
    const std::string &name() const { return param.name(); }
    ir::Type type() const { return param.type(); }
    operator ir::Expr() const { return ir::Variable::make(param.type(), param.name(), param); }
    const ir::Parameter &parameter() const { return param; }

private:
    ir::Parameter param;
};

// One dimension of an ImageParam, as run-time values for use in algorithms.
class Dimension {
public:
    Dimension(ir::Parameter p, int d) : param(std::move(p)), dim(d) {}
    ir::Expr min() const;
    ir::Expr extent() const;
    ir::Expr max() const;
    ir::Expr stride() const;

private:
    ir::Parameter param;
    int dim;
};

class ImageParam {
public:
    ImageParam() = default;
    ImageParam(ir::Type t, int dimensions, const std::string &name = "");

    // Binds the buffer a realize will read (checked against type and rank when it runs).
    void set(const BufferBase &buffer);
    BufferBase get() const;

    const std::string &name() const { return param.name(); }
    ir::Type type() const { return param.type(); }
    int dimensions() const { return param.dimensions(); }
    Dimension dim(int d) const;
    ir::Expr width() const { return dim(0).extent(); }
    ir::Expr height() const { return dim(1).extent(); }

    ir::Expr operator()(const std::vector<ir::Expr> &args) const;
    template <typename... Args> ir::Expr operator()(const Args &...args) const {
        return (*this)(std::vector<ir::Expr>{ir::Expr(args)...});
    }
    const ir::Parameter &parameter() const { return param; }

private:
    ir::Parameter param;
};

} // namespace aicf

#endif
