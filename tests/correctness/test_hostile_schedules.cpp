// Hostile schedules: random directives with random arguments, most of them invalid (names the
// stage does not have, zero, negative and enormous factors, placements at loops that do not
// exist, GPU mappings on host stages, wrappers of a Func for itself). Every schedule must be
// either refused with a CompileError or a RuntimeError of the pipeline's own checks, or compute
// exactly what the default schedule computes (itself checked against the reference
// interpreter, tests/common/Interpreter.h). A KernelFault (the simulator catching an accepted
// schedule's kernel reading outside a buffer, racing, ...), an InternalError, any other
// exception, a crash or a different result fails the test.
//
// The pipelines are small integer stencils feeding a pointwise output, a reduction and an
// update; half the cases compile for a GPU target (run on the device AICF_DEVICE names, the
// simulator without a GPU). The seed is fixed; AICF_HOSTILE_SEED and AICF_HOSTILE_COUNT change
// the seed and the number of cases, AICF_HOSTILE_FIRST the first case; AICF_HOSTILE_PRINT=1
// prints each schedule before it runs (to find one that hangs or crashes).

#include "Interpreter.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <random>
#include <sstream>
#include <string>

using namespace aicf;
using aicf_test::env_int;
using aicf_test::fill_random;

namespace {

// Draws arguments and writes down what it drew, so that a failure prints the schedule.
struct Draw {
    std::mt19937 rng;
    std::ostringstream log;
    explicit Draw(unsigned seed) : rng(seed) {}
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
    int factor() {
        static const int f[] = {-5, -1, 0,  1,    2,       3,       4,         7,
                                8,  16, 33, 1000, 1 << 20, 1 << 30, 2147483647};
        int v = f[pick(sizeof(f) / sizeof(f[0]))];
        log << v << " ";
        return v;
    }
    TailStrategy tail() {
        static const char *names[] = {"Auto", "RoundUp", "GuardWithIf", "ShiftInwards"};
        int t = pick(4);
        log << names[t] << " ";
        return TailStrategy(t);
    }
};

struct Stencils {
    Func f{"f"}, g{"g"}, out{"out"};
};

// f and g are stencils over `in`; out reads g pointwise (shape 0), reduces it over k (shape 1),
// reads it in an update of its own (shape 2), scans it down the columns (shape 3) or counts its
// values (shape 4, a histogram: the update writes where the data says); in shape 5, g is a
// Tuple reduction (an argmax) that out reads pointwise.
void define(Stencils &p, const Buffer<int> &in, int shape, int reduction_extent) {
    Var x("x"), y("y");
    RDom k(0, reduction_extent, "k");
    p.f(x, y) = in(x, y) * 2 + in(x + 1, y);
    if (shape == 5) {
        // g is a Tuple reduction, an argmax over two rows of f; out reads both elements.
        RDom m(0, 2, "m");
        p.g(x, y) = Tuple(p.f(x, y) - 1000, 0);
        Expr candidate = p.f(x + 1, y + m) + x % 3;
        p.g(x, y) = Tuple(select(candidate > p.g(x, y)[0], candidate, p.g(x, y)[0]),
                          select(candidate > p.g(x, y)[0], m + 1, p.g(x, y)[1]));
        p.out(x, y) = p.g(x, y)[0] * 3 + p.g(x, y)[1];
        return;
    }
    p.g(x, y) = p.f(x, y) + p.f(x, y + 1) * 3 + p.f(x + 1, y + 1);
    if (shape == 0) {
        p.out(x, y) = p.g(x, y);
    } else if (shape == 1) {
        p.out(x, y) = 0;
        p.out(x, y) += p.g(x, k) * (y + 1);
    } else if (shape == 2) {
        p.out(x, y) = p.g(x, y);
        p.out(x, y) = p.out(x, y) + p.g(x, y) % 7;
    } else if (shape == 3) {
        // A scan down the columns: each row adds the one above it.
        RDom r(1, reduction_extent - 1, "r");
        p.out(x, y) = p.g(x, y);
        p.out(x, r) = p.out(x, r - 1) + p.g(x, r);
    } else {
        // A histogram of g's values over a 2-D domain, into row 0 (a data-dependent index).
        RDom r(0, 6, 0, 4, "h");
        p.out(x, y) = x + y;
        Expr bin = clamp(p.g(r.x, r.y) % 8 + 8, 0, 15);
        p.out(bin, 0) += 1;
    }
}

class Hostile {
public:
    Hostile(Draw &d, Stencils &p, const Buffer<int> &in, bool gpu) : d(d), p(p), in(in), gpu(gpu) {}

