// A JIT pipeline with a GPU schedule, built against the installed headers only: run on the
// simulator, checked against a plain loop, and its kernel's profile read through
// backends/sim/Profile.h as the README shows.
#include "backends/sim/Profile.h"
#include "dsl/aicf.h"

#include <cmath>
#include <cstdio>

int main() {
    using namespace aicf;
    const int W = 37, H = 5;
    Buffer<float> in({W, H}, "in");
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            in(x, y) = std::sin(0.3f * float(x) + float(y)) + 2.0f;
    Var x("x"), y("y"), bx("bx"), tx("tx");
    Func scaled("scaled");
    scaled(x, y) = in(x, y) * 3.0f - 1.0f;
    scaled.gpu_tile(x, bx, tx, 16, TailStrategy::GuardWithIf).gpu_blocks(y);
    backends::sim::ProfileRecorder recorder;
    Buffer<float> out = scaled.realize({W, H}, Target("host-cuda-sm_80"))[0];
    int wrong = 0;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            wrong += std::fabs(out(i, j) - (double(in(i, j)) * 3.0 - 1.0)) > 1e-5;
    if (wrong || recorder.launches().size() != 1) {
        std::printf("FAIL: %d values wrong, %zu launches profiled\n", wrong,
                    recorder.launches().size());
        return 1;
    }
    std::printf("jit_profile: the kernel matches the loop; its profile:\n%s",
                recorder.launches()[0].to_string().c_str());
    return 0;
}
