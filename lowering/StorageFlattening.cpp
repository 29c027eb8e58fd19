#include "lowering/StorageFlattening.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Simplify.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <climits>
#include <iomanip>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

Expr var(const std::string &n) {
    return Variable::make(Int(32), n);
}

const int64_t stack_limit_bytes = 16 * 1024;
// The most a Func stored on the stack by its schedule (store_in(MemoryType::Stack)) may take:
// threads' stacks are often 8 MiB, and those of the threads that run pipelines may be smaller.
const int64_t explicit_stack_limit_bytes = int64_t(1) << 20;

// Where the elements of a multi-dimensional array live.
struct Layout {
    std::vector<Expr> mins, strides;
    Parameter param; // set for pipeline buffers
    // Dimensions of one point in a register allocation: every valid access is at its min, so
    // the index leaves them out (a row held in registers, read at a row index the simplifier
    // cannot prove equal to the realized one, stays a register array with constant indices).
    std::vector<bool> single;
    // swizzle_storage(): the 16-byte piece (`elements` long) of dimension `inner` that an
    // element falls in is XORed with (row index / rows_per_key) % keys, the row index being
    // its offset in dimension `row`.
    struct Swizzle {
        int inner = -1, row = -1;
        int64_t elements = 0, keys = 0, rows_per_key = 1;
    } swizzle;
    // core_matrix_storage(): dimensions `inner` and `row` (the two innermost stored) tiled in
    // core matrices of 8 rows x 16 bytes (`elements` long), each 128 contiguous bytes; those
    // along a row 128 bytes apart, each 8 rows (`row_elements` long, padded) 8 * row_elements
    // elements apart.
    struct CoreMatrices {
        int inner = -1, row = -1;
        int64_t elements = 0;
        Expr row_elements;
    } cores;
};

Expr flat_index(const Layout &layout, const std::vector<Expr> &args) {
    internal_assert(args.size() == layout.mins.size()) << "flat_index rank mismatch";
    Expr index;
    for (size_t d = 0; d < args.size(); d++) {
        if (d < layout.single.size() && layout.single[d]) continue;
        Expr offset = Sub::make(args[d], layout.mins[d]);
        const Layout::Swizzle &sw = layout.swizzle;
        if (int(d) == sw.inner) {
            Expr row = Sub::make(args[size_t(sw.row)], layout.mins[size_t(sw.row)]);
            Expr key = Mod::make(Div::make(row, make_const(Int(32), sw.rows_per_key)),
                                 make_const(Int(32), sw.keys));
            Expr e = make_const(Int(32), sw.elements);
            Expr piece = Call::make(Int(32), Intrinsic::bitwise_xor, {Div::make(offset, e), key},
                                    Call::PureIntrinsic);
            offset = Add::make(Mul::make(piece, e), Mod::make(offset, e));
        }
        const Layout::CoreMatrices &cm = layout.cores;
        Expr term = Mul::make(offset, layout.strides[d]);
        if (int(d) == cm.inner) {
            Expr e = make_const(Int(32), cm.elements);
            term = Add::make(Mul::make(Div::make(offset, e), make_const(Int(32), 8 * cm.elements)),
                             Mod::make(offset, e));
        } else if (int(d) == cm.row) {
            Expr eight = make_const(Int(32), int64_t(8));
            term = Add::make(Mul::make(Div::make(offset, eight), Mul::make(cm.row_elements, eight)),
                             Mul::make(Mod::make(offset, eight), make_const(Int(32), cm.elements)));
        }
        index = index.defined() ? Add::make(index, term) : term;
    }
    return index.defined() ? index : make_zero(Int(32));
}

Layout buffer_layout(const std::string &buffer, int dims, const Parameter &param) {
    Layout l;
    for (int d = 0; d < dims; d++) {
        l.mins.push_back(var(buffer_field_name(buffer, BufferField::Min, d)));
        l.strides.push_back(var(buffer_field_name(buffer, BufferField::Stride, d)));
    }
    l.param = param;
    return l;
}

