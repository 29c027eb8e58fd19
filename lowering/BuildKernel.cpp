#include "lowering/BuildKernel.h"

#include "dsl/Error.h"
#include "dsl/ir/Bounds.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/GPUPlacement.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

const char *const dim_names[3] = {"x", "y", "z"};

Expr thread_index(int d) {
    return Call::make(Int(32), Intrinsic::gpu_thread_index, {make_const(Int(32), int64_t(d))});
}
Expr block_index(int d) {
    return Call::make(Int(32), Intrinsic::gpu_block_index, {make_const(Int(32), int64_t(d))});
}
Stmt barrier() {
    return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_barrier, {}, Call::Intrinsic));
}

bool contains_thread_loop(const Stmt &s) {
    bool found = false;
    visit_each<For>(s, [&](const For *op) { found = found || op->for_type == ForType::GPUThread; });
    return found;
}

// Moves sums into min and max: min(a, b) + c becomes min(a + c, b + c), so that a size
// written as min(i * 16 + 15, n - 1) - i * 16 + 1 shows its constant bound (16).
class DistributeIntoMinMax : public IRMutator {
    using IRMutator::visit;
    // m (a Min or Max) plus b, or minus b when `negate`, with the sum moved inside.
    template <typename Op>
    static Expr distribute(const Op *m, const Expr &b, bool negate) {
        auto combine = [&](const Expr &x) {
            return simplify(negate ? Expr(Sub::make(x, b)) : Expr(Add::make(x, b)));
        };
        return Op::make(combine(m->a), combine(m->b));
    }
    Expr visit(const Add *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (const Min *m = a.as<Min>()) return distribute(m, b, false);
        if (const Max *m = a.as<Max>()) return distribute(m, b, false);
        if (const Min *m = b.as<Min>()) return distribute(m, a, false);
        if (const Max *m = b.as<Max>()) return distribute(m, a, false);
        return Add::make(a, b);
    }
    Expr visit(const Sub *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (const Min *m = a.as<Min>()) return distribute(m, b, true);
        if (const Max *m = a.as<Max>()) return distribute(m, b, true);
        return Sub::make(a, b);
    }
    // min(a, b) * c is min(a * c, b * c) for a positive constant c (a max for a negative one):
    // a fused loop's extent, min(n - i * 8, 7) * 2 + 2, then shows its bound (16).
    Expr visit(const Mul *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (is_const(a) && !is_const(b)) std::swap(a, b);
        auto c = as_const_int(b);
        const Min *mn = a.as<Min>();
        const Max *mx = a.as<Max>();
        if (!c || *c == 0 || (!mn && !mx)) return Mul::make(a, b);
        Expr x = simplify(Mul::make(mn ? mn->a : mx->a, b)), y = simplify(Mul::make(mn ? mn->b : mx->b, b));
        bool min_after = (mn != nullptr) == (*c > 0);
        return min_after ? Expr(Min::make(x, y)) : Expr(Max::make(x, y));
    }
};

// A constant upper bound of e: the smaller side of a min suffices.
std::optional<int64_t> upper_bound_of(const Expr &e) {
    if (auto c = as_const_int(e)) return *c;
    if (const Min *m = e.as<Min>()) {
        auto a = upper_bound_of(m->a), b = upper_bound_of(m->b);
        if (a && b) return std::min(*a, *b);
        return a ? a : b;
    }
    if (const Max *m = e.as<Max>()) {
        auto a = upper_bound_of(m->a), b = upper_bound_of(m->b);
        if (a && b) return std::max(*a, *b);
        return std::nullopt;
    }
    Interval i = bounds_of_expr_in_scope(e, Scope<Interval>());
    if (i.has_upper_bound()) {
        if (auto c = as_const_int(simplify(i.max))) return *c;
    }
    return std::nullopt;
}

// A constant upper bound of a size or extent, if there is one to find.
std::optional<int64_t> constant_upper_bound(const Expr &e) {
    Expr s = simplify(e);
    if (auto c = upper_bound_of(s)) return c;
    return upper_bound_of(simplify(DistributeIntoMinMax().mutate(s)));
}

