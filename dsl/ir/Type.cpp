#include "dsl/ir/Type.h"

#include "dsl/base/Error.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace aicf {
namespace ir {

int64_t Type::max_int() const {
    if (is_uint()) return bits >= 64 ? INT64_MAX : static_cast<int64_t>((uint64_t(1) << bits) - 1);
    return bits >= 64 ? INT64_MAX : static_cast<int64_t>((uint64_t(1) << (bits - 1)) - 1);
}

int64_t Type::min_int() const {
    if (is_uint()) return 0;
    return bits >= 64 ? INT64_MIN : -static_cast<int64_t>(uint64_t(1) << (bits - 1));
}

uint64_t Type::max_uint() const {
    if (is_uint()) return bits >= 64 ? UINT64_MAX : (uint64_t(1) << bits) - 1;
    return static_cast<uint64_t>(max_int());
}

bool Type::can_represent(int64_t v) const {
    if (is_int()) return v >= min_int() && v <= max_int();
    if (is_uint()) return v >= 0 && static_cast<uint64_t>(v) <= max_uint();
    if (is_float()) {
        // Integers up to the mantissa width convert exactly.
        int mantissa = code == TypeCode::BFloat ? 8 : bits == 16 ? 11 : bits == 32 ? 24 : 53;
        int64_t limit = int64_t(1) << mantissa;
        return v >= -limit && v <= limit;
    }
    return false;
}

bool Type::can_represent(double v) const {
    if (is_int_or_uint()) {
        if (v != std::floor(v)) return false;
        if (v < -9.2e18 || v > 9.2e18) return false;
        return can_represent(static_cast<int64_t>(v));
    }
    if (!is_float()) return false;
    if (bits == 64) return true;
    if (bits == 32) return static_cast<double>(static_cast<float>(v)) == v || std::isnan(v);
    return false;
}

bool Type::can_represent(Type o) const {
    if (lanes != o.lanes) return false;
    if (*this == o) return true;
    if (o.is_bool()) return is_int_or_uint() || is_float();
    if (is_int_or_uint() && o.is_int_or_uint()) {
        return o.min_int() >= min_int() && o.max_uint() <= max_uint();
    }
    if (is_float() && o.is_int_or_uint()) {
        int mantissa = code == TypeCode::BFloat ? 8 : bits == 16 ? 11 : bits == 32 ? 24 : 53;
        return o.bits <= mantissa;
    }
    if (is_float() && o.is_float()) {
        if (code == TypeCode::Float && o.code == TypeCode::Float) return bits >= o.bits;
        if (code == TypeCode::Float && o.code == TypeCode::BFloat) return bits >= 32;
        return false;
    }
    return false;
}

namespace {

const char *code_name(TypeCode c) {
    switch (c) {
    case TypeCode::Int:
        return "int";
    case TypeCode::UInt:
        return "uint";
    case TypeCode::Float:
        return "float";
    case TypeCode::BFloat:
        return "bfloat";
    case TypeCode::Handle:
        return "handle";
    }
    return "?";
}

} // namespace

void type_out_of_range(TypeCode code, int bits, int lanes) {
    throw CompileError(
        std::string("There is no type ") + code_name(code) + std::to_string(bits) +
        (lanes != 1 ? "x" + std::to_string(lanes) : std::string()) +
        ": a type is at most 255 bits wide with 0 to 65535 lanes, and values exist of bool, "
        "(u)int8, 16, 32 and 64, float16, 32 and 64, and bfloat16, in vectors of up to 65535 "
        "lanes.");
}

std::string with_article(Type t) {
    const std::string name = to_string(t);
    return (name[0] == 'i' ? "an " : "a ") + name;
}

std::string to_string(Type t) {
    std::string s;
    if (t.is_bool()) {
        s = "bool";
    } else {
        s = code_name(t.code);
        if (t.code != TypeCode::Handle) s += std::to_string(t.bits);
    }
    if (t.lanes > 1) s += "x" + std::to_string(t.lanes);
    return s;
}

bool is_valid_value_type(Type t) {
    if (t.lanes != 1) return false;
    switch (t.code) {
    case TypeCode::Int:
        return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case TypeCode::UInt:
        return t.bits == 1 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case TypeCode::Float:
        return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case TypeCode::BFloat:
        return t.bits == 16;
    case TypeCode::Handle:
        return false;
    }
    return false;
}

template <> Type type_of<bool>() {
    return Bool();
}
template <> Type type_of<int8_t>() {
    return Int(8);
}
template <> Type type_of<int16_t>() {
    return Int(16);
}
template <> Type type_of<int32_t>() {
    return Int(32);
}
template <> Type type_of<int64_t>() {
    return Int(64);
}
template <> Type type_of<uint8_t>() {
    return UInt(8);
}
template <> Type type_of<uint16_t>() {
    return UInt(16);
}
template <> Type type_of<uint32_t>() {
    return UInt(32);
}
template <> Type type_of<uint64_t>() {
    return UInt(64);
}
template <> Type type_of<float>() {
    return Float(32);
}
template <> Type type_of<double>() {
    return Float(64);
}
template <> Type type_of<float16_t>() {
    return Float(16);
}
template <> Type type_of<bfloat16_t>() {
    return BFloat(16);
}

} // namespace ir
} // namespace aicf