// The swizzle of a Func in shared memory whose rows (its innermost stored dimension, of
// `extents[0]` elements) are 2, 4 or a multiple of 8 pieces of 16 bytes.
Layout::Swizzle swizzle_of(const Function &f, const std::vector<std::string> &order,
                           const std::vector<Expr> &extents, const std::vector<Type> &types) {
    Layout::Swizzle sw;
    user_assert(order.size() >= 2)
        << "swizzle_storage on Func " << f.name() << ": it has one dimension, so no rows.";
    const int64_t bytes = types[0].bytes();
    for (const Type &t : types)
        user_assert(t.bytes() == bytes)
            << "swizzle_storage on Func " << f.name() << ": its Tuple elements differ in size ("
            << to_string(types[0]) << " and " << to_string(t) << "), so one permutation of "
            << "16-byte pieces cannot serve them all.";
    auto extent = as_const_int(simplify(extents[0]));
    const int64_t row_bytes = extent ? *extent * bytes : 0;
    const int64_t pieces = row_bytes / 16;
    // (An align_storage of the rows is the likelier cause than the fix.)
    std::string padded;
    for (const StorageAlignment &a : f.schedule().storage_alignment) {
        if (a.var == order[0])
            padded = ", which its align_storage(" + a.var + ", " + to_string(a.alignment) +
                     ") pads them to";
    }
    user_assert(extent && row_bytes % 16 == 0 && (pieces == 2 || pieces == 4 || pieces % 8 == 0))
        << "swizzle_storage on Func " << f.name() << ": its rows (dimension " << order[0]
        << ", stored innermost) are "
        << (extent ? std::to_string(row_bytes) + " bytes long"
                   : "of a length known only at run time")
        << padded
        << ", but the swizzle permutes the 16-byte pieces of rows of 32, 64 or a multiple of "
        << "128 bytes. "
        << (padded.empty() ? "Compute it over a region of such a constant size along " + order[0] +
                                 ", or pad it (align_storage)."
                           : "A swizzle replaces padding: remove the align_storage, or give a "
                             "multiple that makes such a row.");
    auto index_of = [&](const std::string &v) {
        return int(std::find(f.args().begin(), f.args().end(), v) - f.args().begin());
    };
    sw.inner = index_of(order[0]);
    sw.row = index_of(order[1]);
    sw.elements = 16 / bytes;
    sw.keys = std::min<int64_t>(pieces, 8);
    sw.rows_per_key = 8 / sw.keys;
    return sw;
}

// The core-matrix tiling of a Func in shared memory with two or more dimensions, whose
// elements divide 16 bytes.
Layout::CoreMatrices core_matrices_of(const Function &f, const std::vector<std::string> &order,
                                      const std::vector<Type> &types) {
    user_assert(order.size() >= 2) << "core_matrix_storage on Func " << f.name()
                                   << ": it has one dimension, so no rows to tile.";
    const int bytes = types[0].bytes();
    for (const Type &t : types)
        user_assert(t.bytes() == bytes && 16 % bytes == 0)
            << "core_matrix_storage on Func " << f.name() << ": core matrices hold 16-byte rows "
            << "of one element size that divides 16, but its elements are " << to_string(t)
            << (t.bytes() == bytes ? "" : " and " + to_string(types[0])) << ".";
    user_assert(!f.schedule().swizzled_storage)
        << "core_matrix_storage on Func " << f.name() << ": it is also swizzled "
        << "(swizzle_storage); a Func takes one of the two layouts.";
    user_assert(f.schedule().storage_alignment.empty())
        << "core_matrix_storage on Func " << f.name() << ": it is also padded (align_storage); "
        << "core matrices pad their rows to whole 16-byte pieces themselves, and the tensor "
        << "cores' descriptors expect no other padding. Drop align_storage().";
    auto index_of = [&](const std::string &v) {
        return int(std::find(f.args().begin(), f.args().end(), v) - f.args().begin());
    };
    Layout::CoreMatrices cm;
    cm.inner = index_of(order[0]);
    cm.row = index_of(order[1]);
    cm.elements = 16 / bytes;
    return cm;
}

// A shared layout's name in a message.
const char *memory_for_users(MemoryType t) {
    return t == MemoryType::Register ? "registers"
           : t == MemoryType::Stack  ? "stack memory"
                                     : "device or host memory";
}

// (It tracks the lets around each node to bound the extents of per-thread storage.)
class FlattenStorage : public LetTrackingMutator {
public:
    FlattenStorage(const std::vector<Argument> &args, const std::map<std::string, Function> &env)
        : env(env) {
        for (const Argument &a : args) {
            if (!a.is_buffer) continue;
            Parameter p =
                a.param.defined() ? a.param : Parameter(a.type, true, a.dimensions, a.name);
            layouts[a.name] = buffer_layout(a.name, a.dimensions, p);
        }
    }

private:
    const std::map<std::string, Function> &env;
    std::map<std::string, Layout> layouts; // by storage name

    using LetTrackingMutator::visit;

    // A thread's registers are laid out over the constant bound of each extent: a tail's
    // smaller region then keeps the same strides, so that every index into the registers
    // stays constant once the loops are unrolled (with strides known only at run time, the
    // array would go to local memory). So is a block's shared memory, whose size is that
    // bound anyway: with constant strides, the index of a tile staged in rounds is a known
    // function of the thread and the round, so the rounds of an edge tile need no barrier
    // between them (one before the first), and the index costs no run-time multiplication.
    Expr constant_layout_extent(const Expr &extent, MemoryType memory) const {
        if (is_const(extent) || (memory != MemoryType::Register && memory != MemoryType::GPUShared))
            return extent;
        auto bound = constant_upper_bound(expand(extent));
        if (!bound || (memory == MemoryType::Register && *bound > 4096)) return extent;
        return make_const(Int(32), std::max<int64_t>(*bound, 1));
    }

