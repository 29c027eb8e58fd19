#ifndef AICF_BACKENDS_SIM_SIMEXPRCODE_H
#define AICF_BACKENDS_SIM_SIMEXPRCODE_H

// The simulator's expression nodes: an IR expression compiled for one launch, with variables
// resolved to slots and loads to their Storage. A node evaluates for all threads of a block at
// once into a column it owns, or into one uniform value when its operands are uniform.
//
// The nodes of element operations are templates on the operation's functor (SimOps.h), here
// for the compiler to instantiate; the other nodes live in SimExprCode.cpp, made by the
// factories below.

#include "backends/sim/SimMachine.h"
#include "dsl/ir/Expr.h"
#include "lowering/TensorCores.h"
#include "lowering/WarpgroupMMA.h"

#include <memory>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

// An expression node. Its result is a column in `buf` (or a child's or a slot's column, for
// nodes that pass values through): `lanes` words when uniform, else threads * lanes.
class ExprCode {
public:
    ExprCode(ir::Type t, int threads) : type(t), lanes(t.lanes), buf(size_t(threads) * t.lanes) {}
    virtual ~ExprCode() = default;

    // Evaluates for the active threads, and counts the instruction once per active warp and
    // lane (uniform values are computed once, but every warp would execute them).
    Col eval(Machine &m) {
        if (op_class != OpClass::None) {
            m.counters.count(op_class, int64_t(m.mask->warps) * lanes);
            m.counters.flops += int64_t(m.mask->count) * lanes * flops_per_lane;
        }
        return compute(m);
    }

    // How the node counts: its instruction class and the floating-point operations it does
    // per lane.
    void set_cost(OpClass c, int flops) {
        op_class = c;
        flops_per_lane = flops;
    }

    const ir::Type type;
    const int lanes;

protected:
    virtual Col compute(Machine &m) = 0;

    std::vector<Word> buf;
    OpClass op_class = OpClass::None;
    int flops_per_lane = 0;

    template <class F> Col map1(const Machine &m, Col a, F f) {
        Word *o = buf.data();
        if (a.uniform) {
            for (int l = 0; l < lanes; l++)
                o[l] = f(a.p[l]);
            return {o, true};
        }
        const size_t count = size_t(m.n) * lanes;
        for (size_t i = 0; i < count; i++)
            o[i] = f(a.p[i]);
        return {o, false};
    }

    template <class F> Col map2(const Machine &m, Col a, Col b, F f) {
        Word *o = buf.data();
        const int L = lanes, n = m.n;
        if (a.uniform && b.uniform) {
            for (int l = 0; l < L; l++)
                o[l] = f(a.p[l], b.p[l]);
            return {o, true};
        }
        if (L == 1) {
            if (!a.uniform && !b.uniform) {
                for (int t = 0; t < n; t++)
                    o[t] = f(a.p[t], b.p[t]);
            } else if (a.uniform) {
                const Word x = a.p[0];
                for (int t = 0; t < n; t++)
                    o[t] = f(x, b.p[t]);
            } else {
                const Word y = b.p[0];
                for (int t = 0; t < n; t++)
                    o[t] = f(a.p[t], y);
            }
            return {o, false};
        }
        for (int t = 0; t < n; t++) {
            const Word *pa = lane_ptr(a, t, L), *pb = lane_ptr(b, t, L);
            Word *po = o + size_t(t) * L;
            for (int l = 0; l < L; l++)
                po[l] = f(pa[l], pb[l]);
        }
        return {o, false};
    }

    template <class F> Col map3(const Machine &m, Col a, Col b, Col c, F f) {
        Word *o = buf.data();
        const int L = lanes;
        const bool uniform = a.uniform && b.uniform && c.uniform;
        const int threads = uniform ? 1 : m.n;
        for (int t = 0; t < threads; t++) {
            const Word *pa = lane_ptr(a, t, L), *pb = lane_ptr(b, t, L), *pc = lane_ptr(c, t, L);
            Word *po = o + size_t(t) * L;
            for (int l = 0; l < L; l++)
                po[l] = f(pa[l], pb[l], pc[l]);
        }
        return {o, uniform};
    }
};

using ExprPtr = std::unique_ptr<ExprCode>;

template <class F> class UnaryCode : public ExprCode {
public:
    UnaryCode(ir::Type t, int threads, F f, ExprPtr a)
        : ExprCode(t, threads), f(f), a(std::move(a)) {}
    Col compute(Machine &m) override { return map1(m, a->eval(m), f); }

private:
    F f;
    ExprPtr a;
};

template <class F> class BinaryCode : public ExprCode {
public:
    BinaryCode(ir::Type t, int threads, F f, ExprPtr a, ExprPtr b)
        : ExprCode(t, threads), f(f), a(std::move(a)), b(std::move(b)) {}
    Col compute(Machine &m) override {
        Col x = a->eval(m);
        Col y = b->eval(m);
        return map2(m, x, y, f);
    }

private:
    F f;
    ExprPtr a, b;
};