// A visitor that knows the values of the lets around the current node, so sizes written in
// terms of them can be bounded.
struct LetTracker : IRVisitor {
    std::vector<std::pair<std::string, Expr>> lets; // outermost first
    using IRVisitor::visit;
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        lets.emplace_back(op->name, op->value);
        op->body.accept(this);
        lets.pop_back();
    }
    Expr expand(const Expr &e) const { return substitute_lets(lets, e); }
    // A constant bound on the elements of an allocation with these extents.
    std::optional<int64_t> element_count_bound(const std::vector<Expr> &extents) const {
        int64_t n = 1;
        for (const Expr &e : extents) {
            auto c = constant_upper_bound(expand(e));
            if (!c) return std::nullopt;
            n *= std::max<int64_t>(*c, 0);
            if (n > (int64_t(1) << 40)) return n;
        }
        return n;
    }
};

std::string product_text(const std::vector<Expr> &extents) {
    std::ostringstream s;
    for (size_t i = 0; i < extents.size(); i++) s << (i ? " * " : "") << extents[i];
    return extents.empty() ? "1" : s.str();
}

// The memory a load or store touches, for deciding where barriers go: a byte range of
// shared memory, or a whole global buffer. When the element each thread touches is a known
// one-to-one function of the thread index (`index`, in terms of the thread index and values
// common to the block), two accesses with the same function stay within each thread.
struct Resource {
    std::string name;
    int64_t lo = 0, hi = std::numeric_limits<int64_t>::max();
    std::string storage; // the allocation or buffer accessed
    Expr index;          // undefined when not known to be one-to-one in the thread index
    bool overlaps(const Resource &o) const { return name == o.name && lo < o.hi && o.lo < hi; }
    bool same_element_in_each_thread(const Resource &o) const {
        return index.defined() && o.index.defined() && storage == o.storage && equal(index, o.index);
    }
};

struct Accesses {
    std::vector<Resource> reads, writes;
    void add(const Accesses &o) {
        reads.insert(reads.end(), o.reads.begin(), o.reads.end());
        writes.insert(writes.end(), o.writes.begin(), o.writes.end());
    }
    // Whether running `later` after this without a barrier could let one thread see memory
    // in another's unfinished state: a write against an access of the other side, unless
    // both touch the same element in each thread.
    bool conflicts_with(const Accesses &later) const {
        auto any = [](const std::vector<Resource> &a, const std::vector<Resource> &b) {
            for (const Resource &x : a)
                for (const Resource &y : b)
                    if (x.overlaps(y) && !x.same_element_in_each_thread(y)) return true;
            return false;
        };
        return any(writes, later.reads) || any(writes, later.writes) || any(reads, later.writes);
    }
    // The same accesses with no claim about which thread touches which element (for
    // accesses made in another iteration of a loop).
    Accesses without_indices() const {
        Accesses a = *this;
        for (Resource &r : a.reads) r.index = Expr();
        for (Resource &r : a.writes) r.index = Expr();
        return a;
    }
};

// Replaces gpu_thread_index(d) by given values.
class ReplaceThreadIndex : public IRMutator {
public:
    explicit ReplaceThreadIndex(std::array<int64_t, 3> v) : values(v) {}

private:
    std::array<int64_t, 3> values;
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (!op->is_intrinsic(Intrinsic::gpu_thread_index)) return IRMutator::visit(op);
        auto d = as_const_int(op->args[0]);
        internal_assert(d && *d >= 0 && *d < 3) << "gpu_thread_index of a bad dimension";
        return make_const(op->type, values[size_t(*d)]);
    }
};

struct SharedSlot {
    int64_t offset = 0, bytes = 0;
    Type type;
};

// Builds one kernel from an outermost block loop nest.
class KernelBuilder {
public:
    KernelBuilder(const Target &target, LoweredKernel &kernel) : target(target), kernel(kernel) {}

