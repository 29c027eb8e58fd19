// Random GPU schedules compute what the host computes, bit for bit.
//
// For a few pipelines (a pointwise chain, a two-stage stencil, a matmul with an epilogue, a
// reduction of each row across GPU lanes or threads, and a product on tensor cores, checked
// against a double-precision loop instead), draw GPU schedules: tile sizes that do not
// divide the sizes, producers inlined, in shared memory (at the block loop, with their own thread
// mapping), in registers (inside the thread loops) or in device memory (their own kernel). Sizes
// are at least the largest tile: a tile shifted inwards (the default tail) over a smaller extent
// would start before the inputs. Each result is compared with the same algorithm run on the host
// with the default schedule, and that with the reference interpreter's direct evaluation of the
// algorithm. The seed is fixed; AICF_GPU_SCHEDULE_SEED and AICF_GPU_SCHEDULE_COUNT
// change it and the count, and AICF_GPU_SCHEDULE_CASE runs one schedule alone (each is drawn from
// the seed and its index).

#include "GPUTarget.h"
#include "GemmGPU.h"
#include "Interpreter.h"
#include "KernelRunner.h"
#include "Reference.h"
#include "ReportCheck.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

using namespace aicf;
using aicf_test::env_int;
using aicf_test::fill_random;
using aicf_test::realize_checking_report;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

struct Drawn {
    std::mt19937 rng;
    std::ostringstream what;
    explicit Drawn(unsigned seed) : rng(seed) {}
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
    int tile() {
        static const int sizes[] = {1, 2, 3, 4, 7, 8, 16, 32};
        return sizes[pick(8)];
    }
};

// Where the uses of the next producer sit: the block loop it may be computed at (shared
// memory) and the thread loop (registers).
struct Context {
    LoopLevel block, thread;
};

// Places a producer: inline, at the block loop in shared memory with its own thread mapping,
// inside the thread loop in registers, or at the root as its own kernel. Returns where the
// uses of its own producers then sit.
Context place(Drawn &d, Func producer, const std::vector<Var> &vars, const Context &at) {
    switch (d.pick(4)) {
    case 0:
        d.what << producer.name() << ":inline ";
        return at;
    case 1: {
        producer.compute_at(at.block);
        if (vars.size() == 1) {
            producer.gpu_threads(vars[0]);
        } else {
            producer.gpu_threads(vars[0], vars[1]);
        }
        d.what << producer.name() << ":shared ";
        return {at.block, LoopLevel(producer.name(), vars[0].name())};
    }
    case 2:
        producer.compute_at(at.thread);
        d.what << producer.name() << ":registers ";
        return at;
    default: {
        Var b("b_" + producer.name()), t("t_" + producer.name());
        int size = d.tile();
        producer.compute_root().gpu_tile(vars[0], b, t, size);
        if (vars.size() > 1) producer.gpu_blocks(vars[1]);
        d.what << producer.name() << ":root(" << size << ") ";
        return {LoopLevel(producer.name(), b.name()), LoopLevel(producer.name(), t.name())};
    }
    }
}

template <typename T>
void expect_same(const Buffer<T> &gpu, const Buffer<T> &host, const std::string &what) {
    int bad = 0;
    gpu.for_each_element([&](const std::vector<int> &c) {
        T a = c.size() == 1 ? gpu(c[0]) : gpu(c[0], c[1]);
        T b = c.size() == 1 ? host(c[0]) : host(c[0], c[1]);
        if (std::memcmp(&a, &b, sizeof(T)) != 0 && bad++ == 0) {
            ADD_FAILURE() << what << ": differs at (" << c[0]
                          << (c.size() > 1 ? ", " + std::to_string(c[1]) : "") << "): " << a
                          << " vs " << b;
        }
    });
}

// The host's default schedule against the reference interpreter (tests/common/Interpreter.h,
// the algorithm evaluated point by point with no AICF code path), so that agreeing with the
// host means computing what the algorithm says.
template <typename T>
void expect_host_matches_reference(const Func &f, const std::vector<int> &sizes,
                                   const Buffer<T> &host, const std::string &what) {
    aicf_test::Interpreter reference;
    std::string problem = aicf_test::compare_with_reference(
        {Buffer<>(host)}, reference.realize(f, sizes), 2e-6, 1e-7);
    if (!problem.empty())
        ADD_FAILURE() << what << ": the host's default schedule differs from the reference "
                      << "interpreter: " << problem;
}