    // Maps out onto the GPU (or not), gives f and g a place (or not: on the GPU, in shared
    // memory, registers or a kernel of their own), then applies random directives; each
    // refused one is noted and the next tried.
    void schedule() {
        bool mapped = false;
        if (gpu && d.pick(3)) {
            static const int sizes[] = {1, 2, 3, 4, 7, 8, 16, 32, 64};
            int fx = sizes[d.pick(9)], fy = sizes[d.pick(9)];
            attempt(p.out, [&] {
                d.log << "gpu_tile " << fx << " " << fy;
                p.out.gpu_tile(vars[0], vars[1], vars[2], vars[3], vars[4], vars[5], fx, fy);
                hot.insert(hot.end(), {2, 3, 4, 5});
                mapped = true;
                if (p.out.num_update_definitions() && d.pick(2)) {
                    d.log << ", update too";
                    p.out.update().gpu_tile(vars[0], vars[1], vars[2], vars[3], vars[4], vars[5],
                                            fy, fx);
                }
            });
        }
        Func *producers[2] = {&p.f, &p.g};
        for (int i = 0; i < 2; i++) {
            Func &f = *producers[i];
            attempt(f, [&] {
                int how = d.pick(mapped ? 6 : 3);
                if (how == 0) {
                    d.log << "compute_root ";
                    f.compute_root();
                } else if (how == 1) {
                    Func &at = i == 0 && d.pick(2) ? p.g : p.out;
                    d.log << "compute_at " << at.name() << " ";
                    f.compute_at(at, var());
                } else if (how == 3) {
                    // In shared memory, at out's block loop, with threads of its own.
                    d.log << "shared ";
                    f.compute_at(p.out, vars[2]).gpu_threads(vars[0], vars[1]);
                } else if (how == 4) {
                    // In registers, inside out's thread loops.
                    d.log << "registers ";
                    f.compute_at(p.out, vars[4]);
                } else if (how == 5) {
                    // A kernel of its own.
                    d.log << "own kernel ";
                    f.compute_root().gpu_tile(vars[0], vars[1], vars[2], vars[3], vars[4], vars[5],
                                              8, 4);
                }
            });
        }
        // Fewer after a GPU mapping, so that some kernels survive them.
        for (int n = 1 + d.pick(mapped ? 4 : 12); n > 0; n--) {
            Func *funcs[3] = {&p.f, &p.g, &p.out};
            Func &f = *funcs[d.pick(3)];
            bool update = f.num_update_definitions() > 0 && d.pick(2);
            attempt(f, [&] { directive(f, update); });
        }
    }

private:
    Draw &d;
    Stencils &p;
    Buffer<int> in;
    bool gpu;
    std::vector<Var> vars = {Var("x"), Var("y"), Var("a"), Var("b"), Var("c"), Var("d")};
    std::vector<RVar> rvars = {RVar("k.x"), RVar("r.x"), RVar("h.x"), RVar("h.y"),
                               RVar("m.x"), RVar("ro"),  RVar("ri")};
    // Indices of the names most likely to exist: those of the definitions and of earlier splits.
    std::vector<int> hot = {0, 1};
    std::deque<Param<int>> params; // the factors known only at run time, set to their values

    // A factor drawn as factor() does, a third of the time as a Param set to it (checked, and
    // lowered, at run time: splits whose inner loops stop at the end, alignments).
    Expr run_time_factor() {
        const int v = d.factor();
        if (d.pick(3) != 0) return v;
        d.log << "(param) ";
        params.emplace_back("factor" + std::to_string(params.size()));
        params.back().set(v);
        return params.back();
    }

    void attempt(Func &f, const std::function<void()> &apply) {
        d.log << "[" << f.name() << " ";
        try {
            apply();
        } catch (const CompileError &) {
            d.log << "(refused)";
        }
        d.log << "] ";
    }