    // Returns the grid extents (host expressions); fills the kernel.
    std::array<Expr, 3> build(const For *outer) {
        std::array<Expr, 3> grid = map_blocks(outer);
        Stmt body = kernel.body;
        find_thread_dims(body);
        check_block_shape();
        plan_shared_memory(body);
        collect_private_and_written(body);
        Accesses pending;
        body = insert_barriers(body, pending);
        body = fuse_thread_loops(body);
        body = rewrite_shared(body);
        kernel.body = simplify(body);
        find_closure();
        return grid;
    }

private:
    const Target &target;
    LoweredKernel &kernel;
    std::map<std::string, int> thread_dim;         // thread loop -> hardware dimension
    std::map<std::string, SharedSlot> shared;       // shared allocation -> its slot
    std::set<std::string> private_allocations;      // per-thread allocations
    std::set<std::string> written_globals;          // buffers the kernel stores to
    std::vector<std::pair<std::string, Expr>> context; // block-level lets around the current part
    std::map<std::string, int64_t> register_elements; // per-thread allocation -> constant size

    // Block loops become lets of the block index; returns the grid extents.
    std::array<Expr, 3> map_blocks(const For *outer) {
        std::vector<const For *> nest;
        std::set<std::string> inner_names; // names bound inside the kernel, outside its body
        Stmt s = outer;
        while (true) {
            if (const LetStmt *l = s.as<LetStmt>()) {
                inner_names.insert(l->name);
                s = l->body;
                continue;
            }
            const For *f = s.as<For>();
            if (!f || f->for_type != ForType::GPUBlock) break;
            nest.push_back(f);
            inner_names.insert(f->name);
            s = f->body;
        }
        std::array<Expr, 3> grid = {make_one(Int(32)), make_one(Int(32)), make_one(Int(32))};
        std::map<const For *, int> dims;
        for (size_t i = 0; i < nest.size(); i++) {
            int d = int(nest.size() - 1 - i);
            dims[nest[i]] = d;
            grid[d] = nest[i]->extent;
            kernel.block_loops[d] = nest[i]->name;
            user_assert(i == 0 || !uses_vars(nest[i]->extent, inner_names))
                << "The number of iterations of the GPU block loop " << nest[i]->name
                << " depends on an outer block loop of the same kernel (" << nest[i]->extent
                << "). The grid of a kernel must be known before it starts.";
        }
        for (const For *f : nest) kernel.loop_vars.push_back(f->name);
        struct Mapper : IRMutator {
            std::map<const For *, int> &dims;
            explicit Mapper(std::map<const For *, int> &d) : dims(d) {}
            using IRMutator::visit;
            Stmt visit(const For *op) override {
                auto it = dims.find(op);
                if (it == dims.end()) return IRMutator::visit(op);
                Expr v = Add::make(op->min, block_index(it->second));
                return LetStmt::make(op->name, v, mutate(op->body));
            }
        } mapper(dims);
        kernel.body = mapper.mutate(Stmt(outer));
        return grid;
    }

    // The hardware dimension of each thread loop: the innermost is x.
    void find_thread_dims(const Stmt &s) {
        struct Finder : LetTracker {
            KernelBuilder &kb;
            explicit Finder(KernelBuilder &k) : kb(k) {}
            using LetTracker::visit;
            void visit(const For *op) override {
                IRVisitor::visit(op);
                if (op->for_type != ForType::GPUThread) return;
                int d = thread_nest_depth(op->body);
                user_assert(d < 3)
                    << "The GPU thread loop " << op->name << " of " << func_of_loop(op->name)
                    << " has " << d << " thread loops inside it; a block has at most three "
                    << "dimensions. Fuse thread loops to use fewer.";
                kb.thread_dim[op->name] = d;
                auto extent = constant_upper_bound(expand(op->extent));
                user_assert(extent.has_value())
                    << "The GPU thread loop " << op->name << " of " << func_of_loop(op->name)
                    << " has " << op->extent << " iterations, which is not bounded by a "
                    << "constant, so the block shape is unknown. Split the loop by a constant "
                    << "factor (gpu_tile with a constant size does) or bound() the Func.";
                if (*extent > kb.kernel.threads[d]) {
                    kb.kernel.threads[d] = int(std::min<int64_t>(*extent, 1 << 30));
                    kb.kernel.thread_loops[d] = op->name;
                }
            }
        } finder(*this);
        s.accept(&finder);
    }

