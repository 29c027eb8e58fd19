#ifndef AICF_IR_PARAMETER_H
#define AICF_IR_PARAMETER_H

// A named input of a pipeline: a scalar (Param<T>) or a buffer (ImageParam, or a concrete
// Buffer used in an algorithm). The IR refers to inputs through Parameter handles, so lowering
// and argument inference know each input's type and rank without looking at data.

#include "dsl/ir/Expr.h"

#include <memory>
#include <string>

namespace aicf {

class BufferStorage;

namespace ir {

struct ParameterContents : RefCounted {
    std::string name;
    Type type;
    bool is_buffer = false;
    int dimensions = 0;
    // A scalar's current value, as raw bits (the low bytes hold the value).
    uint64_t scalar_bits = 0;
    bool scalar_set = false;
    // The buffer an ImageParam is bound to, or the concrete Buffer this parameter stands for.
    std::shared_ptr<BufferStorage> buffer;
    // True when the parameter stands for a concrete Buffer (its binding never changes).
    bool is_concrete_buffer = false;
};

class Parameter {
public:
    Parameter() = default;
    Parameter(Type t, bool is_buffer, int dimensions, const std::string &name);

    bool defined() const { return contents.defined(); }
    const std::string &name() const;
    Type type() const;
    bool is_buffer() const;
    int dimensions() const;

    void set_scalar_bits(uint64_t bits);
    uint64_t scalar_bits() const;
    bool scalar_set() const;

    void set_buffer(std::shared_ptr<BufferStorage> b, bool concrete = false);
    const std::shared_ptr<BufferStorage> &buffer() const;
    bool is_concrete_buffer() const;

    bool same_as(const Parameter &o) const { return contents.same_as(o.contents); }
    const ParameterContents *get() const { return contents.get(); }

private:
    IntrusivePtr<ParameterContents> contents;
};

// The run-time shape of a buffer input, as variables lowering binds from the buffer's
// descriptor: "<buffer>.min.<d>", "<buffer>.extent.<d>", "<buffer>.stride.<d>".
enum class BufferField { Min, Extent, Stride };
std::string buffer_field_name(const std::string &buffer, BufferField field, int dim);
// The variable of a buffer field (int32), tagged with the buffer's Parameter.
Expr buffer_field(const Parameter &buffer, BufferField field, int dim);

} // namespace ir
} // namespace aicf

#endif
