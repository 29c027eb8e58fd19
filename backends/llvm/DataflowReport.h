#ifndef AICF_BACKENDS_LLVM_DATAFLOW_REPORT_H
#define AICF_BACKENDS_LLVM_DATAFLOW_REPORT_H

// Builds the dataflow report (dsl/Report.h): lowers the pipeline, follows its host code at
// the given sizes, counts each launch (lowering/KernelCost.h), asks ptxas for the kernels'
// registers when the CUDA toolkit is present, and lowers the operator-by-operator baseline
// (lowering/OperatorBaseline.h) to compare.

#include "dsl/Pipeline.h"
#include "dsl/Report.h"

#include <vector>

namespace aicf {
namespace backends {

DataflowReport dataflow_report(const std::vector<ir::Function> &outputs,
                               const std::vector<Argument> &args, const Target &target,
                               const std::vector<int> &sizes, const ReportArguments &given,
                               bool baseline);

} // namespace backends
} // namespace aicf

#endif