    void check_block_shape() {
        int64_t total = int64_t(kernel.threads[0]) * kernel.threads[1] * kernel.threads[2];
        static const int limits[3] = {1024, 1024, 64};
        std::ostringstream shape;
        for (int d = 0; d < 3; d++) {
            if (kernel.threads[d] > 1)
                shape << (shape.tellp() > 0 ? ", " : "") << kernel.threads[d] << " in "
                      << dim_names[d] << " (loop " << kernel.thread_loops[d] << ")";
        }
        user_assert(total <= target.max_threads_per_block())
            << "The kernel " << kernel.name << " needs " << total << " threads per block ("
            << shape.str() << "), but " << target.to_string() << " allows at most "
            << target.max_threads_per_block() << ". Split the thread loops by smaller factors.";
        for (int d = 0; d < 3; d++) {
            user_assert(kernel.threads[d] <= limits[d])
                << "The kernel " << kernel.name << " needs " << kernel.threads[d]
                << " threads in dimension " << dim_names[d] << " (loop "
                << kernel.thread_loops[d] << "), but a block allows at most " << limits[d]
                << " there.";
        }
    }

    // Lifetimes of shared allocations as intervals over the parts of the body (thread loop
    // nests and block-level stores, numbered in program order), then a first-fit packing:
    // allocations whose lifetimes overlap get disjoint byte ranges. A lifetime runs from the
    // first part that touches the allocation to the last; a loop inside the allocation's
    // scope that touches it keeps it alive for the whole loop (later iterations read it).
    void plan_shared_memory(const Stmt &body) {
        struct Alloc {
            std::string name;
            Type type;
            int64_t bytes;
            int first, last;
        };
        std::vector<Alloc> allocs;
        struct Loop {
            int first, last;
            std::set<std::string> enclosing; // the shared allocations open around it
        };
        struct Walker : LetTracker {
            std::vector<Alloc> &allocs;
            KernelBuilder &kb;
            int part = 0;
            int thread_depth = 0;
            std::set<std::string> open;
            std::vector<Loop> loops;
            std::map<std::string, std::vector<int>> touches;
            Walker(std::vector<Alloc> &a, KernelBuilder &k) : allocs(a), kb(k) {}
            using LetTracker::visit;
            void enter_part(const Stmt &s) {
                part++;
                visit_each<Load>(s, [&](const Load *l) { touches[l->name].push_back(part); });
                visit_each<Store>(s, [&](const Store *st) { touches[st->name].push_back(part); });
            }
            void visit(const For *op) override {
                bool thread = op->for_type == ForType::GPUThread;
                if (thread && thread_depth == 0) enter_part(Stmt(op));
                if (!thread && thread_depth == 0) {
                    loops.push_back({part + 1, 0, open});
                    size_t me = loops.size() - 1;
                    IRVisitor::visit(op);
                    loops[me].last = part;
                    return;
                }
                thread_depth += thread;
                IRVisitor::visit(op);
                thread_depth -= thread;
            }
            void visit(const Store *op) override {
                if (thread_depth == 0) enter_part(Stmt(op));
                IRVisitor::visit(op);
            }
            void visit(const Allocate *op) override {
                if (op->memory_type != MemoryType::GPUShared) {
                    IRVisitor::visit(op);
                    return;
                }
                auto n = element_count_bound(op->extents);
                user_assert(n.has_value())
                    << "Func " << op->name << " is stored in GPU shared memory in kernel "
                    << kb.kernel.name << ", but its size (" << product_text(op->extents)
                    << " elements) is not bounded by a constant. Compute it over a region of "
                    << "constant size: split the consumer's loops by constants, or bound() "
                    << op->name << ".";
                open.insert(op->name);
                IRVisitor::visit(op);
                open.erase(op->name);
                const std::vector<int> &t = touches[op->name];
                int first = t.empty() ? part : *std::min_element(t.begin(), t.end());
                int last = t.empty() ? part : *std::max_element(t.begin(), t.end());
                for (const Loop &l : loops) {
                    if (!l.enclosing.count(op->name)) continue;
                    bool touched = std::any_of(t.begin(), t.end(), [&](int p) { return p >= l.first && p <= l.last; });
                    if (touched) {
                        first = std::min(first, l.first);
                        last = std::max(last, l.last);
                    }
                }
                allocs.push_back({op->name, op->type, std::max<int64_t>(*n, 0) * op->type.bytes(),
                                  first, last});
            }
        } walker(allocs, *this);
        body.accept(&walker);

        std::sort(allocs.begin(), allocs.end(),
                  [](const Alloc &a, const Alloc &b) { return a.bytes > b.bytes; });
        std::vector<std::pair<const Alloc *, SharedSlot>> placed;
        int64_t total = 0;
        for (const Alloc &a : allocs) {
            int64_t offset = 0;
            bool moved = true;
            while (moved) {
                moved = false;
                for (const auto &p : placed) {
                    bool live_together = a.first <= p.first->last && p.first->first <= a.last;
                    bool overlap = offset < p.second.offset + p.second.bytes &&
                                   p.second.offset < offset + a.bytes;
                    if (live_together && overlap) {
                        offset = (p.second.offset + p.second.bytes + 15) / 16 * 16;
                        moved = true;
                    }
                }
            }
            SharedSlot slot{offset, a.bytes, a.type};
            placed.emplace_back(&a, slot);
            shared[a.name] = slot;
            kernel.shared.push_back({a.name, offset, a.bytes});
            total = std::max(total, offset + a.bytes);
        }
        kernel.shared_bytes = total;
        if (total > target.max_shared_memory_per_block()) {
            std::ostringstream list;
            for (const SharedAllocation &a : kernel.shared)
                list << "\n  " << a.func << ": " << a.bytes << " bytes at offset " << a.offset;
            user_error << "The kernel " << kernel.name << " needs " << total
                       << " bytes of shared memory per block, more than the "
                       << target.max_shared_memory_per_block() << " that " << target.to_string()
                       << " allows. Its shared allocations:" << list.str()
                       << "\nUse smaller tiles, or store some of these Funcs in registers or "
                       << "device memory.";
        }
    }

