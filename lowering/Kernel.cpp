#include "lowering/Kernel.h"

#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"

#include <algorithm>
#include <atomic>
#include <sstream>

namespace aicf {
namespace lowering {

uint64_t new_kernel_id() {
    static std::atomic<uint64_t> next_id{1};
    return next_id++;
}

std::vector<std::string> kernel_check_names(const ir::Stmt &body) {
    std::vector<std::string> names;
    ir::visit_each<ir::AssertStmt>(body, [&](const ir::AssertStmt *op) {
        const ir::Call *msg = op->message.as<ir::Call>();
        const ir::StringImm *name =
            msg && msg->args.size() >= 2 ? msg->args[1].as<ir::StringImm>() : nullptr;
        if (name) names.push_back(name->value);
    });
    // Codegen checks an allocation's element count where it is not a constant that fits
    // (CodeGen_LLVM::visit(const Allocate *)).
    ir::visit_each<ir::Allocate>(body, [&](const ir::Allocate *op) {
        int64_t count = 1;
        bool fits = true;
        for (const ir::Expr &e : op->extents) {
            const ir::IntImm *c = e.as<ir::IntImm>();
            fits = fits && c && c->value >= 0 && (count *= c->value) <= 0x7fffffff;
        }
        if (!fits) names.push_back(op->name);
    });
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

std::string describe_kernel(const LoweredKernel &k) {
    std::ostringstream s;
    s << "kernel " << k.name << " (computes";
    for (const std::string &f : k.funcs)
        s << " " << f;
    s << ")\n  block: " << k.threads[0] << " x " << k.threads[1] << " x " << k.threads[2] << " = "
      << k.thread_count() << " threads";
    if (k.launch_bounds.min_blocks_per_sm > 0)
        s << ", at least " << k.launch_bounds.min_blocks_per_sm << " blocks per multiprocessor";
    if (k.launch_bounds.max_registers > 0)
        s << ", at most " << k.launch_bounds.max_registers << " registers per thread";
    s << "\n  shared memory: " << k.shared_bytes << " bytes";
    for (const SharedAllocation &a : k.shared)
        s << "\n    " << a.func << ": " << a.bytes << " bytes at " << a.offset;
    s << "\n  arguments:";
    for (const KernelArgument &a : k.args) {
        s << " " << a.name << (a.is_buffer ? (a.written ? "[out " : "[in ") : "(")
          << ir::to_string(a.type) << (a.is_buffer ? "]" : ")");
    }
    s << "\n" << k.body;
    return s.str();
}

std::string kernel_launch_shape(const LoweredKernel &k) {
    std::ostringstream s;
    s << "kernel " << k.name << ": blocks over";
    const char *dims[3] = {"x", "y", "z"};
    for (int d = 0; d < 3; d++)
        if (!k.block_loops[d].empty()) s << " " << dims[d] << "=" << k.block_loops[d];
    s << "; " << k.threads[0] << " x " << k.threads[1] << " x " << k.threads[2]
      << " threads per block; " << k.shared_bytes << " bytes of shared memory";
    if (!k.shared.empty()) {
        s << " (";
        for (size_t i = 0; i < k.shared.size(); i++)
            s << (i ? ", " : "") << k.shared[i].func << " " << k.shared[i].bytes;
        s << ")";
    }
    return s.str() + "\n";
}

namespace {

// The first operand of a comparison node.
const ir::Expr &operand_of_comparison(const ir::Expr &node) {
    switch (node.node_type()) {
    case ir::IRNodeType::EQ:
        return node.as<ir::EQ>()->a;
    case ir::IRNodeType::NE:
        return node.as<ir::NE>()->a;
    case ir::IRNodeType::LT:
        return node.as<ir::LT>()->a;
    case ir::IRNodeType::LE:
        return node.as<ir::LE>()->a;
    case ir::IRNodeType::GT:
        return node.as<ir::GT>()->a;
    default:
        return node.as<ir::GE>()->a;
    }
}

} // namespace

int flops_per_lane(const ir::Expr &node) {
    const bool is_float = node.type().is_float() || node.type().is_bfloat();
    switch (node.node_type()) {
    case ir::IRNodeType::Add:
    case ir::IRNodeType::Sub:
    case ir::IRNodeType::Mul:
    case ir::IRNodeType::Div:
    case ir::IRNodeType::Mod:
    case ir::IRNodeType::Min:
    case ir::IRNodeType::Max:
        return is_float ? 1 : 0;
    case ir::IRNodeType::EQ:
    case ir::IRNodeType::NE:
    case ir::IRNodeType::LT:
    case ir::IRNodeType::LE:
    case ir::IRNodeType::GT:
    case ir::IRNodeType::GE: {
        // A comparison of floats is one flop, as min and max are: select(a > b, a, b) counts
        // what max(a, b) counts.
        const ir::Type t = operand_of_comparison(node).type();
        return t.is_float() || t.is_bfloat() ? 1 : 0;
    }
    case ir::IRNodeType::Call:
        switch (node.as<ir::Call>()->intrinsic) {
        case ir::Intrinsic::sqrt:
        case ir::Intrinsic::rsqrt:
        case ir::Intrinsic::exp:
        case ir::Intrinsic::log:
        case ir::Intrinsic::tanh:
        case ir::Intrinsic::erf:
        case ir::Intrinsic::sin:
        case ir::Intrinsic::cos:
        case ir::Intrinsic::pow:
            return 1;
        case ir::Intrinsic::fma:
            return 2;
        default:
            return 0;
        }
    default:
        return 0;
    }
}

} // namespace lowering
} // namespace aicf
