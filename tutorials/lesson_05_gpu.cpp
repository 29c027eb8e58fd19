// Lesson 5: scheduling for a GPU.
//
// A GPU runs a kernel as a grid of blocks; each block is a group of threads (up to 1024)
// that share a small, fast scratchpad (shared memory) and can wait for each other at
// barriers. In AICF the algorithm does not change: the schedule maps loops onto blocks and
// threads, and decides which intermediate values live in shared memory or registers
// instead of device memory (HBM).
//
// The kernels run on the device AICF_DEVICE names: `sim` executes the very kernel IR a GPU
// would run, on the CPU, with CUDA's semantics; `cuda` runs it on a GPU. Unset, it is the
// GPU where the machine has one, the simulator otherwise.
//
// Build and run: scripts/build.sh lesson_05_gpu && build/tutorials/lesson_05_gpu

#include "dsl/aicf.h"

#include <cmath>
#include <cstdio>

using namespace aicf;

namespace {

int errors = 0;

// A 3x3 box blur: every output point reads nine input points.
struct Blur {
    Var x{"x"}, y{"y"};
    Func src{"src"}, blur{"blur"};
    explicit Blur(const Buffer<float> &in) {
        src(x, y) = in(x, y);
        Expr total = 0.0f;
        for (int dy = 0; dy < 3; dy++)
            for (int dx = 0; dx < 3; dx++)
                total = total + src(x + dx, y + dy);
        blur(x, y) = total / 9.0f;
    }
};

void check(const char *what, const Buffer<float> &out, const Buffer<float> &in) {
    int bad = 0;
    for (int j = 0; j < out.height(); j++) {
        for (int i = 0; i < out.width(); i++) {
            double want = 0;
            for (int dy = 0; dy < 3; dy++)
                for (int dx = 0; dx < 3; dx++)
                    want += in(i + dx, j + dy);
            want /= 9;
            if (std::fabs(out(i, j) - want) > 1e-5 + 1e-5 * std::fabs(want)) bad++;
        }
    }
    std::printf("%s: %s\n\n", what, bad ? "WRONG" : "matches the reference");
    errors += bad != 0;
}

} // namespace

int run() {
    // A size that is not a multiple of the tiles: the last tiles shift inwards.
    const int W = 200, H = 75;
    Buffer<float> in({W + 2, H + 2}, "in");
    in.for_each_element([&](const std::vector<int> &c) {
        in(c[0], c[1]) = float((c[0] * 37 + c[1] * 11) % 17) - 8.5f;
    });
    const Target target("host-cuda-sm_80");

    // 1. gpu_tile: split x and y into 32 x 8 tiles; tiles map onto blocks, the points of a
    //    tile onto the threads of its block. Each thread reads its nine inputs from device
    //    memory.
    {
        Blur b(in);
        Var bx("bx"), by("by"), tx("tx"), ty("ty");
        b.blur.gpu_tile(b.x, b.y, bx, by, tx, ty, 32, 8);
        std::printf("== gpu_tile 32 x 8\n");
        b.blur.print_loop_nest(target);
        check("gpu_tile", b.blur.realize({W, H}, target)[0], in);
    }

    // 2. Stage the input tile in shared memory. src.in() is a wrapper (a copy of src that
    //    blur reads instead); computed at the block loop, each block loads its 34 x 10 tile
    //    (the halo included) once, cooperatively: 17 x 10 threads, two elements each. The
    //    nine reads per point then hit shared memory. A barrier separates the loads from
    //    the reads, since a thread reads elements its neighbours loaded.
    {
        Blur b(in);
        Var bx("bx"), by("by"), tx("tx"), ty("ty"), xo("xo"), xi("xi");
        b.blur.gpu_tile(b.x, b.y, bx, by, tx, ty, 32, 8);
        b.src.in()
            .compute_at(b.blur, bx)
            .store_in(MemoryType::GPUShared)
            .split(b.x, xo, xi, 2)
            .gpu_threads(xo, b.y);
        std::printf("== input tile staged in shared memory\n");
        b.blur.print_loop_nest(target);
        check("shared-memory tile", b.blur.realize({W, H}, target)[0], in);
    }

    // 3. Registers: compute at the thread loop and each thread keeps its own copy. Here
    //    every thread produces 4 outputs along y and loads the 6 x 3 inputs they share once.
    {
        Blur b(in);
        Var bx("bx"), by("by"), tx("tx"), ty("ty"), yi("yi");
        b.blur.tile(b.x, b.y, bx, by, tx, ty, 32, 32)
            .split(ty, ty, yi, 4)
            .reorder(yi, tx, ty, bx, by)
            .gpu_blocks(bx, by)
            .gpu_threads(tx, ty);
        b.src.in().compute_at(b.blur, tx).store_in(MemoryType::Register).unroll(b.x).unroll(b.y);
        std::printf("== four rows per thread, inputs in registers\n");
        b.blur.print_loop_nest(target);
        check("register tile", b.blur.realize({W, H}, target)[0], in);
    }

    return errors == 0 ? 0 : 1;
}

int main() {
    try {
        return run();
    } catch (const Error &e) {
        std::printf("error: %s\n", e.what());
        return 1;
    }
}
