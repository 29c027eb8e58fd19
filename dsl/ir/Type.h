#ifndef AICF_IR_TYPE_H
#define AICF_IR_TYPE_H

// Scalar and vector types of the IR: the element kind, its width in bits and a lane count.

#include <cstdint>
#include <string>

namespace aicf {

struct float16_t;
struct bfloat16_t;

namespace ir {

enum class TypeCode : uint8_t { Int, UInt, Float, BFloat, Handle };

// Refuses a width or lane count that a Type cannot hold (a CompileError that names it).
[[noreturn]] void type_out_of_range(TypeCode code, int bits, int lanes);

struct Type {
    TypeCode code = TypeCode::Int;
    uint8_t bits = 32;
    uint16_t lanes = 1;

    constexpr Type() = default;
    constexpr Type(TypeCode c, int b, int l = 1)
        : code(c), bits(static_cast<uint8_t>(b)), lanes(static_cast<uint16_t>(l)) {
        if (b < 0 || b > 255 || l < 0 || l > 65535) type_out_of_range(c, b, l);
    }

    bool is_int() const { return code == TypeCode::Int; }
    bool is_uint() const { return code == TypeCode::UInt; }
    bool is_bool() const { return code == TypeCode::UInt && bits == 1; }
    bool is_int_or_uint() const { return is_int() || is_uint(); }
    bool is_float() const { return code == TypeCode::Float || code == TypeCode::BFloat; }
    bool is_bfloat() const { return code == TypeCode::BFloat; }
    bool is_handle() const { return code == TypeCode::Handle; }
    bool is_scalar() const { return lanes == 1; }
    bool is_vector() const { return lanes > 1; }

    Type with_lanes(int l) const { return Type(code, bits, l); }
    Type with_bits(int b) const { return Type(code, b, lanes); }
    Type with_code(TypeCode c) const { return Type(c, bits, lanes); }
    Type element_of() const { return with_lanes(1); }
    int bytes() const { return (bits + 7) / 8; }

    // Largest and smallest representable integer values (integer types only).
    int64_t max_int() const;
    int64_t min_int() const;
    uint64_t max_uint() const;
    // Whether an integer constant survives a conversion to this type unchanged.
    bool can_represent(int64_t v) const;
    bool can_represent(double v) const;
    // Whether every value of `other` is representable in this type.
    bool can_represent(Type other) const;

    bool operator==(const Type &o) const {
        return code == o.code && bits == o.bits && lanes == o.lanes;
    }
    bool operator!=(const Type &o) const { return !(*this == o); }
};

inline Type Int(int bits, int lanes = 1) {
    return Type(TypeCode::Int, bits, lanes);
}
inline Type UInt(int bits, int lanes = 1) {
    return Type(TypeCode::UInt, bits, lanes);
}
inline Type Float(int bits, int lanes = 1) {
    return Type(TypeCode::Float, bits, lanes);
}
inline Type BFloat(int bits = 16, int lanes = 1) {
    return Type(TypeCode::BFloat, bits, lanes);
}
inline Type Bool(int lanes = 1) {
    return Type(TypeCode::UInt, 1, lanes);
}
inline Type Handle(int lanes = 1) {
    return Type(TypeCode::Handle, 64, lanes);
}

// "int32", "float32x8", "bfloat16", "bool".
std::string to_string(Type t);
// With its article, for messages: "an int32", "a float32".
std::string with_article(Type t);

// True for the types a user may store in a Func, a Buffer or a Param.
bool is_valid_value_type(Type t);

// The IR type of a C++ scalar type.
template <typename T> Type type_of();

} // namespace ir
} // namespace aicf

#endif