void pointwise_chain(Drawn &d) {
    const int W = 37 + d.pick(40), H = 33 + d.pick(20);
    Buffer<float> in({W, H}, "in");
    fill_random(in, -2, 2, unsigned(W * 31 + H));
    auto build = [&](bool gpu) {
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        Func f("f"), g("g"), h("h");
        f(x, y) = in(x, y) * 1.5f - 0.25f;
        g(x, y) = f(x, y) * f(x, y) + in(x, y);
        h(x, y) = g(x, y) - g(x, y) / 3.0f;
        if (gpu) {
            int tw = d.tile(), th = d.tile();
            d.what << "h.gpu_tile(" << tw << "," << th << ") ";
            h.gpu_tile(x, y, bx, by, tx, ty, tw, th);
            Context at = place(d, g, {x, y}, {LoopLevel("h", "bx"), LoopLevel("h", "tx")});
            place(d, f, {x, y}, at);
        }
        return h;
    };
    Func algorithm = build(false);
    Buffer<float> host = algorithm.realize({W, H})[0];
    expect_host_matches_reference(algorithm, {W, H}, host, "pointwise");
    Buffer<float> gpu = realize_checking_report(build(true), {W, H}, gpu_target)[0];
    expect_same(gpu, host, "pointwise " + d.what.str());
}

void stencil(Drawn &d) {
    const int W = 33 + d.pick(50), H = 33 + d.pick(30);
    Buffer<float> in({W + 2, H + 2}, "in");
    fill_random(in, -1, 1, unsigned(W * 7 + H));
    auto build = [&](bool gpu) {
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        Func a("a"), b("b");
        a(x, y) = in(x, y) + in(x + 1, y) + in(x + 2, y);
        b(x, y) = a(x, y) + a(x, y + 1) + a(x, y + 2);
        if (gpu) {
            int tw = d.tile(), th = d.tile();
            d.what << "b.gpu_tile(" << tw << "," << th << ") ";
            b.gpu_tile(x, y, bx, by, tx, ty, tw, th);
            place(d, a, {x, y}, {LoopLevel("b", "bx"), LoopLevel("b", "tx")});
        }
        return b;
    };
    Func algorithm = build(false);
    Buffer<float> host = algorithm.realize({W, H})[0];
    expect_host_matches_reference(algorithm, {W, H}, host, "stencil");
    Buffer<float> gpu = realize_checking_report(build(true), {W, H}, gpu_target)[0];
    expect_same(gpu, host, "stencil " + d.what.str());
}

void matmul(Drawn &d) {
    const int M = 33 + d.pick(30), N = 33 + d.pick(30), K = 3 + d.pick(40);
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, unsigned(M * 13 + K));
    fill_random(B, -1, 1, unsigned(N * 17 + K));
    auto build = [&](bool gpu) {
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        RDom k(0, K, "k");
        Func a("a"), b("b"), prod("prod"), out("out");
        a(x, y) = A(x, y); // inlined unless staged
        b(x, y) = B(x, y);
        prod(x, y) = 0.0f;
        prod(x, y) += a(k, y) * b(x, k);
        out(x, y) = prod(x, y) * 0.5f + 1.0f;
        if (gpu) {
            int tw = d.tile(), th = d.tile();
            d.what << "out.gpu_tile(" << tw << "," << th << ") ";
            out.gpu_tile(x, y, bx, by, tx, ty, tw, th);
            switch (d.pick(4)) {
            case 3: {
                // Tiles of A and B staged in shared memory at each step of k, pipelined or
                // not: the next step's loads in registers during this one.
                const int ks = 2 << d.pick(3);
                const bool pipelined = d.pick(2) == 1;
                RVar ko("ko"), ki("ki");
                prod.compute_at(out, bx).gpu_threads(x, y);
                prod.update().split(k, ko, ki, ks).reorder(ki, x, y, ko).gpu_threads(x, y);
                a.compute_at(prod, ko).gpu_threads(x, y);
                b.compute_at(prod, ko).gpu_threads(x, y);
                if (pipelined) {
                    a.gpu_pipeline(2);
                    b.gpu_pipeline(2);
                }
                d.what << "prod:shared, a and b staged every " << ks << " of k"
                       << (pipelined ? ", pipelined" : "");
                break;
            }
            case 0:
                prod.compute_at(out, tx);
                d.what << "prod:registers";
                break;
            case 1:
                prod.compute_at(out, bx).gpu_threads(x, y);
                prod.update().gpu_threads(x, y);
                d.what << "prod:shared";
                break;
            default:
                // Guarded tiles: shifting a tile inwards past a small extent would compute
                // prod outside the region A covers.
                prod.compute_root().gpu_tile(x, y, bx, by, tx, ty, 8, 8, TailStrategy::GuardWithIf);
                prod.update().gpu_tile(x, y, bx, by, tx, ty, 4, 16);
                d.what << "prod:root";
            }
        }
        return out;
    };
    Func algorithm = build(false);
    Buffer<float> host = algorithm.realize({N, M})[0];
    expect_host_matches_reference(algorithm, {N, M}, host, "matmul");
    Buffer<float> gpu = realize_checking_report(build(true), {N, M}, gpu_target)[0];
    expect_same(gpu, host, "matmul " + d.what.str());
}

