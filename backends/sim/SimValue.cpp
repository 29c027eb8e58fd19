// kind_of (see SimValue.h): the kind that holds a type's elements in the simulator, with an
// internal error for types that have no values in a kernel.

#include "backends/sim/SimValue.h"

#include "dsl/base/Error.h"

namespace aicf {
namespace backends {
namespace sim {

Kind kind_of(ir::Type t) {
    switch (t.code) {
    case ir::TypeCode::Int:
        internal_assert(t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)
            << "simulator: no integer type of " << int(t.bits) << " bits";
        return Kind::Int;
    case ir::TypeCode::UInt:
        internal_assert(t.bits == 1 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)
            << "simulator: no unsigned type of " << int(t.bits) << " bits";
        return Kind::UInt;
    case ir::TypeCode::Float:
        internal_assert(t.bits == 16 || t.bits == 32 || t.bits == 64)
            << "simulator: no float type of " << int(t.bits) << " bits";
        return t.bits == 16 ? Kind::F16 : t.bits == 32 ? Kind::F32 : Kind::F64;
    case ir::TypeCode::BFloat:
        internal_assert(t.bits == 16) << "simulator: no bfloat type of " << int(t.bits) << " bits";
        return Kind::BF16;
    case ir::TypeCode::Handle:
        break;
    }
    internal_error << "simulator: handles have no value in a kernel";
    return Kind::Int;
}

} // namespace sim
} // namespace backends
} // namespace aicf
