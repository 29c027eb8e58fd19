#include "lowering/ExtractKernels.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The Funcs computed in a statement, in order.
std::vector<std::string> funcs_produced(const Stmt &s) {
    std::vector<std::string> names;
    visit_each<ProducerConsumer>(s, [&](const ProducerConsumer *op) {
        if (op->is_producer && std::find(names.begin(), names.end(), op->name) == names.end())
            names.push_back(op->name);
    });
    return names;
}

// Replaces each kernel's loop nest in the host code by a launch.
class Extractor : public IRMutator {
public:
    Extractor(const Target &target, const std::string &pipeline,
              std::vector<LoweredKernel> &kernels)
        : target(target), pipeline(pipeline), kernels(kernels) {}

private:
    const Target &target;
    const std::string &pipeline;
    std::vector<LoweredKernel> &kernels;

    using IRMutator::visit;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::GPUBlock) return IRMutator::visit(op);
        LoweredKernel k;
        k.id = new_kernel_id();
        k.target = target;
        std::string main_func = func_of_loop(op->name);
        k.name = pipeline + "_k" + std::to_string(kernels.size()) + "_" + main_func;
        k.funcs = funcs_produced(Stmt(op));
        if (std::find(k.funcs.begin(), k.funcs.end(), main_func) == k.funcs.end())
            k.funcs.insert(k.funcs.begin(), main_func);
        k.body = op;

        std::array<Expr, 3> grid = {make_one(Int(32)), make_one(Int(32)), make_one(Int(32))};
        std::set<std::string> inner_names; // bound inside the kernel, outside its body
        std::vector<const For *> nest = block_loop_nest(op, &inner_names);
        for (size_t i = 0; i < nest.size(); i++) {
            const For *f = nest[i];
            int d = int(f->gpu_dim);
            internal_assert(d >= 0 && d < 3)
                << "extract_kernels: block loop " << f->name << " without a hardware dimension";
            for (size_t j = 0; j < i; j++)
                internal_assert(nest[j]->gpu_dim != f->gpu_dim)
                    << "extract_kernels: block loops " << nest[j]->name << " and " << f->name
                    << " both run along " << to_string(f->gpu_dim);
            user_assert(i == 0 || !uses_vars(f->extent, inner_names))
                << "The number of iterations of the GPU block loop " << loop_for_users(f->name)
                << " depends on an outer block loop of the same kernel ("
                << with_user_loop_names(to_string(f->extent))
                << "). The grid of a kernel must be known before it starts.";
            grid[d] = f->extent;
        }
        std::vector<Expr> args = {make_const(Int(32), int64_t(kernels.size())), grid[0], grid[1],
                                  grid[2]};
        kernels.push_back(std::move(k));
        return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_launch, args, Call::Intrinsic));
    }
};

} // namespace

ExtractedKernels extract_kernels(const Stmt &s, const Target &target,
                                 const std::string &pipeline_name) {
    ExtractedKernels result;
    result.host = Extractor(target, pipeline_name, result.kernels).mutate(s);
    return result;
}

} // namespace lowering
} // namespace aicf