// A reduction over each row, across GPU threads or lanes, or atomically across blocks: drawn
// operator and type (exact in any order: integer sums, products that wrap, min and max, and
// argmax over distinct floats), width, lane or thread count, rows per block, and where the
// result lives.
void row_reduction(Drawn &d) {
    const int W = 1 + d.pick(300), H = 1 + d.pick(12);
    Buffer<int32_t> in({W, H}, "in");
    fill_random(in, -50, 50, unsigned(W * 5 + H));
    Buffer<float> distinct({W, H}, "distinct");
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            distinct(i, j) = float((i * 7919 + j * 104729) % 100003) + 0.5f * float(i % 2);
    const int op = d.pick(6);
    static const char *const ops[] = {"int32 +",   "uint32 *", "uint8 max",
                                      "int16 min", "int64 +",  "argmax"};
    d.what << ops[op] << " over " << W << " ";
    auto build = [&](bool gpu) {
        Var x("x"), y("y"), yo("yo"), yi("yi");
        RDom r(0, W, "r");
        RVar ro("ro"), ri("ri");
        Func red("red"), out("out");
        Expr v = in(r, y);
        switch (op) {
        case 0:
            red(y) = 0;
            red(y) += v;
            break;
        case 1:
            red(y) = cast<uint32_t>(1);
            red(y) *= cast<uint32_t>(v * 2 + 1);
            break;
        case 2:
            red(y) = cast<uint8_t>(0);
            red(y) = max(red(y), cast<uint8_t>(v + 50));
            break;
        case 3:
            red(y) = cast<int16_t>(1000);
            red(y) = min(red(y), cast<int16_t>(v));
            break;
        case 4:
            red(y) = cast<int64_t>(0);
            red(y) += cast<int64_t>(v) << 35;
            break;
        default: {
            Expr f = distinct(r, y);
            red(y) = Tuple(Expr(-1.0f), Expr(-1));
            Expr better = f > red(y)[0];
            red(y) = Tuple(select(better, f, red(y)[0]), select(better, r.x, red(y)[1]));
        }
        }
        if (op == 5) {
            out(x, y) = red(y)[1] + x;
        } else {
            out(x, y) = cast<int64_t>(red(y)) + x;
        }
        if (!gpu) return out;
        // Updates of one value (8 to 64 bits) may instead run atomically over blocks.
        if (op != 5 && d.pick(3) == 0) {
            static const int chunks[] = {1, 7, 32, 100};
            const int chunk = chunks[d.pick(4)];
            Var yb("yb"), yt("yt"), bx("bx"), tx("tx");
            out.gpu_tile(x, bx, tx, 4, TailStrategy::GuardWithIf).gpu_blocks(y);
            red.compute_root().gpu_tile(y, yb, yt, 4, TailStrategy::GuardWithIf);
            red.update()
                .atomic()
                .split(r.x, ro, ri, chunk)
                .reorder(ri, ro, y)
                .gpu_blocks(ro, y)
                .gpu_threads(ri);
            d.what << "atomic chunks of " << chunk;
            return out;
        }
        const bool lanes = d.pick(2) == 0;
        static const int lane_counts[] = {1, 2, 3, 5, 8, 16, 31, 32};
        static const int thread_counts[] = {32, 64, 96, 128, 256};
        const int threads = lanes ? lane_counts[d.pick(8)] : thread_counts[d.pick(5)];
        const int rows = lanes ? 1 + d.pick(4) : 1;
        const int consumers = 1 + d.pick(8);
        Var xo("xo"), xi("xi");
        out.split(x, xo, xi, consumers, TailStrategy::GuardWithIf).reorder(xi, xo, y);
        red.update().split(r.x, ro, ri, threads).reorder(ro, ri);
        if (lanes) {
            // A warp per row (rows per block on y), the result in each lane's registers.
            out.split(y, yo, yi, rows, TailStrategy::GuardWithIf).gpu_blocks(yo).gpu_threads(yi);
            red.compute_at(out, yi);
            red.update().gpu_lanes(ri);
            d.what << "lanes " << threads << " rows " << rows;
        } else {
            // A block per row; the result in shared memory or in every thread's registers,
            // read by `consumers` threads.
            out.gpu_blocks(y).gpu_threads(xi);
            red.compute_at(out, y);
            if (d.pick(2)) {
                red.store_in(MemoryType::Register);
                d.what << "registers ";
            }
            red.update().gpu_threads(ri);
            d.what << "threads " << threads << " consumers " << consumers;
        }
        return out;
    };
    const int outs = 3;
    if (op == 5) {
        Func algorithm = build(false);
        Buffer<int32_t> host = algorithm.realize({outs, H})[0];
        expect_host_matches_reference(algorithm, {outs, H}, host, "reduction " + d.what.str());
        Buffer<int32_t> gpu = realize_checking_report(build(true), {outs, H}, gpu_target)[0];
        expect_same(gpu, host, "reduction " + d.what.str());
    } else {
        Func algorithm = build(false);
        Buffer<int64_t> host = algorithm.realize({outs, H})[0];
        expect_host_matches_reference(algorithm, {outs, H}, host, "reduction " + d.what.str());
        Buffer<int64_t> gpu = realize_checking_report(build(true), {outs, H}, gpu_target)[0];
        expect_same(gpu, host, "reduction " + d.what.str());
    }
}