    Var plain_var() {
        int i = d.pick(3) ? hot[d.pick(int(hot.size()))] : d.pick(int(vars.size()));
        if (d.pick(3) == 0) hot.push_back(d.pick(int(vars.size())));
        d.log << vars[i].name() << " ";
        return vars[i];
    }
    VarOrRVar var() {
        if (d.pick(4) == 0) {
            int i = d.pick(int(rvars.size()));
            d.log << rvars[i].name() << " ";
            return rvars[i];
        }
        return plain_var();
    }
    Func &func() {
        Func *funcs[3] = {&p.f, &p.g, &p.out};
        Func &f = *funcs[d.pick(3)];
        d.log << f.name() << " ";
        return f;
    }

    void directive(Func &f, bool update) {
        Stage s = update ? f.update() : Stage(f.function(), 0);
        // Directives 24-29 are the GPU's; the host draws from the others.
        int which = d.pick(gpu ? 32 : 26);
        if (!gpu && which >= 24) which += 6;
        d.log << (update ? "update " : "") << "#" << which << " ";
        switch (which) {
        case 0: {
            VarOrRVar a = var(), o = var(), i = var();
            Expr k = run_time_factor();
            s.split(a, o, i, k, d.tail());
            break;
        }
        case 1: {
            VarOrRVar a = var(), b = var(), c = var();
            s.fuse(a, b, c);
            break;
        }
        case 2: {
            VarOrRVar a = var(), b = var();
            s.reorder(a, b);
            break;
        }
        case 3: {
            VarOrRVar a = var(), b = var(), c = var();
            s.reorder({a, b, c});
            break;
        }
        case 4: {
            VarOrRVar a = var(), b = var(), c = var(), e = var();
            Expr fx = run_time_factor(), fy = run_time_factor();
            s.tile(a, b, c, e, fx, fy, d.tail());
            break;
        }
        case 5: {
            VarOrRVar a = var();
            int k = d.factor();
            s.vectorize(a, k, d.tail());
            break;
        }
        case 6: {
            VarOrRVar a = var();
            int k = d.factor();
            s.unroll(a, k, d.tail());
            break;
        }
        case 7:
            s.parallel(var());
            break;
        case 8:
            s.vectorize(var());
            break;
        case 9:
            s.unroll(var());
            break;
        case 10: {
            VarOrRVar a = var(), b = var();
            s.rename(a, b);
            break;
        }
        case 11: {
            Func &at = func();
            f.compute_at(at, var());
            break;
        }
        case 12: {
            Func &at = func();
            f.store_at(at, var());
            break;
        }
        case 13:
            f.compute_root();
            break;
        case 14:
            f.compute_inline();
            break;
        case 15: {
            Var v = plain_var();
            int m = d.factor() - 3;
            f.bound(v, m, d.factor());
            break;
        }
        case 16: {
            Var v = plain_var();
            f.align_storage(v, run_time_factor());
            break;
        }
        case 17: {
            Var a = plain_var(), b = plain_var();
            f.reorder_storage({a, b});
            break;
        }
        case 18: {
            Var v = plain_var();
            Expr m = run_time_factor();
            f.align_bounds(v, m, d.factor());
            break;
        }
        case 19: {
            Func w = d.pick(2) ? f.in() : f.in(func());
            Func &at = func();
            w.compute_at(at, var());
            break;
        }
        case 20: {
            VarOrRVar a = var();
            Expr k = run_time_factor();
            s.parallel(a, k, d.tail());
            break;
        }
        case 21: {
            VarOrRVar at = var(), from = var();
            s.prefetch(in, at, from, d.factor());
            break;
        }
        case 22: {
            VarOrRVar a = var(), b = var(), t = var();
            s.gpu_tile(a, b, t, d.factor());
            break;
        }
        case 23: {
            if (!update) break;
            int r = d.pick(int(rvars.size()));
            d.log << rvars[r].name() << " ";
            Func intermediate = f.update().rfactor(rvars[r], plain_var());
            intermediate.compute_root();
            break;
        }
        case 24:
            s.gpu_blocks(var());
            break;
        case 25:
            s.gpu_threads(var());
            break;
        case 26: {
            VarOrRVar a = var(), b = var(), c = var(), e = var(), g = var(), h = var();
            int fx = d.factor(), fy = d.factor();
            s.gpu_tile(a, b, c, e, g, h, fx, fy, d.tail());
            break;
        }
        case 27: {
            static const MemoryType types[] = {MemoryType::Heap, MemoryType::Stack,
                                               MemoryType::Register, MemoryType::GPUShared};
            int t = d.pick(4);
            d.log << "memory " << t << " ";
            f.store_in(types[t]);
            break;
        }
        case 28: {
            VarOrRVar a = var(), b = var();
            s.gpu_threads(a, b);
            break;
        }
        case 29:
            s.gpu_single_thread();
            break;
        case 30:
            s.never_partition(var());
            break;
        case 31:
            s.never_partition_all();
            break;
        }
    }
};

} // namespace

