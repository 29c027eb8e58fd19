#ifndef AICF_AICF_H
#define AICF_AICF_H

// The one header users include.

#include "dsl/BoundaryConditions.h"
#include "dsl/Buffer.h"
#include "dsl/Func.h"
#include "dsl/Generator.h"
#include "dsl/InlineReductions.h"
#include "dsl/Operators.h"
#include "dsl/Param.h"
#include "dsl/Pipeline.h"
#include "dsl/RDom.h"
#include "dsl/Target.h"
#include "dsl/Tuple.h"
#include "dsl/Var.h"
#include "dsl/base/Error.h"
#include "dsl/base/Float16.h"
#include "dsl/ir/IRPrinter.h"

namespace aicf {
using ir::Expr;
using ir::Type;
using ir::type_of;
} // namespace aicf

#endif
