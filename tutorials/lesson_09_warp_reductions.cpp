// Lesson 9: reductions across GPU threads, and a layernorm that reads its input once.
//
// A row sum has one result per row, but a row has thousands of elements: to be fast, many
// threads must share each row's work and then combine their partial sums. This lesson
// schedules the same algorithm three ways and looks at what each kernel does (its PTX) and
// what it asks of memory (the simulator's counters):
//
//   1. one thread per row: no combining at all, but each thread walks a whole row, and a
//      warp's 32 threads read 32 different rows (uncoalesced).
//   2. a shared-memory tree: 256 threads per row each sum a slice into shared memory
//      (rfactor), then one thread adds the 256 partial sums, behind barriers.
//   3. warp shuffles: a reduction loop mapped onto the 32 lanes of a warp (gpu_lanes) is a
//      cross-thread reduction. Each lane sums its share in a register, then the lanes
//      exchange partial sums with shfl.sync.bfly: after 5 steps (16, 8, 4, 2, 1 lanes apart)
//      every lane holds the row's sum. No shared memory, no barrier.
//
// Any update AICF can prove associative reduces this way (+, *, min, max, Tuples such as
// argmax and the streaming softmax pair); a loop over more than 32 threads combines the
// warps' results through shared memory with one barrier. Then a layernorm keeps each row in
// registers, striped across the lanes (each lane holds the elements it loaded), so that its
// three passes over the row (mean, variance, output) read device memory once.
//
// Build and run: scripts/build.sh lesson_09_warp_reductions &&
//                build/tutorials/lesson_09_warp_reductions

#include "backends/sim/Profile.h"
#include "dsl/aicf.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

using namespace aicf;
using backends::sim::KernelProfile;
using backends::sim::ProfileRecorder;

namespace {

int errors = 0;
const Target target("host-cuda-sm_80");
const int W = 2048, H = 64; // 64 rows of 2048 floats

// The lines of the kernel's PTX that contain any of `words`, at most `limit` of them.
void show_ptx(Func f, const std::vector<std::string> &words, int limit) {
    std::istringstream ptx(f.ptx(target));
    std::string line;
    int shown = 0;
    while (std::getline(ptx, line) && shown < limit) {
        for (const std::string &w : words) {
            if (line.find(w) != std::string::npos) {
                std::printf("    %s\n", line.c_str());
                shown++;
                break;
            }
        }
    }
}

void show_counters(const KernelProfile &p) {
    std::printf("  device memory: %lld bytes loaded (the input is %d), %.0f%% of each sector "
                "used; shared-memory requests: %lld; barriers: %lld\n",
                (long long)p.global_bytes_loaded(), W * H * 4, 100 * p.global_efficiency(),
                (long long)p.shared_requests(), (long long)p.barriers);
}

void check_sums(const char *what, const Buffer<float> &sums, const Buffer<float> &in) {
    int bad = 0;
    for (int j = 0; j < H; j++) {
        double want = 0;
        for (int i = 0; i < W; i++)
            want += in(i, j);
        if (std::fabs(sums(j) - want) > 1e-3 * (1 + std::fabs(want))) bad++;
    }
    std::printf("  %s: %s\n\n", what, bad ? "WRONG" : "matches the reference");
    errors += bad != 0;
}

// The algorithm: the sum of each row.
struct RowSum {
    Var y{"y"};
    RDom r{0, W, "r"};
    Func sum{"sum"}, out{"out"};
    explicit RowSum(const Buffer<float> &in) {
        sum(y) = 0.0f;
        sum(y) += in(r, y);
        out(y) = sum(y);
    }
};

// Realizes and returns the one kernel's profile.
KernelProfile run(Func out, Buffer<float> &result) {
    ProfileRecorder recorder;
    result = out.realize({H}, target)[0];
    return recorder.launches().at(0);
}

} // namespace

