#include "dsl/Param.h"

#include "dsl/Operators.h"
#include "dsl/Var.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"

namespace aicf {

using namespace ir;

namespace detail {

Parameter make_scalar_param(Type t, const std::string &name) {
    std::string n = name.empty() ? unique_name("p") : name;
    if (!name.empty()) check_user_name(name, "Param");
    user_assert(is_valid_value_type(t)) << "Param " << n << " cannot have type " << to_string(t);
    return Parameter(t, false, 0, n);
}

Parameter make_buffer_param(Type t, int dimensions, const std::string &name) {
    std::string n = name.empty() ? unique_name("input") : name;
    if (!name.empty()) check_user_name(name, "ImageParam");
    user_assert(is_valid_value_type(t))
        << "ImageParam " << n << " cannot have elements of type " << to_string(t);
    user_assert(dimensions >= 0 && dimensions <= 16)
        << "ImageParam " << n << " has " << dimensions << " dimensions; AICF supports 0 to 16.";
    return Parameter(t, true, dimensions, n);
}

} // namespace detail

Expr Dimension::min() const {
    return buffer_field(param, BufferField::Min, dim);
}
Expr Dimension::extent() const {
    return buffer_field(param, BufferField::Extent, dim);
}
Expr Dimension::max() const {
    return min() + extent() - 1;
}
Expr Dimension::stride() const {
    return buffer_field(param, BufferField::Stride, dim);
}

ImageParam::ImageParam(Type t, int dimensions, const std::string &name)
    : param(detail::make_buffer_param(t, dimensions, name)) {}

void ImageParam::set(const BufferBase &buffer) {
    user_assert(param.defined()) << "set() on an undefined ImageParam.";
    runtime_assert(buffer.defined())
        << "ImageParam " << name() << " was given an undefined Buffer.";
    param.set_buffer(buffer.storage());
}

BufferBase ImageParam::get() const {
    struct View : BufferBase {
        explicit View(std::shared_ptr<BufferStorage> s) : BufferBase(std::move(s)) {}
    };
    return View(param.buffer());
}

Dimension ImageParam::dim(int d) const {
    user_assert(param.defined()) << "dim() on an undefined ImageParam.";
    user_assert(d >= 0 && d < dimensions()) << "ImageParam " << name() << " has " << dimensions()
                                            << " dimensions; dimension " << d << " does not exist.";
    return Dimension(param, d);
}

Expr ImageParam::operator()(const std::vector<Expr> &args) const {
    user_assert(param.defined()) << "Call to an undefined ImageParam.";
    user_assert(static_cast<int>(args.size()) == dimensions())
        << "ImageParam " << name() << " has " << dimensions() << " dimensions but is called with "
        << args.size() << " argument" << (args.size() == 1 ? "" : "s") << ".";
    std::vector<Expr> int_args;
    for (size_t i = 0; i < args.size(); i++) {
        user_assert(args[i].defined() && args[i].type().is_int_or_uint() &&
                    args[i].type().is_scalar())
            << "Argument " << i << " of a call to ImageParam " << name()
            << " must be an integer expression, but it is "
            << (args[i].defined() ? to_string(args[i].type()) : std::string("undefined")) << ".";
        int_args.push_back(ir::cast(Int(32), args[i]));
    }
    return Call::make_image(type(), name(), int_args, param);
}

} // namespace aicf