    // A Func the schedule stores on the stack whose size is a constant too large for it: a
    // CompileError (storage of a size known only at run time goes on the heap).
    static void check_stack_size(const Function &f, const std::vector<Type> &types,
                                 const std::vector<Expr> &extents) {
        int64_t element = 0;
        for (const Type &t : types)
            element = std::max<int64_t>(element, t.bytes());
        double bytes = double(element); // exact below 2^53, and compared only with 1 MiB
        for (const Expr &e : extents) {
            auto c = as_const_int(simplify(e));
            if (!c) return;
            bytes *= double(std::max<int64_t>(*c, 0));
        }
        user_assert(bytes <= double(explicit_stack_limit_bytes))
            << "Func " << f.name() << " is stored on the stack (store_in(MemoryType::Stack)), but "
            << "its storage takes " << std::setprecision(15) << bytes << " bytes, more than the "
            << explicit_stack_limit_bytes << " AICF places on a thread's stack (stacks are often "
            << "8 MiB or less, and the threads that run a pipeline may have less). Store it in "
            << "MemoryType::Heap, or MemoryType::Auto (which chooses by size), or compute it over "
            << "a smaller region (compute_at an inner loop).";
    }

    Stmt visit(const Realize *op) override {
        const Function &f = env.at(op->name);
        int n = static_cast<int>(op->types.size());
        // Strides of a dense layout in the storage order (padded where align_storage asks),
        // as lets around the allocations.
        const FuncSchedule &sched = f.schedule();
        std::vector<std::string> order =
            sched.storage_order.empty() ? f.args() : sched.storage_order;
        std::vector<std::pair<std::string, Expr>> stride_lets;
        Layout layout;
        layout.mins.resize(op->bounds.size());
        layout.strides.resize(op->bounds.size());
        Expr stride = make_one(Int(32));
        Expr total = make_one(Int(32)); // the element count, in terms of the extents only
        std::vector<Expr> extents;      // padded, in storage order; their product is the size
        std::vector<Stmt> checks;       // that padding does not wrap
        for (const std::string &v : order) {
            size_t d = std::find(f.args().begin(), f.args().end(), v) - f.args().begin();
            internal_assert(d < op->bounds.size()) << "storage order names " << v;
            std::string sname = buffer_field_name(op->name, BufferField::Stride, int(d));
            stride_lets.emplace_back(sname, stride);
            layout.mins[d] = op->bounds[d].min;
            layout.strides[d] = var(sname);
            Expr extent = constant_layout_extent(op->bounds[d].extent, op->memory_type);
            for (const StorageAlignment &a : sched.storage_alignment) {
                if (a.var != v) continue;
                if (!is_const(a.alignment)) {
                    checks.push_back(assert_positive(a.alignment, "alignment that align_storage(" +
                                                                      v + ") gives " + f.name()));
                }
                // The padded extent must not wrap: checked in 64 bits before the allocation.
                auto wide = [](const Expr &e) { return Cast::make(Int(64), e); };
                Expr a64 = wide(a.alignment), one64 = make_one(Int(64));
                Expr padded64 = simplify(
                    Mul::make(Div::make(Sub::make(Add::make(wide(extent), a64), one64), a64), a64));
                Expr msg = Call::make(
                    Int(32), Intrinsic::runtime_error,
                    {make_const(Int(32), int64_t(RuntimeErrorKind::StoragePaddingTooLarge)),
                     StringImm::make(f.name()), make_const(Int(32), int64_t(d)), wide(extent), a64,
                     padded64},
                    Call::Intrinsic);
                checks.push_back(AssertStmt::make(
                    simplify(LE::make(padded64, make_const(Int(64), int64_t(INT32_MAX)))), msg));
                extent = simplify(Cast::make(Int(32), padded64));
            }
            // Core matrices: the rows padded to whole 16-byte pieces, and to groups of 8.
            if (sched.core_matrix_storage &&
                (v == order[0] || (order.size() > 1 && v == order[1]))) {
                const int64_t unit = v == order[0] ? 16 / std::max(op->types[0].bytes(), 1) : 8;
                Expr u = make_const(Int(32), unit);
                extent = simplify(
                    Mul::make(Div::make(Add::make(extent, make_const(Int(32), unit - 1)), u), u));
                if (v == order[0]) layout.cores.row_elements = extent;
            }
            stride = Mul::make(var(sname), extent);
            total = Mul::make(total, extent);
            extents.push_back(extent);
        }
        user_assert(!sched.swizzled_storage || op->memory_type == MemoryType::GPUShared)
            << "swizzle_storage on Func " << f.name() << ": the swizzle lays out a tile in GPU "
            << "shared memory, but " << f.name() << " is stored in "
            << memory_for_users(op->memory_type) << ". Compute it at a loop of a GPU kernel "
            << "(compute_at) and store_in(MemoryType::GPUShared), or drop swizzle_storage().";
        if (sched.swizzled_storage) layout.swizzle = swizzle_of(f, order, extents, op->types);
        user_assert(!sched.core_matrix_storage || op->memory_type == MemoryType::GPUShared)
            << "core_matrix_storage on Func " << f.name() << ": core matrices lay out a tile in "
            << "GPU shared memory for the tensor cores, but " << f.name() << " is stored in "
            << memory_for_users(op->memory_type) << ". Compute it at a loop of a GPU kernel "
            << "(compute_at) and store_in(MemoryType::GPUShared), or drop core_matrix_storage().";
        if (sched.core_matrix_storage) {
            Expr row_elements = layout.cores.row_elements;
            layout.cores = core_matrices_of(f, order, op->types);
            layout.cores.row_elements = row_elements;
        }
        if (op->memory_type == MemoryType::Register) {
            layout.single.resize(op->bounds.size());
            for (size_t d = 0; d < op->bounds.size(); d++)
                layout.single[d] = is_const(simplify(op->bounds[d].extent), 1);
        }
        total = simplify(total);
        for (int k = 0; k < n; k++)
            layouts[storage_name(f.name(), k, n)] = layout;
        Stmt body = mutate(op->body);
        MemoryType mt = op->memory_type;
        if (mt == MemoryType::Stack) check_stack_size(f, op->types, extents);
        if (mt == MemoryType::Auto) {
            // Small allocations of a constant size live on the stack (where LLVM can keep
            // them in registers); the rest on the heap.
            int64_t bytes = 0;
            for (const Type &t : op->types)
                bytes = std::max<int64_t>(bytes, t.bytes());
            auto count = as_const_int(total);
            bytes = count && *count >= 0 && *count <= stack_limit_bytes ? bytes * *count : -1;
            if (bytes > stack_limit_bytes) bytes = -1;
            mt = bytes >= 0 ? MemoryType::Stack : MemoryType::Heap;
        }
        for (int k = n - 1; k >= 0; k--) {
            body = Allocate::make(storage_name(f.name(), k, n), op->types[k], mt, extents, body);
        }
        if (!checks.empty()) body = Block::make(Block::make(checks), body);
        for (auto it = stride_lets.rbegin(); it != stride_lets.rend(); ++it)
            body = LetStmt::make(it->first, it->second, body);
        return body;
    }