TEST(HostileSchedules, AreRefusedOrComputeTheSameValues) {
    const unsigned seed = unsigned(env_int("AICF_HOSTILE_SEED", 1));
    const int count = env_int("AICF_HOSTILE_COUNT", 300);
    int refused = 0, ran = 0, ran_on_gpu = 0;
    const int first = env_int("AICF_HOSTILE_FIRST", 0);
    for (int c = first; c < first + count; c++) {
        Draw d(seed * 100003u + unsigned(c));
        const int W = 16 + d.pick(30), H = 4 + d.pick(20);
        const int shape = d.pick(6);
        const bool gpu = d.pick(2);
        d.log << "case " << c << ": " << W << "x" << H << ", shape " << shape
              << (gpu ? ", GPU" : "") << ": ";
        Buffer<int> in({W + 2, H + 2}, "in");
        fill_random(in, -50, 50, unsigned(c) + 1);

        Stencils reference;
        define(reference, in, shape, H);
        Buffer<int> want = reference.out.realize({W, H});
        // The default schedule computes what the algorithm says.
        const std::string wrong_default = aicf_test::compare_with_reference(
            {Buffer<>(want)}, aicf_test::Interpreter().realize(reference.out, {W, H}), 0, 0);
        ASSERT_EQ(wrong_default, "") << "the default schedule\n" << d.log.str();

        Stencils p;
        define(p, in, shape, H);
        Hostile(d, p, in, gpu).schedule();
        if (std::getenv("AICF_HOSTILE_PRINT")) std::fprintf(stderr, "%s\n", d.log.str().c_str());
        Target target = gpu ? Target("host-cuda-sm_80") : Target("host");
        try {
            // Now and then a tiny realization first (0 to 2 wide), which may compile the same code.
            if (d.pick(6) == 0) {
                int w = d.pick(3), hh = d.pick(3);
                d.log << "(first " << w << "x" << hh << ") ";
                p.out.realize({w, hh}, target);
            }
            Buffer<int> got = p.out.realize({W, H}, target);
            ran++;
            ran_on_gpu += gpu && p.out.loop_nest(target).find("gpu_block") != std::string::npos;
            for (int j = 0; j < H; j++)
                for (int i = 0; i < W; i++)
                    ASSERT_EQ(got(i, j), want(i, j)) << "at " << i << "," << j << "\n"
                                                     << d.log.str();
        } catch (const KernelFault &e) {
            // The compiler accepted the schedule and its kernel misbehaved: never a refusal.
            FAIL() << "an accepted schedule's kernel faulted: " << e.what() << "\n" << d.log.str();
        } catch (const Error &e) {
            if (dynamic_cast<const InternalError *>(&e)) throw;
            refused++;
            if (std::getenv("AICF_HOSTILE_PRINT"))
                std::fprintf(stderr, "  refused: %s\n", e.what());
        } catch (const std::exception &e) {
            FAIL() << "not a CompileError or RuntimeError: " << e.what() << "\n" << d.log.str();
        }
    }
    std::printf("%d schedules ran and matched (%d with GPU kernels), %d were refused\n", ran,
                ran_on_gpu, refused);
    // A draw so hostile that nothing runs would test nothing.
    EXPECT_GT(ran, count / 20) << refused << " refused";
}