    void collect_private_and_written(const Stmt &body) {
        struct Checker : LetTracker {
            KernelBuilder &kb;
            explicit Checker(KernelBuilder &k) : kb(k) {}
            using LetTracker::visit;
            void visit(const Allocate *op) override {
                IRVisitor::visit(op);
                if (op->memory_type == MemoryType::GPUShared) return;
                user_assert(op->memory_type == MemoryType::Register ||
                            op->memory_type == MemoryType::Stack)
                    << "Func " << op->name << " is allocated in " << to_string(op->memory_type)
                    << " memory inside the kernel " << kb.kernel.name << ". Inside a kernel, "
                    << "Funcs live in shared memory or registers.";
                auto n = element_count_bound(op->extents);
                user_assert(n.has_value() && *n <= 4096)
                    << "Func " << op->name << " is stored in registers in kernel "
                    << kb.kernel.name << ", which needs a small constant size, but it has "
                    << product_text(op->extents) << " elements. Compute it over a constant region of at "
                    << "most 4096 elements (split the loops it is computed in by constants), "
                    << "or compute it at the block level in shared memory.";
                kb.private_allocations.insert(op->name);
                kb.register_elements[op->name] = *n;
            }
        } checker(*this);
        body.accept(&checker);
        visit_each<Store>(body, [&](const Store *op) {
            if (!shared.count(op->name) && !private_allocations.count(op->name))
                written_globals.insert(op->name);
        });
    }