template <class F> class TernaryCode : public ExprCode {
public:
    TernaryCode(ir::Type t, int threads, F f, ExprPtr a, ExprPtr b, ExprPtr c)
        : ExprCode(t, threads), f(f), a(std::move(a)), b(std::move(b)), c(std::move(c)) {}
    Col compute(Machine &m) override {
        Col x = a->eval(m);
        Col y = b->eval(m);
        Col z = c->eval(m);
        return map3(m, x, y, z, f);
    }

private:
    F f;
    ExprPtr a, b, c;
};

// What a Load or Store names, once resolved, and how its elements are encoded.
struct AccessShape {
    Storage *storage = nullptr;
    Site *site = nullptr;
    Kind kind = Kind::Int;
    int bits = 0, elem_bytes = 0, lanes = 1;

    Access make(bool is_store) const {
        Access a;
        a.storage = storage;
        a.site = site;
        a.kind = kind;
        a.bits = bits;
        a.elem_bytes = elem_bytes;
        a.lanes = lanes;
        a.is_store = is_store;
        return a;
    }
};

// A constant, uniform in every thread.
ExprPtr make_const_code(ir::Type t, Word value);

// A variable bound by a Let, LetStmt or For, read from its slot.
ExprPtr make_var_code(ir::Type t, int threads, int slot);

// The index of the thread, or of the block, in dimension `dim`.
ExprPtr make_thread_index_code(int threads, int dim);
ExprPtr make_block_index_code(int dim);

// The thread's lane in its warp, and a butterfly shuffle of `value` (shfl.sync.bfly) among
// the lanes of `mask`, checked by Machine::shuffle_sources.
ExprPtr make_lane_index_code(int threads);
ExprPtr make_shuffle_xor_code(ir::Type t, int threads, ExprPtr value, int offset, ExprPtr mask,
                              Site *site);

// The bits of `a` seen as type t.
ExprPtr make_reinterpret_code(ir::Type t, int threads, ExprPtr a);

// `index`, checked to be a multiple of `elements` in every active thread (the alignment
// version_wide_accesses proved for a wide access).
ExprPtr make_alignment_check_code(int threads, ExprPtr index, int64_t elements);

// The IR's Select (both values evaluated), Ramp and Broadcast.
ExprPtr make_select_code(ir::Type t, int threads, ExprPtr c, ExprPtr a, ExprPtr b);
ExprPtr make_ramp_code(ir::Type t, int threads, ExprPtr base, ExprPtr stride);
ExprPtr make_broadcast_code(ir::Type t, int threads, ExprPtr value);

// The vector of scalars (make_vector), and lane i of a vector (extract_element).
ExprPtr make_vector_code(ir::Type t, int threads, std::vector<ExprPtr> scalars);
ExprPtr make_extract_element_code(ir::Type t, int threads, ExprPtr vector, int lane);

// `body` with `value` bound to `slot`.
ExprPtr make_let_code(ir::Type t, int slot, ExprPtr value, ExprPtr body);

// A load of the elements at `index` (where `predicate`, if not null, is true).
// mma.sync on each warp's fragments (a, b, c as gpu_mma takes them), computed exactly in
// double precision from the (TF32-rounded) inputs and rounded once to float32; the PTX ISA
// leaves the order and rounding of the accumulation unspecified, so results may differ from a
// GPU's in the last bits. Requires whole warps; counts one tensor-core instruction per warp.
ExprPtr make_mma_code(const lowering::MMAShape &shape, int threads, ExprPtr a, ExprPtr b, ExprPtr c,
                      Site *site);

// wgmma.mma_async m64nNk16 (lowering/WarpgroupMMA.h) for each warpgroup: A and B read from
// shared memory (`a_shape` and `b_shape`, 16-bit elements: bounds and race checks apply, and
// each operand is profiled as one request of the warpgroup) at the byte offsets
// a_byte and b_byte (the same in all 128 threads, multiples of 16) in the canonical layout of
// the call's lbo and sbo; D from d plus A * B in double precision, rounded once to float32.
// D is computed at once, and the bytes read stay pending (Machine::wgmma_issue) until a
// wgmma.wait_group retires the instruction's group: stores to them before that are reported.
// Requires whole warpgroups.
ExprPtr make_wgmma_code(const lowering::WgmmaCall &call, int threads, AccessShape a_shape,
                        AccessShape b_shape, ExprPtr a_byte, ExprPtr b_byte, ExprPtr d, Site *site);
// wgmma.wait_group `pending` (Machine::wgmma_wait), whose value is `value`'s.
ExprPtr make_wgmma_wait_code(ir::Type t, int threads, int pending, ExprPtr value, const Site *site);

// ldmatrix: each lane's elements, gathered from the rows the lanes of its warp supply, through
// 16-bit shared loads (`shape`: the shared array, so bounds and race checks apply); row
// addresses must be 16-byte aligned. Requires whole warps.
ExprPtr make_ldmatrix_code(ir::Type t, int threads, AccessShape shape, ExprPtr index, int matrices,
                           bool transpose);

ExprPtr make_load_code(ir::Type t, int threads, AccessShape shape, ExprPtr index,
                       ExprPtr predicate);

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
