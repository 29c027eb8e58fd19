// Lesson 7: fast reductions on the CPU: rfactor for vector lanes and for threads.
//
// A reduction's update reads the value it is about to replace, so its loop over the reduction
// variable is a chain: each addition waits for the previous one, and the loop can be neither
// vectorized nor run in parallel (AICF refuses both, with the reason). rfactor splits an
// associative reduction in two: partial results, one per value of a new pure variable, which
// are independent and can be vectorized or run in parallel; then a short reduction over the
// partial results. The sum is added in a different order, so the result can differ in the
// last bits (here it is more accurate: 16 short sums lose less than one long one); each
// schedule below is checked against a double-precision sum.

#include "dsl/aicf.h"

#include <chrono>
#include <cmath>
#include <cstdio>

using namespace aicf;

namespace {

int errors = 0;

void run(const char *what, Func &f, const Buffer<float> &in) {
    std::printf("== %s\n%s", what, f.loop_nest().c_str());
    Buffer<float> out(in.height());
    f.realize(out); // compiles
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; i++)
        f.realize(out);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        10;
    double worst = 0;
    for (int r = 0; r < in.height(); r++) {
        double ref = 0;
        for (int k = 0; k < in.width(); k++)
            ref += double(in(k, r)) * in(k, r);
        worst = std::max(worst, std::fabs(out(r) - ref) / ref);
    }
    // A float sum of n terms may be off by about n rounding steps of float (2^-24 each).
    bool ok = worst < in.width() * std::ldexp(1.0, -24);
    std::printf("   %.3f ms per run, largest relative error %.1e: %s\n\n", ms, worst,
                ok ? "ok" : "WRONG");
    errors += !ok;
}

// The algorithm: the sum of squares of each row.
Func sum_of_squares(const Buffer<float> &in, const Var &r, const RDom &k) {
    Func sumsq("sumsq");
    sumsq(r) = 0.0f;
    sumsq(r) += in(k, r) * in(k, r);
    return sumsq;
}

// Splits the reduction by 16 and keeps the inner loop's 16 partial sums apart: each becomes a
// lane of one vector register. The update of the partial sums then adds a whole vector per
// step, and the merge adds up the 16 lanes at the end of each row. (4000 is a multiple of 16;
// for other sizes the last block is guarded.)
void sum_in_vector_lanes(Func &sumsq, const Var &r, const RDom &k) {
    Var u("u");
    RVar ko("ko"), ki("ki");
    Func partial = sumsq.update().split(k, ko, ki, 16).rfactor(ki, u);
    partial.compute_at(sumsq, r).vectorize(u);
    partial.update().reorder(u, ko).vectorize(u);
}

} // namespace

int main() {
    // The sum of squares of each row of a 512 x 4000 matrix.
    const int D = 4000, R = 512;
    Buffer<float> in(D, R);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < D; k++)
            in(k, r) = float((k * 7 + r * 3) % 13) / 13.0f + 0.5f;
    Var r("r");
    RDom k(0, D, "k");

    Func plain = sum_of_squares(in, r, k);
    run("default: one addition after another", plain, in);

    Func lanes = sum_of_squares(in, r, k);
    sum_in_vector_lanes(lanes, r, k);
    run("split(k, ko, ki, 16).rfactor(ki, u): 16 sums in the lanes of a vector", lanes, in);

    // The same, with rows in parallel as well: the merge's loop over rows can run on several
    // threads, because different rows never meet.
    Func threads = sum_of_squares(in, r, k);
    sum_in_vector_lanes(threads, r, k);
    threads.update().parallel(r);
    run("... and sumsq.update().parallel(r): rows on all threads", threads, in);

    std::printf("%s\n", errors == 0 ? "lesson 7: every schedule matched the double-precision sums"
                                    : "lesson 7: WRONG VALUES");
    return errors == 0 ? 0 : 1;
}