    Stmt visit(const Provide *op) override {
        auto fit = env.find(op->name);
        internal_assert(fit != env.end()) << "Provide to unknown Func " << op->name;
        int n = static_cast<int>(op->values.size());
        std::vector<Expr> args, values;
        mutate_exprs(op->args, args);
        mutate_exprs(op->values, values);
        if (n == 1) {
            std::string name = storage_name(op->name, 0, 1);
            const Layout &l = layout_of(name);
            return Store::make(name, values[0], flat_index(l, args), Expr(), l.param);
        }
        // All values first, then the stores: f(x) = {f(x)[1], f(x)[0]} swaps.
        std::vector<Stmt> stores;
        for (int k = 0; k < n; k++) {
            std::string name = storage_name(op->name, k, n);
            const Layout &l = layout_of(name);
            Expr value = Variable::make(values[k].type(), op->name + ".value." + std::to_string(k));
            stores.push_back(Store::make(name, value, flat_index(l, args), Expr(), l.param));
        }
        Stmt s = Block::make(stores);
        for (int k = n - 1; k >= 0; k--)
            s = LetStmt::make(op->name + ".value." + std::to_string(k), values[k], s);
        return s;
    }

    Expr visit(const Call *op) override {
        if (op->call_type != Call::Func && op->call_type != Call::Image)
            return IRMutator::visit(op);
        std::vector<Expr> args;
        mutate_exprs(op->args, args);
        std::string name = op->name;
        if (op->call_type == Call::Func) {
            const Function &f = env.at(op->name);
            name = storage_name(f.name(), op->value_index, f.outputs());
        }
        const Layout &l = layout_of(name);
        return Load::make(op->type, name, flat_index(l, args), Expr(), l.param);
    }

    const Layout &layout_of(const std::string &name) const {
        auto it = layouts.find(name);
        internal_assert(it != layouts.end()) << "no storage for " << name;
        return it->second;
    }
};

} // namespace

Stmt storage_flattening(const Stmt &s, const std::vector<Argument> &args,
                        const std::map<std::string, Function> &env) {
    return FlattenStorage(args, env).mutate(s);
}

} // namespace lowering
} // namespace aicf
