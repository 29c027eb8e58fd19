// The simulator's expression nodes other than element operations (see SimExprCode.h):
// constants, variables, thread, lane and block indices, warp shuffles, reinterpretation, Select,
// Ramp, Broadcast, Let and Load, and the factories that make them.

#include "backends/sim/SimExprCode.h"

#include "dsl/base/Error.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

namespace {

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

// The thread's lane in its warp: threads are numbered x fastest, 32 to a warp.
class LaneIndexCode : public ExprCode {
public:
    explicit LaneIndexCode(int threads) : ExprCode(ir::Int(32), threads) {
        for (int t = 0; t < threads; t++)
            buf[size_t(t)] = word_u(uint64_t(t & 31));
    }
    Col compute(Machine &m) override {
        if (m.mask->count != 1) return {buf.data(), false};
        return {buf.data() + m.mask->first, true};
    }
};

// shfl.sync.bfly: each active thread takes the value of the lane (its own xor offset).
class ShuffleXorCode : public ExprCode {
public:
    ShuffleXorCode(ir::Type t, int threads, ExprPtr value, int offset, ExprPtr mask, Site *site)
        : ExprCode(t, threads), value(std::move(value)), offset(offset), mask(std::move(mask)),
          site(site) {
        internal_assert(t.lanes == 1) << "simulator: shuffle of a vector";
    }
    Col compute(Machine &m) override {
        Col v = value->eval(m);
        Col members = mask->eval(m);
        const std::vector<int> &sources = m.shuffle_sources(members, offset, *site);
        if (v.uniform) return v;
        for (int t = 0; t < m.n; t++)
            buf[size_t(t)] = sources[size_t(t)] >= 0 ? v.p[sources[size_t(t)]] : word_u(0);
        return {buf.data(), false};
    }

private:
    ExprPtr value;
    int offset;
    ExprPtr mask;
    Site *site;
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

class MakeVectorCode : public ExprCode {
public:
    MakeVectorCode(ir::Type t, int threads, std::vector<ExprPtr> scalars)
        : ExprCode(t, threads), scalars(std::move(scalars)) {}
    Col compute(Machine &m) override {
        std::vector<Col> cols;
        bool uniform = true;
        for (ExprPtr &x : scalars) {
            cols.push_back(x->eval(m));
            uniform = uniform && cols.back().uniform;
        }
        const int threads = uniform ? 1 : m.n, L = lanes;
        for (int t = 0; t < threads; t++) {
            Word *o = buf.data() + size_t(t) * L;
            for (int l = 0; l < L; l++)
                o[l] = *lane_ptr(cols[size_t(l)], t, 1);
        }
        return {buf.data(), uniform};
    }

private:
    std::vector<ExprPtr> scalars;
};

class ExtractElementCode : public ExprCode {
public:
    ExtractElementCode(ir::Type t, int threads, ExprPtr vector, int lane)
        : ExprCode(t, threads), vector(std::move(vector)), lane(lane) {}
    Col compute(Machine &m) override {
        Col v = vector->eval(m);
        const int from = vector->lanes, threads = v.uniform ? 1 : m.n;
        for (int t = 0; t < threads; t++)
            buf[size_t(t)] = lane_ptr(v, t, from)[lane];
        return {buf.data(), v.uniform};
    }

private:
    ExprPtr vector;
    int lane;
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

// A float rounded to TF32 as cvt.rna.tf32.f32 does: 10 bits of mantissa, to nearest with
// ties away from zero.
float round_to_tf32(float x) {
    if (!std::isfinite(x)) return x;
    uint32_t bits = float_bits(x);
    bits = (bits + 0x1000u) & ~0x1fffu;
    float r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
}

class MMACode : public ExprCode {
public:
    MMACode(const lowering::MMAShape &shape, int threads, ExprPtr a, ExprPtr b, ExprPtr c,
            Site *site)
        : ExprCode(ir::Float(32, 4), threads), shape(shape), a(std::move(a)), b(std::move(b)),
          c(std::move(c)), site(site) {}
    Col compute(Machine &m) override {
        Col x = a->eval(m), y = b->eval(m), z = c->eval(m);
        m.require_whole_warps(*site, shape.ptx_name().c_str());
        const int M = shape.m, N = shape.n, K = shape.k;
        const int la = shape.a.lanes, lb = shape.b.lanes;
        std::vector<double> A(size_t(M * K)), B(size_t(K * N)), C(size_t(M * N));
        auto in = [&](Word w) { return double(shape.tf32 ? round_to_tf32(w.f) : w.f); };
        for (int w = 0; w < m.n; w += 32) {
            if (!m.mask->on[size_t(w)]) continue; // whole warps: one lane tells
            for (int lane = 0; lane < 32; lane++) {
                const int t = w + lane;
                const Word *pa = lane_ptr(x, t, la), *pb = lane_ptr(y, t, lb),
                           *pc = lane_ptr(z, t, 4);
                for (int i = 0; i < la; i++) {
                    auto [r, col] = lowering::mma_a_element(shape, lane, i);
                    A[size_t(r * K + col)] = in(pa[i]);
                }
                for (int i = 0; i < lb; i++) {
                    auto [r, col] = lowering::mma_b_element(shape, lane, i);
                    B[size_t(r * N + col)] = in(pb[i]);
                }
                for (int i = 0; i < 4; i++) {
                    auto [r, col] = lowering::mma_c_element(shape, lane, i);
                    C[size_t(r * N + col)] = pc[i].f;
                }
            }
            for (int lane = 0; lane < 32; lane++) {
                Word *out = buf.data() + size_t(w + lane) * 4;
                for (int i = 0; i < 4; i++) {
                    auto [r, col] = lowering::mma_c_element(shape, lane, i);
                    double sum = C[size_t(r * N + col)];
                    for (int k = 0; k < K; k++)
                        sum += A[size_t(r * K + k)] * B[size_t(k * N + col)];
                    out[i] = word_f(float(sum));
                }
            }
            m.counters.count(OpClass::TensorCore, 1);
            m.counters.tensor_flops += 2 * int64_t(M) * N * K;
        }
        return {buf.data(), false};
    }

private:
    lowering::MMAShape shape;
    ExprPtr a, b, c;
    Site *site;
};

class LdmatrixCode : public ExprCode {
public:
    LdmatrixCode(ir::Type t, int threads, AccessShape shape, ExprPtr index, int matrices,
                 bool transpose)
        : ExprCode(t, threads), shape(shape), index(std::move(index)), matrices(matrices),
          transpose(transpose), gathered(size_t(threads)), loaded(size_t(threads)) {}
    Col compute(Machine &m) override {
        Col rows = index->eval(m);
        m.require_whole_warps(*shape.site, "ldmatrix");
        for (int t = 0; t < m.n; t++) {
            const int lane = t & 31;
            if (!m.mask->on[size_t(t)] || lane >= 8 * matrices) continue;
            const int64_t at = lane_ptr(rows, t, 1)->i;
            if ((at * shape.elem_bytes) % 16 == 0) continue;
            throw KernelFault(
                "kernel " + m.kernel.name + ": thread " + m.describe_thread(t) + " of block " +
                m.describe_block() + " supplies an ldmatrix row at element " + std::to_string(at) +
                " of shared memory, which is not 16-byte aligned" + m.context(*shape.site, t));
        }
        for (int j = 0; j < matrices; j++) {
            for (int e = 0; e < 2; e++) {
                for (int t = 0; t < m.n; t++) {
                    const int lane = t & 31;
                    auto [r, col] = lowering::ldmatrix_element(lane, e, transpose);
                    const int supplier = (t & ~31) + 8 * j + r;
                    gathered[size_t(t)].i = lane_ptr(rows, supplier, 1)->i + col;
                }
                Access a = shape.make(false);
                a.index = {gathered.data(), false};
                a.out = loaded.data();
                a.profiled = false; // counted once below, as the one instruction it is
                const bool uniform = m.access(a);
                for (int t = 0; t < m.n; t++)
                    buf[size_t(t) * lanes + size_t(2 * j + e)] = loaded[uniform ? 0 : size_t(t)];
            }
        }
        m.profile_ldmatrix(shape.make(false), rows, matrices);
        return {buf.data(), false};
    }

private:
    AccessShape shape;
    ExprPtr index;
    int matrices;
    bool transpose;
    std::vector<Word> gathered, loaded;
};

class WgmmaCode : public ExprCode {
public:
    WgmmaCode(const lowering::WgmmaCall &call, int threads, AccessShape a_shape,
              AccessShape b_shape, ExprPtr a_byte, ExprPtr b_byte, ExprPtr d, Site *site)
        : ExprCode(ir::Float(32, call.n / 2), threads), call(call), a_shape(a_shape),
          b_shape(b_shape), a_byte(std::move(a_byte)), b_byte(std::move(b_byte)), d(std::move(d)),
          site(site), gathered(size_t(threads)), loaded(size_t(threads)) {}
    Col compute(Machine &m) override {
        Col ab = a_byte->eval(m), bb = b_byte->eval(m), dd = d->eval(m);
        const int G = lowering::kWarpgroupThreads, M = lowering::kWgmmaM, N = call.n,
                  K = lowering::kWgmmaK;
        m.require_whole_warps(*site, "wgmma.mma_async", G);
        const int groups = (m.n + G - 1) / G;
        // Each active warpgroup's operand starts, checked: the same in all its threads, on
        // 16 bytes.
        std::vector<int64_t> a_at(size_t(groups), -1), b_at(size_t(groups), -1);
        for (int g = 0; g < groups; g++) {
            if (!m.mask->on[size_t(g * G)]) continue;
            for (int t = g * G; t < (g + 1) * G; t++) {
                const int64_t a = lane_ptr(ab, t, 1)->i, b = lane_ptr(bb, t, 1)->i;
                if (t == g * G) a_at[size_t(g)] = a, b_at[size_t(g)] = b;
                const char *why = nullptr;
                if (a != a_at[size_t(g)] || b != b_at[size_t(g)])
                    why = "operand starts that differ from its warpgroup's first thread's";
                else if (a % 16 != 0 || b % 16 != 0)
                    why = "an operand that does not start on 16 bytes of shared memory";
                if (!why) continue;
                throw KernelFault("kernel " + m.kernel.name + ": thread " + m.describe_thread(t) +
                                  " of block " + m.describe_block() + " executes " +
                                  "wgmma.mma_async with " + why + " (A at byte " +
                                  std::to_string(a) + ", B at byte " + std::to_string(b) + ")" +
                                  m.context(*site, t));
            }
        }
        // A (M x K) and B (N x K) of every warpgroup, read through shared loads,
        // a warpgroup's 128 threads reading 128 elements a pass (M * K and N * K are multiples
        // of 128). Inactive warpgroups read nothing.
        const int bytes = call.element.bytes();
        // The bytes each warpgroup's instruction reads, pending until a wait retires it.
        std::vector<std::vector<int64_t>> reads(static_cast<size_t>(groups));
        auto read = [&](const lowering::WgmmaOperand &o, const AccessShape &shape,
                        const std::vector<int64_t> &at, int rows) {
            std::vector<double> values(size_t(groups) * rows * K);
            for (int pass = 0; pass * G < rows * K; pass++) {
                for (int t = 0; t < m.n; t++) {
                    const int g = t / G, e = pass * G + t % G;
                    const int64_t byte =
                        at[size_t(g)] < 0
                            ? 0
                            : at[size_t(g)] + lowering::wgmma_operand_byte(
                                                  e / K, e % K, bytes, o.lbo, o.sbo, o.mn_major);
                    gathered[size_t(t)].i = byte / bytes;
                    if (at[size_t(g)] >= 0) reads[size_t(g)].push_back(byte);
                }
                Access a = shape.make(false);
                a.index = {gathered.data(), false};
                a.out = loaded.data();
                a.profiled = false; // counted once below, as the one instruction it is
                const bool uniform = m.access(a);
                for (int t = 0; t < m.n; t++) {
                    const int g = t / G, e = pass * G + t % G;
                    if (m.mask->on[size_t(t)])
                        values[size_t(g) * rows * K + size_t(e)] =
                            loaded[uniform ? 0 : size_t(t)].f;
                }
            }
            return values;
        };
        const std::vector<double> A = read(call.a, a_shape, a_at, M),
                                  B = read(call.b, b_shape, b_at, N);
        for (int t = 0; t < m.n; t++) {
            if (!m.mask->on[size_t(t)]) continue;
            const int g = t / G;
            const Word *pd = lane_ptr(dd, t, N / 2);
            Word *out = buf.data() + size_t(t) * size_t(N / 2);
            for (int i = 0; i < N / 2; i++) {
                auto [r, c] = lowering::wgmma_d_element(t % G, i);
                double sum = pd[i].f;
                for (int k = 0; k < K; k++)
                    sum += A[size_t(g) * M * K + size_t(r * K + k)] *
                           B[size_t(g) * N * K + size_t(c * K + k)];
                out[i] = word_f(float(sum));
            }
        }
        for (int g = 0; g < groups; g++) {
            if (a_at[size_t(g)] < 0) continue;
            m.wgmma_issue(g, std::move(reads[size_t(g)]), bytes, *site);
            m.profile_wgmma_operand(a_shape.make(false), int64_t(M) * K * bytes, a_at[size_t(g)]);
            m.profile_wgmma_operand(b_shape.make(false), int64_t(N) * K * bytes, b_at[size_t(g)]);
            m.counters.count(OpClass::TensorCore, 1);
            m.counters.tensor_flops += 2 * int64_t(M) * N * K;
        }
        return {buf.data(), false};
    }

private:
    lowering::WgmmaCall call;
    AccessShape a_shape, b_shape;
    ExprPtr a_byte, b_byte, d;
    Site *site;
    std::vector<Word> gathered, loaded;
};

// wgmma.wait_group: retires the warpgroups' older groups, then is its operand's value.
class WgmmaWaitCode : public ExprCode {
public:
    WgmmaWaitCode(ir::Type t, int threads, int pending, ExprPtr value, const Site *site)
        : ExprCode(t, threads), pending(pending), value(std::move(value)), site(site) {}
    Col compute(Machine &m) override {
        m.wgmma_wait(pending, *site);
        return value->eval(m);
    }

private:
    int pending;
    ExprPtr value;
    const Site *site;
};

} // namespace

ExprPtr make_wgmma_wait_code(ir::Type t, int threads, int pending, ExprPtr value,
                             const Site *site) {
    return std::make_unique<WgmmaWaitCode>(t, threads, pending, std::move(value), site);
}

ExprPtr make_mma_code(const lowering::MMAShape &shape, int threads, ExprPtr a, ExprPtr b, ExprPtr c,
                      Site *site) {
    return std::make_unique<MMACode>(shape, threads, std::move(a), std::move(b), std::move(c),
                                     site);
}

ExprPtr make_wgmma_code(const lowering::WgmmaCall &call, int threads, AccessShape a_shape,
                        AccessShape b_shape, ExprPtr a_byte, ExprPtr b_byte, ExprPtr d,
                        Site *site) {
    return std::make_unique<WgmmaCode>(call, threads, a_shape, b_shape, std::move(a_byte),
                                       std::move(b_byte), std::move(d), site);
}

ExprPtr make_ldmatrix_code(ir::Type t, int threads, AccessShape shape, ExprPtr index, int matrices,
                           bool transpose) {
    return std::make_unique<LdmatrixCode>(t, threads, shape, std::move(index), matrices, transpose);
}

ExprPtr make_const_code(ir::Type t, Word value) {
    return std::make_unique<ConstCode>(t, value);
}

ExprPtr make_var_code(ir::Type t, int threads, int slot) {
    return std::make_unique<VarCode>(t, threads, slot);
}

ExprPtr make_thread_index_code(int threads, int dim) {
    return std::make_unique<ThreadIndexCode>(threads, dim);
}

ExprPtr make_lane_index_code(int threads) {
    return std::make_unique<LaneIndexCode>(threads);
}

ExprPtr make_shuffle_xor_code(ir::Type t, int threads, ExprPtr value, int offset, ExprPtr mask,
                              Site *site) {
    return std::make_unique<ShuffleXorCode>(t, threads, std::move(value), offset, std::move(mask),
                                            site);
}

ExprPtr make_alignment_check_code(int threads, ExprPtr index, int64_t elements) {
    class AlignmentCheck : public ExprCode {
    public:
        AlignmentCheck(int threads, ExprPtr index, int64_t elements)
            : ExprCode(index->type, threads), index(std::move(index)), elements(elements) {}
        Col compute(Machine &m) override {
            Col c = index->eval(m);
            for (int t = 0; t < (c.uniform ? 1 : m.n); t++) {
                if (!c.uniform && !m.mask->on[size_t(t)]) continue;
                const int64_t i = lane_ptr(c, t, 1)->i;
                internal_assert(i % elements == 0)
                    << "kernel " << m.kernel.name << ": a wide access at element " << i
                    << " was proven to be a multiple of " << elements << " elements";
            }
            return c;
        }

    private:
        ExprPtr index;
        int64_t elements;
    };
    return std::make_unique<AlignmentCheck>(threads, std::move(index), elements);
}

ExprPtr make_block_index_code(int dim) {
    return std::make_unique<BlockIndexCode>(dim);
}

ExprPtr make_reinterpret_code(ir::Type t, int threads, ExprPtr a) {
    return std::make_unique<ReinterpretCode>(t, threads, std::move(a));
}

ExprPtr make_select_code(ir::Type t, int threads, ExprPtr c, ExprPtr a, ExprPtr b) {
    return std::make_unique<SelectCode>(t, threads, std::move(c), std::move(a), std::move(b));
}

ExprPtr make_ramp_code(ir::Type t, int threads, ExprPtr base, ExprPtr stride) {
    return std::make_unique<RampCode>(t, threads, std::move(base), std::move(stride));
}

ExprPtr make_broadcast_code(ir::Type t, int threads, ExprPtr value) {
    return std::make_unique<BroadcastCode>(t, threads, std::move(value));
}

ExprPtr make_vector_code(ir::Type t, int threads, std::vector<ExprPtr> scalars) {
    return std::make_unique<MakeVectorCode>(t, threads, std::move(scalars));
}

ExprPtr make_extract_element_code(ir::Type t, int threads, ExprPtr vector, int lane) {
    return std::make_unique<ExtractElementCode>(t, threads, std::move(vector), lane);
}

ExprPtr make_let_code(ir::Type t, int slot, ExprPtr value, ExprPtr body) {
    return std::make_unique<LetCode>(t, slot, std::move(value), std::move(body));
}

ExprPtr make_load_code(ir::Type t, int threads, AccessShape shape, ExprPtr index,
                       ExprPtr predicate) {
    return std::make_unique<LoadCode>(t, threads, shape, std::move(index), std::move(predicate));
}

} // namespace sim
} // namespace backends
} // namespace aicf