    // Whether e (an element index) is a one-to-one function of the thread index over the
    // block: a linear function of the thread indices whose coefficients separate them.
    bool one_to_one_in_threads(const Expr &e) const {
        if (!e.type().is_scalar() || !e.type().is_int()) return false;
        Expr at_zero = simplify(ReplaceThreadIndex({0, 0, 0}).mutate(e));
        Expr linear = at_zero;
        std::vector<std::pair<int64_t, int>> coefficients; // |c|, dimension
        for (int d = 0; d < 3; d++) {
            if (kernel.threads[d] == 1) continue;
            std::array<int64_t, 3> unit = {0, 0, 0};
            unit[size_t(d)] = 1;
            auto c = as_const_int(simplify(Sub::make(ReplaceThreadIndex(unit).mutate(e), at_zero)));
            if (!c || *c == 0) return false;
            coefficients.emplace_back(std::abs(*c), d);
            linear = Add::make(linear, Mul::make(make_const(e.type(), *c), thread_index(d)));
        }
        if (!is_const_zero(simplify(Sub::make(e, linear)))) return false;
        std::sort(coefficients.begin(), coefficients.end());
        int64_t reach = 0; // the largest offset the smaller terms can make
        for (const auto &[c, d] : coefficients) {
            if (c <= reach) return false;
            reach += c * (kernel.threads[d] - 1);
        }
        return true;
    }

    // The accesses of a part of the body, with each element index written in terms of the
    // thread index where the block-level lets (`context`) and the thread loops allow.
    template <typename IRHandle>
    Accesses accesses_of(const IRHandle &ir) const {
        struct Walker : LetTracker {
            const KernelBuilder &kb;
            Accesses acc;
            explicit Walker(const KernelBuilder &k) : kb(k) { lets = k.context; }
            using LetTracker::visit;
            void visit(const For *op) override {
                if (op->for_type != ForType::GPUThread) {
                    IRVisitor::visit(op);
                    return;
                }
                op->min.accept(this);
                op->extent.accept(this);
                lets.emplace_back(op->name, Add::make(op->min, thread_index(kb.thread_dim.at(op->name))));
                op->body.accept(this);
                lets.pop_back();
            }
            bool resource(const std::string &name, const Expr &index, Resource &r) const {
                auto it = kb.shared.find(name);
                r = Resource();
                if (it != kb.shared.end()) {
                    r.name = kSharedMemoryName;
                    r.lo = it->second.offset;
                    r.hi = it->second.offset + it->second.bytes;
                } else if (kb.written_globals.count(name)) {
                    r.name = name;
                } else {
                    return false; // private, or a global buffer no one in this kernel writes
                }
                r.storage = name;
                Expr e = simplify(expand(index));
                if (kb.one_to_one_in_threads(e)) r.index = e;
                return true;
            }
            void visit(const Load *op) override {
                IRVisitor::visit(op);
                Resource r;
                if (resource(op->name, op->index, r)) acc.reads.push_back(r);
            }
            void visit(const Store *op) override {
                IRVisitor::visit(op);
                Resource r;
                if (resource(op->name, op->index, r)) acc.writes.push_back(r);
            }
        } walker(*this);
        ir.accept(&walker);
        return walker.acc;
    }

    // Whether `acc` must wait for a barrier after what ran since the last one (`pending`),
    // which it then joins.
    static bool order_after(const Accesses &acc, Accesses &pending) {
        if (pending.conflicts_with(acc)) {
            pending = acc;
            return true;
        }
        pending.add(acc);
        return false;
    }

    static Stmt with_barrier(bool needed, const Stmt &s) {
        return needed ? Block::make(barrier(), s) : s;
    }