// A matrix product on tensor cores (apps/common/GemmGPU.h) with drawn warps, warp tiles (or
// warpgroups and their tiles, on wgmma), steps of k, input type, padded or plain staged rows,
// cp.async stages (or two through registers), column tiles per block, rows of tiles per group of
// blocks and epilogue, at drawn sizes of at least one block's tile. The instruction's sums round
// differently from a loop's, so the result is checked against a double-precision product of the
// same inputs, within float32's (or TF32's) rounding, rather than bit for bit against the host.
void tensor_core_gemm(Drawn &d) {
    aicf_apps::GemmSchedule s;
    static const int counts[] = {1, 2, 4};
    s.warps = counts[d.pick(3)];
    s.n_tiles = counts[d.pick(3)];
    s.m_tiles = counts[d.pick(3)];
    s.k_tiles = 1 + d.pick(2);
    s.rows = aicf_apps::GemmSchedule::Rows(d.pick(3));
    s.stages = 1 + d.pick(4);
    // A third of them on Hopper's warpgroup tensor cores (wgmma; 16-bit inputs): one or two
    // warpgroups, tiles 8 to 256 columns wide, steps of 16 to 64 (where the device runs them).
    // Drawn from a copy of the generator, so the other draws are the same as without them.
    Drawn side(0);
    side.rng = d.rng;
    side.rng.discard(101);
    const bool warpgroups = side.pick(3) == 0 && aicf_test::device_runs(Target("host-cuda-sm_90a"));
    if (warpgroups) {
        s.warpgroups = 1 + side.pick(2);
        s.warpgroup_n = 8 * (1 + side.pick(32));
        s.k_tiles = 1 + side.pick(4);
    }
    static const Type types[] = {BFloat(16), Float(16), Float(32)};
    const Type in = types[d.pick(warpgroups ? 2 : 3)];
    const bool gelu = d.pick(2) == 1;
    const int M = s.block_y() + d.pick(40), N = s.block_x() + d.pick(60), K = 1 + d.pick(100);
    s.column_tiles = 1 + d.pick(3);
    s.row_group = 1 + d.pick(3);
    // Pipelined through registers with one column tile per block; several column tiles in one
    // stage. ptxas spills 4 to 8 bytes at 128 registers on sm_80 in some schedules of two
    // warps and several column tiles, in cp.async stages (float32, GELU, 4 x 2 warp tiles:
    // AICF_GPU_SCHEDULE_SEED=1, schedule 74, drawn so), pipelined through registers (GELU,
    // 2 x 1 warp tiles) or in one stage (AICF_GPU_SCHEDULE_SEED=7, schedule 24), which the
    // check of spills refuses; column tiles in cp.async stages are checked without spills in
    // the MLP block's dataflow schedule (MlpBlock.DataflowCopiesW1Asynchronously), and on the
    // simulator in GemmTensorCores.RowGroups.
    if (d.pick(4) == 0 && s.column_tiles == 1) {
        s.stages = 2;
        s.copy = PipelineCopy::Registers;
    } else if (s.column_tiles > 1) {
        s.stages = 1;
    }
    d.what << "gemm " << M << "x" << N << "x" << K << " " << in << " warps " << s.warps << " tiles "
           << s.n_tiles << "x" << s.m_tiles << " warpgroups " << s.warpgroups << " of "
           << s.warpgroup_n << " k_tiles " << s.k_tiles << " rows " << int(s.rows) << " stages "
           << s.stages << (s.copy == PipelineCopy::Registers ? " (registers)" : "")
           << " column_tiles " << s.column_tiles << " row_group " << s.row_group
           << (gelu ? " gelu" : "");
    Buffer<> A(in, {K, M}, "A"), B(in, {N, K}, "B");
    std::vector<double> a(size_t(K) * M), b(size_t(N) * K);
    std::mt19937 rng(unsigned(M * 7 + N * 11 + K));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    // Values every input type holds exactly (multiples of 1/64 in [-1, 1]).
    auto fill = [&](const Buffer<> &buf, std::vector<double> &v, int w, int h) {
        for (int j = 0; j < h; j++) {
            for (int i = 0; i < w; i++) {
                const float x = std::round(dist(rng) * 64.0f) / 64.0f;
                v[size_t(j) * w + i] = x;
                if (in == Float(32)) {
                    Buffer<float> f(buf);
                    f(i, j) = x;
                } else if (in == Float(16)) {
                    Buffer<float16_t> h(buf);
                    h(i, j) = float16_t(x);
                } else {
                    Buffer<bfloat16_t> h(buf);
                    h(i, j) = bfloat16_t(x);
                }
            }
        }
    };
    fill(A, a, K, M);
    fill(B, b, N, K);
    aicf_apps::GemmEpilogue e;
    e.gelu = gelu;
    Buffer<float> C =
        realize_checking_report(aicf_apps::gemm_tensor_cores(A, B, K, "gemm", e, {}, s), {N, M},
                                warpgroups ? Target("host-cuda-sm_90a") : gpu_target)[0];
    C.copy_to_host();
    int bad = 0;
    for (int j = 0; j < M && bad == 0; j++) {
        for (int i = 0; i < N; i++) {
            double want = 0, magnitude = 0;
            for (int k = 0; k < K; k++) {
                want += a[size_t(j) * K + k] * b[size_t(k) * N + i];
                magnitude += std::abs(a[size_t(j) * K + k] * b[size_t(k) * N + i]);
            }
            if (gelu) want = 0.5 * want * (1 + std::erf(want / std::sqrt(2.0)));
            // Inputs of 7 bits are exact in TF32 too: only the float32 sums round.
            if (std::abs(C(i, j) - want) > 1e-5 * (1 + magnitude) && bad++ == 0) {
                ADD_FAILURE() << d.what.str() << ": at (" << i << ", " << j << ") " << C(i, j)
                              << ", want " << want;
                break;
            }
        }
    }
}

