#include "lowering/KernelClosure.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Substitute.h"
#include "lowering/AsyncCopy.h"

#include <map>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

void kernel_closure(LoweredKernel &kernel) {
    std::set<std::string> private_allocations;
    visit_each<Allocate>(kernel.body,
                         [&](const Allocate *op) { private_allocations.insert(op->name); });
    auto is_buffer = [&](const std::string &name) {
        return name != kSharedMemoryName && !private_allocations.count(name);
    };
    std::map<std::string, KernelArgument> buffers;
    auto buffer = [&](const std::string &name, Type t) -> KernelArgument & {
        KernelArgument &a = buffers[name];
        a.name = name;
        a.is_buffer = true;
        a.type = t.element_of();
        return a;
    };
    visit_each<Load>(kernel.body, [&](const Load *op) {
        if (is_buffer(op->name)) buffer(op->name, op->type).read = true;
    });
    visit_each<Store>(kernel.body, [&](const Store *op) {
        if (is_buffer(op->name)) buffer(op->name, op->value.type()).written = true;
    });
    // Asynchronous copies read their source buffer.
    visit_each<Call>(kernel.body, [&](const Call *op) {
        if (!op->is_intrinsic(Intrinsic::gpu_cp_async)) return;
        const AsyncCopyCall copy = async_copy_parts(op);
        if (is_buffer(copy.src)) buffer(copy.src, copy.type).read = true;
    });
    std::map<std::string, Type> var_types;
    visit_each<Variable>(kernel.body, [&](const Variable *op) { var_types[op->name] = op->type; });
    kernel.args.clear();
    for (const std::string &n : free_vars(kernel.body)) {
        if (buffers.count(n) || !is_buffer(n)) continue;
        auto it = var_types.find(n);
        internal_assert(it != var_types.end()) << "kernel closure: no type for " << n;
        KernelArgument a;
        a.name = n;
        a.type = it->second;
        kernel.args.push_back(a);
    }
    for (auto &kv : buffers)
        kernel.args.push_back(kv.second);
}

} // namespace lowering
} // namespace aicf
