#ifndef AICF_BACKENDS_SIM_SIMEXPRCODE_H
#define AICF_BACKENDS_SIM_SIMEXPRCODE_H

// The simulator's expression nodes: an IR expression compiled for one launch, with variables
// resolved to slots and loads to their Storage. A node evaluates for all threads of a block at
// once into a column it owns, or into one uniform value when its operands are uniform.

#include "backends/sim/SimMachine.h"
#include "dsl/ir/Expr.h"

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

class ConstCode : public ExprCode {
public:
    ConstCode(ir::Type t, Word v) : ExprCode(t, 1) {
        for (Word &w : buf)
            w = v;
    }
    Col compute(Machine &) override { return {buf.data(), true}; }
};

// A variable bound by a Let, LetStmt or For. With one active thread, a per-thread value
// becomes uniform: the other threads' values do not matter under this mask.
class VarCode : public ExprCode {
public:
    VarCode(ir::Type t, int threads, int slot) : ExprCode(t, threads), slot(slot) {}
    Col compute(Machine &m) override {
        Col c = m.slots[slot];
        if (c.uniform || m.mask->count != 1) return c;
        const Word *p = c.p + size_t(m.mask->first) * lanes;
        for (int l = 0; l < lanes; l++)
            buf[l] = p[l];
        return {buf.data(), true};
    }

private:
    int slot;
};

class ThreadIndexCode : public ExprCode {
public:
    ThreadIndexCode(int threads, int dim) : ExprCode(ir::Int(32), threads), dim(dim) {}
    Col compute(Machine &m) override {
        const std::vector<Word> &index = m.thread_index[dim];
        if (m.mask->count != 1) return {index.data(), false};
        buf[0] = index[m.mask->first];
        return {buf.data(), true};
    }

private:
    int dim;
};

class BlockIndexCode : public ExprCode {
public:
    explicit BlockIndexCode(int dim) : ExprCode(ir::Int(32), 1), dim(dim) {}
    Col compute(Machine &m) override {
        buf[0] = word_u(uint64_t(int64_t(m.block[dim])));
        return {buf.data(), true};
    }

private:
    int dim;
};

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

// The same bits seen as another type: each thread's lanes go through their memory encoding.
class ReinterpretCode : public ExprCode {
public:
    ReinterpretCode(ir::Type t, int threads, ExprPtr a)
        : ExprCode(t, threads), from(a->type), a(std::move(a)),
          scratch(size_t(t.bits) * t.lanes / 8 + 8) {
        internal_assert(from.bits % 8 == 0 && t.bits % 8 == 0)
            << "simulator: reinterpret of " << to_string(from) << " as " << to_string(t);
    }
    Col compute(Machine &m) override {
        Col x = a->eval(m);
        const Kind fk = kind_of(from), tk = kind_of(type);
        const int from_bytes = from.bytes(), to_bytes = type.bytes();
        const int threads = x.uniform ? 1 : m.n;
        for (int t = 0; t < threads; t++) {
            const Word *src = lane_ptr(x, t, from.lanes);
            for (int l = 0; l < from.lanes; l++) {
                write_element(scratch.data() + l * from_bytes, fk, from.bits, src[l]);
            }
            Word *dst = buf.data() + size_t(t) * lanes;
            for (int l = 0; l < lanes; l++) {
                dst[l] = read_element(scratch.data() + l * to_bytes, tk, type.bits);
            }
        }
        return {buf.data(), x.uniform};
    }

private:
    ir::Type from;
    ExprPtr a;
    std::vector<uint8_t> scratch;
};

class SelectCode : public ExprCode {
public:
    SelectCode(ir::Type t, int threads, ExprPtr c, ExprPtr a, ExprPtr b)
        : ExprCode(t, threads), c(std::move(c)), a(std::move(a)), b(std::move(b)) {}
    Col compute(Machine &m) override {
        // Both values are evaluated, as the CPU's select evaluates both.
        Col cond = c->eval(m);
        Col x = a->eval(m);
        Col y = b->eval(m);
        const int cl = c->lanes, L = lanes;
        if (cond.uniform && cl == 1) return cond.p[0].u ? x : y;
        const bool uniform = cond.uniform && x.uniform && y.uniform;
        const int threads = uniform ? 1 : m.n;
        for (int t = 0; t < threads; t++) {
            const Word *pc = lane_ptr(cond, t, cl), *px = lane_ptr(x, t, L),
                       *py = lane_ptr(y, t, L);
            Word *o = buf.data() + size_t(t) * L;
            for (int l = 0; l < L; l++)
                o[l] = pc[cl == 1 ? 0 : l].u ? px[l] : py[l];
        }
        return {buf.data(), uniform};
    }

private:
    ExprPtr c, a, b;
};

class RampCode : public ExprCode {
public:
    RampCode(ir::Type t, int threads, ExprPtr base, ExprPtr stride)
        : ExprCode(t, threads), base(std::move(base)), stride(std::move(stride)), kind(kind_of(t)) {
    }
    Col compute(Machine &m) override {
        Col b = base->eval(m);
        Col s = stride->eval(m);
        const bool uniform = b.uniform && s.uniform;
        const int threads = uniform ? 1 : m.n, L = lanes;
        for (int t = 0; t < threads; t++) {
            const uint64_t b0 = lane_ptr(b, t, 1)->u, s0 = lane_ptr(s, t, 1)->u;
            Word *o = buf.data() + size_t(t) * L;
            for (int l = 0; l < L; l++)
                o[l] = wrap_to(b0 + uint64_t(l) * s0, kind, type.bits);
        }
        return {buf.data(), uniform};
    }

private:
    ExprPtr base, stride;
    Kind kind;
};

class BroadcastCode : public ExprCode {
public:
    BroadcastCode(ir::Type t, int threads, ExprPtr value)
        : ExprCode(t, threads), value(std::move(value)) {}
    Col compute(Machine &m) override {
        Col v = value->eval(m);
        const int threads = v.uniform ? 1 : m.n, L = lanes;
        for (int t = 0; t < threads; t++) {
            const Word x = v.uniform ? v.p[0] : v.p[t];
            Word *o = buf.data() + size_t(t) * L;
            for (int l = 0; l < L; l++)
                o[l] = x;
        }
        return {buf.data(), v.uniform};
    }

private:
    ExprPtr value;
};

class LetCode : public ExprCode {
public:
    LetCode(ir::Type t, int slot, ExprPtr value, ExprPtr body)
        : ExprCode(t, 0), slot(slot), value(std::move(value)), body(std::move(body)) {}
    Col compute(Machine &m) override {
        m.slots[slot] = value->eval(m);
        return body->eval(m);
    }

private:
    int slot;
    ExprPtr value, body;
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

class LoadCode : public ExprCode {
public:
    LoadCode(ir::Type t, int threads, AccessShape shape, ExprPtr index, ExprPtr predicate)
        : ExprCode(t, threads), shape(shape), index(std::move(index)),
          predicate(std::move(predicate)) {}
    Col compute(Machine &m) override {
        Access a = shape.make(false);
        a.index = index->eval(m);
        if (predicate) {
            a.predicate = predicate->eval(m);
            a.has_predicate = true;
        }
        a.out = buf.data();
        return {buf.data(), m.access(a)};
    }

private:
    AccessShape shape;
    ExprPtr index, predicate;
};

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