TEST(GPUScheduleProperty, RandomSchedulesMatchTheHost) {
    unsigned seed = unsigned(env_int("AICF_GPU_SCHEDULE_SEED", 1));
    int count = env_int("AICF_GPU_SCHEDULE_COUNT", 120);
    const int only = env_int("AICF_GPU_SCHEDULE_CASE", -1);
    count = std::max(count, only + 1);
    const std::function<void(Drawn &)> pipelines[] = {pointwise_chain, stencil, matmul,
                                                      row_reduction, tensor_core_gemm};
    for (int i = 0; i < count; i++) {
        if (only >= 0 && i != only) continue;
        Drawn d(seed * 1000003u + unsigned(i));
        const auto &pipeline = pipelines[i % 5];
        try {
            pipeline(d);
        } catch (const CompileError &e) {
            // A schedule the target cannot run (a block of more than 1024 threads, say) is
            // refused, not wrong; anything else is a failure.
            std::string msg = e.what();
            bool over_limit = msg.find("threads per block") != std::string::npos ||
                              msg.find("bytes of shared memory per block") != std::string::npos;
            if (!over_limit)
                ADD_FAILURE() << "schedule " << i << " (" << d.what.str() << "): " << msg;
        } catch (const Error &e) {
            ADD_FAILURE() << "schedule " << i << " (" << d.what.str() << "): " << e.what();
        }
        if (HasFailure()) {
            std::cerr << "failed at schedule " << i << ": " << d.what.str()
                      << "\nreproduce with AICF_GPU_SCHEDULE_SEED=" << seed
                      << " AICF_GPU_SCHEDULE_CASE=" << i
                      << " ./tests/test_gpu "
                         "--gtest_filter=GPUScheduleProperty.RandomSchedulesMatchTheHost\n";
            return;
        }
    }
}

} // namespace