    // Barriers go between the parts of the body that run as a whole: thread loop nests,
    // and statements outside thread loops. Control flow outside thread loops depends only
    // on block-level values, so every thread reaches a barrier placed there.
    Stmt insert_barriers(const Stmt &s, Accesses &pending) {
        if (!s.defined()) return s;
        const For *loop = s.as<For>();
        if (!contains_thread_loop(s) || (loop && loop->for_type == ForType::GPUThread))
            return with_barrier(order_after(accesses_of(s), pending), s);
        if (const Block *b = s.as<Block>()) {
            Stmt first = insert_barriers(b->first, pending);
            Stmt rest = insert_barriers(b->rest, pending);
            return Block::make(first, rest);
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            bool wait = order_after(accesses_of(l->value), pending);
            context.emplace_back(l->name, l->value);
            Stmt body = insert_barriers(l->body, pending);
            context.pop_back();
            return with_barrier(wait, LetStmt::make(l->name, l->value, body));
        }
        if (const Allocate *a = s.as<Allocate>()) {
            return Allocate::make(a->name, a->type, a->memory_type, a->extents,
                                  insert_barriers(a->body, pending));
        }
        if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
            return ProducerConsumer::make(pc->name, pc->is_producer,
                                          insert_barriers(pc->body, pending));
        }
        if (const IfThenElse *i = s.as<IfThenElse>()) {
            bool wait = order_after(accesses_of(i->condition), pending);
            Accesses other = pending;
            Stmt then_case = insert_barriers(i->then_case, pending);
            Stmt else_case = insert_barriers(i->else_case, other);
            pending.add(other);
            return with_barrier(wait, IfThenElse::make(i->condition, then_case, else_case));
        }
        internal_assert(loop) << "insert_barriers: unexpected statement around thread loops";
        // An iteration follows the previous one, so the first parts of the body must also
        // be ordered after its last parts: start from everything the body may have done.
        Accesses bounds = accesses_of(Block::make(Evaluate::make(loop->min), Evaluate::make(loop->extent)));
        bool wait = order_after(bounds, pending);
        Accesses entry = pending;
        Accesses inside = pending;
        inside.add(accesses_of(loop->body).without_indices());
        Stmt body = insert_barriers(loop->body, inside);
        pending = inside;
        pending.add(entry); // the loop may run no iterations
        return with_barrier(wait, For::make(loop->name, loop->min, loop->extent, loop->for_type, body));
    }

    // Thread loops become lets of the thread index, guarded where the block is larger than
    // the loop; thread dimensions a nest does not use run it on their thread 0 only; stores
    // outside thread loops run on thread 0.
    Stmt fuse_thread_loops(const Stmt &s) {
        struct Fuser : IRMutator {
            KernelBuilder &kb;
            int depth = 0;
            explicit Fuser(KernelBuilder &k) : kb(k) {}
            using IRMutator::visit;
            Stmt visit(const For *op) override {
                if (op->for_type != ForType::GPUThread) return IRMutator::visit(op);
                int d = kb.thread_dim.at(op->name);
                kb.kernel.loop_vars.push_back(op->name);
                depth++;
                Stmt body = mutate(op->body);
                depth--;
                auto extent = as_const_int(simplify(op->extent));
                if (!extent || *extent != kb.kernel.threads[d]) {
                    body = IfThenElse::make(LT::make(thread_index(d), op->extent), body);
                }
                body = LetStmt::make(op->name, Add::make(op->min, thread_index(d)), body);
                if (depth == 0) {
                    std::set<int> used;
                    visit_each<For>(Stmt(op), [&](const For *f) {
                        if (f->for_type == ForType::GPUThread) used.insert(kb.thread_dim.at(f->name));
                    });
                    body = guard_unused(used, body);
                }
                return body;
            }
            Stmt visit(const Store *op) override {
                if (depth > 0) return IRMutator::visit(op);
                return guard_unused({}, Stmt(op));
            }
            Stmt guard_unused(const std::set<int> &used, const Stmt &body) const {
                Expr cond;
                for (int d = 0; d < 3; d++) {
                    if (used.count(d) || kb.kernel.threads[d] == 1) continue;
                    Expr c = EQ::make(thread_index(d), make_zero(Int(32)));
                    cond = cond.defined() ? And::make(cond, c) : c;
                }
                return cond.defined() ? IfThenElse::make(cond, body) : body;
            }
        } fuser(*this);
        return fuser.mutate(s);
    }

    // Shared allocations become ranges of the one shared array; per-thread allocations get
    // their constant sizes.
    Stmt rewrite_shared(const Stmt &s) {
        struct Rewriter : IRMutator {
            const std::map<std::string, SharedSlot> &shared;
            const std::map<std::string, int64_t> &registers;
            Rewriter(const std::map<std::string, SharedSlot> &s, const std::map<std::string, int64_t> &r)
                : shared(s), registers(r) {}
            using IRMutator::visit;
            Expr offset_index(const std::string &name, Type t, const Expr &index) const {
                const SharedSlot &slot = shared.at(name);
                int64_t elems = slot.offset / t.bytes();
                Expr off = make_const(Int(32), int64_t(elems));
                if (index.type().lanes > 1) off = Broadcast::make(off, index.type().lanes);
                return Add::make(index, off);
            }
            Stmt visit(const Allocate *op) override {
                auto it = registers.find(op->name);
                if (it != registers.end()) {
                    // Per-thread storage of the constant size found for it (code generators
                    // need the size at compile time).
                    return Allocate::make(op->name, op->type, MemoryType::Register,
                                          {make_const(Int(32), it->second)}, mutate(op->body));
                }
                if (op->memory_type != MemoryType::GPUShared) return IRMutator::visit(op);
                return mutate(op->body);
            }
            // The lets around the current node, to find the constant index of a register
            // access written in terms of the thread index (a register tile's parts).
            std::vector<std::pair<std::string, Expr>> lets;
            Stmt visit(const LetStmt *op) override {
                Expr value = mutate(op->value);
                lets.emplace_back(op->name, value);
                Stmt body = mutate(op->body);
                lets.pop_back();
                return LetStmt::make(op->name, value, body);
            }
            Expr register_index(const Expr &index) const {
                Expr e = simplify(substitute_lets(lets, index));
                return is_const(e) ? e : index;
            }
            Expr visit(const Load *op) override {
                if (registers.count(op->name) && op->type.is_scalar()) {
                    return Load::make(op->type, op->name, register_index(mutate(op->index)), op->predicate);
                }
                if (!shared.count(op->name)) return IRMutator::visit(op);
                Expr index = mutate(op->index);
                Expr pred = op->predicate.defined() ? mutate(op->predicate) : Expr();
                return Load::make(op->type, kSharedMemoryName,
                                  offset_index(op->name, op->type.element_of(), index), pred);
            }
            Stmt visit(const Store *op) override {
                if (registers.count(op->name) && op->value.type().is_scalar()) {
                    return Store::make(op->name, mutate(op->value), register_index(mutate(op->index)),
                                       op->predicate);
                }
                if (!shared.count(op->name)) return IRMutator::visit(op);
                Expr value = mutate(op->value);
                Expr index = mutate(op->index);
                Expr pred = op->predicate.defined() ? mutate(op->predicate) : Expr();
                return Store::make(kSharedMemoryName, value,
                                   offset_index(op->name, op->value.type().element_of(), index), pred);
            }
        } rewriter(shared, register_elements);
        return rewriter.mutate(s);
    }

    // The kernel's arguments: the buffers it loads and stores, and the scalars it uses from
    // the host code around it.
    void find_closure() {
        std::map<std::string, KernelArgument> buffers;
        visit_each<Load>(kernel.body, [&](const Load *op) {
            if (op->name == kSharedMemoryName || private_allocations.count(op->name)) return;
            KernelArgument &a = buffers[op->name];
            a.name = op->name;
            a.is_buffer = true;
            a.type = op->type.element_of();
            a.read = true;
        });
        visit_each<Store>(kernel.body, [&](const Store *op) {
            if (op->name == kSharedMemoryName || private_allocations.count(op->name)) return;
            KernelArgument &a = buffers[op->name];
            a.name = op->name;
            a.is_buffer = true;
            a.type = op->value.type().element_of();
            a.written = true;
        });
        std::map<std::string, Type> var_types;
        visit_each<Variable>(kernel.body, [&](const Variable *op) { var_types[op->name] = op->type; });
        for (const std::string &n : free_vars(kernel.body)) {
            if (buffers.count(n) || n == kSharedMemoryName || private_allocations.count(n)) continue;
            auto it = var_types.find(n);
            internal_assert(it != var_types.end()) << "kernel closure: no type for " << n;
            KernelArgument a;
            a.name = n;
            a.type = it->second;
            kernel.args.push_back(a);
        }
        for (auto &kv : buffers) kernel.args.push_back(kv.second);
    }
};

} // namespace

std::array<Expr, 3> build_kernel(const For *outer, const Target &target, LoweredKernel &kernel) {
    return KernelBuilder(target, kernel).build(outer);
}

} // namespace lowering
} // namespace aicf