int main() {
    Buffer<float> in({W, H}, "in");
    in.for_each_element(
        [&](const std::vector<int> &c) { in(c[0], c[1]) = std::sin(0.1f * c[0] + c[1]) + 0.5f; });
    Buffer<float> result;

    // 1. One thread per row: rows onto threads, the reduction serial in each thread.
    {
        RowSum s(in);
        Var yo("yo"), yi("yi");
        s.out.split(s.y, yo, yi, 32).gpu_blocks(yo).gpu_threads(yi);
        s.sum.compute_at(s.out, yi);
        std::printf("== 1. one thread per row\n");
        show_counters(run(s.out, result));
        check_sums("one thread per row", result, in);
    }

    // 2. A shared-memory tree: 256 partial sums per row (rfactor), added by one thread.
    {
        RowSum s(in);
        Var u("u");
        RVar ro("ro"), ri("ri");
        s.out.gpu_blocks(s.y);
        s.sum.compute_at(s.out, s.y);
        s.sum.update().split(s.r.x, ro, ri, 256).reorder(ri, ro);
        Func partial = s.sum.update().rfactor(ri, u);
        partial.compute_at(s.out, s.y).gpu_threads(u);
        partial.update().gpu_threads(u);
        std::printf("== 2. a shared-memory tree, 256 threads per row\n");
        show_ptx(s.out, {"bar.sync", "st.shared", "ld.shared"}, 6);
        show_counters(run(s.out, result));
        check_sums("shared-memory tree", result, in);
    }

    // 3. Warp shuffles: the reduction loop's inner 32 iterations on the lanes of a warp, 4
    //    rows (warps) per block. The outer iterations (ro) stay serial in each lane, so the
    //    lanes read consecutive floats; reorder puts them inside the lane loop, which
    //    reassociates the sum, as any cross-thread reduction does.
    {
        RowSum s(in);
        Var yo("yo"), yi("yi");
        RVar ro("ro"), lane("lane");
        s.out.split(s.y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
        s.sum.compute_at(s.out, yi);
        s.sum.update().split(s.r.x, ro, lane, 32).reorder(ro, lane).gpu_lanes(lane);
        std::printf("== 3. warp shuffles, one warp per row\n");
        s.out.print_loop_nest(target);
        show_ptx(s.out, {"shfl.sync", "bar.sync"}, 6);
        KernelProfile p = run(s.out, result);
        show_counters(p);
        check_sums("warp shuffles", result, in);
        errors += p.barriers != 0 || p.shared_requests() != 0;
    }

    // 4. A layernorm that reads its input once. `row` is the input row held in registers:
    //    computed at the row loop, split as x = (xo * 32 + lane) * 4 + v and stored in
    //    MemoryType::Register, each lane keeps its 4 floats of every 128 (16-byte loads).
    //    The two reductions and the output are split the same way, so each lane only reads
    //    the elements it holds; AICF proves it from the loops' bounds (an access another
    //    lane holds is a CompileError) and lays the row out as 64 registers per lane.
    {
        Var x("x"), y("y"), yo("yo"), yi("yi");
        RDom r(0, W, "r");
        Func row("row"), mean_sum("mean_sum"), var_sum("var_sum"), norm("norm");
        row(x, y) = in(x, y);
        mean_sum(y) = 0.0f;
        mean_sum(y) += row(r, y);
        Expr mean = mean_sum(y) / float(W);
        var_sum(y) = 0.0f;
        var_sum(y) += (row(r, y) - mean) * (row(r, y) - mean);
        norm(x, y) = (row(x, y) - mean) * rsqrt(var_sum(y) / float(W) + 1e-5f);

        auto stripe = [](auto &&stage, const VarOrRVar &v) {
            VarOrRVar o(v.name() + "o", v.is_rvar()), i(v.name() + "i", v.is_rvar()),
                lane(v.name() + "_lane", v.is_rvar()), e(v.name() + "v", v.is_rvar());
            stage.split(v, o, i, 128).split(i, lane, e, 4).reorder(e, o, lane).gpu_lanes(lane);
            stage.unroll(o);
            if (v.is_rvar())
                stage.unroll(e);
            else
                stage.vectorize(e);
        };
        norm.bound(x, 0, W).split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
        stripe(norm, x);
        row.compute_at(norm, yi).store_in(MemoryType::Register);
        stripe(row, x);
        for (Func s : {mean_sum, var_sum}) {
            s.compute_at(norm, yi);
            stripe(s.update(), r.x);
        }
        std::printf("== 4. layernorm, each row read once into registers\n");
        show_ptx(norm, {"ld.global.nc.v4", "shfl.sync", "bar.sync", "ld.local"}, 4);
        ProfileRecorder recorder;
        Buffer<float> out = norm.realize({W, H}, target)[0];
        const KernelProfile &p = recorder.launches().at(0);
        show_counters(p);
        int bad = 0;
        for (int j = 0; j < H; j++) {
            double m = 0, v = 0;
            for (int i = 0; i < W; i++)
                m += in(i, j);
            m /= W;
            for (int i = 0; i < W; i++)
                v += (in(i, j) - m) * (in(i, j) - m);
            v /= W;
            for (int i = 0; i < W; i++)
                bad += std::fabs(out(i, j) - (in(i, j) - m) / std::sqrt(v + 1e-5)) > 1e-4;
        }
        std::printf("  layernorm: %s\n", bad ? "WRONG" : "matches the reference");
        errors += bad != 0 || p.global_bytes_loaded() != int64_t(W) * H * 4;
    }
    return errors == 0 ? 0 : 1;
}
