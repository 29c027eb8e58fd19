// Lesson 6: what a GPU kernel asks of memory, measured on the simulator.
//
// Two schedules can compute the same values at very different speeds, and on a GPU the
// difference is almost always memory:
//   - Device memory (global) moves in 32-byte sectors. The 32 threads of a warp load
//     together; when they read neighbouring elements, a warp's request needs few sectors
//     (coalesced). When they read elements far apart, every thread needs its own sector and
//     most of each sector's bytes are wasted.
//   - Shared memory is 32 banks of 4-byte words; a word's bank is its address / 4 mod 32.
//     A warp's request takes one pass (a wavefront) if its threads touch at most one word
//     per bank; n different words in one bank take n wavefronts (an n-way bank conflict).
//     Threads reading the same word share it (a broadcast).
//
// The simulator counts both for every launch: sim::ProfileRecorder collects the profile of
// each kernel launched while it lives, with bytes and sectors per buffer, sectors or
// wavefronts per memory instruction, barriers, instructions and flops. (AICF_SIM_PROFILE=1
// prints every launch's profile, for any program.)
//
// Every launch on the simulator is also checked as the strictest GPU would be: accesses
// outside a buffer or shared memory, shared-memory races between barriers, reads of shared
// memory nobody wrote, and barriers that only some threads reach are errors that name the
// kernel, the Func, the loop, the threads and the block (AICF_SIM_CHECKS=0 turns the race
// and unwritten-memory checks off).
//
// Build and run: scripts/build.sh lesson_06_gpu_profile && build/tutorials/lesson_06_gpu_profile

#include "backends/sim/Profile.h"
#include "dsl/aicf.h"

#include <cstdio>
#include <cstdlib>

using namespace aicf;
using backends::sim::KernelProfile;
using backends::sim::MemoryInstructionProfile;
using backends::sim::ProfileRecorder;

namespace {

int errors = 0;

void expect(bool ok, const char *what) {
    std::printf("  %s: %s\n", ok ? "ok" : "WRONG", what);
    errors += !ok;
}

// Realizes `f` over N x N and returns the profile of its one kernel.
KernelProfile profile(Func f, int n, const Target &target, Buffer<float> &out) {
    ProfileRecorder recorder;
    out = f.realize({n, n}, target)[0];
    out.copy_to_host();
    if (recorder.launches().size() != 1) {
        std::printf("expected one kernel launch, got %zu\n", recorder.launches().size());
        std::exit(1);
    }
    return recorder.launches()[0];
}

// out(x, y) = in(y, x) through a 32 x 32 tile staged in shared memory: each block loads its
// tile of `in` row by row (consecutive threads read consecutive floats: coalesced), waits
// at a barrier, then each thread reads the tile down a column, so that it also writes `out`
// row by row. `pad` stores the tile's rows 33 floats apart instead of 32.
KernelProfile transpose(const Buffer<float> &in, bool pad, const Target &target) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func tile("tile"), out("out");
    tile(x, y) = in(x, y);
    out(x, y) = tile(y, x);
    out.gpu_tile(x, y, bx, by, tx, ty, 32, 32);
    tile.compute_at(out, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
    if (pad) tile.align_storage(x, 33);
    Buffer<float> result;
    KernelProfile p = profile(out, in.width(), target, result);
    bool right = true;
    for (int j = 0; j < in.height(); j++)
        for (int i = 0; i < in.width(); i++)
            right &= result(i, j) == in(j, i);
    expect(right, "the result is the transpose");
    return p;
}

// out(x, y) = 2 in(x, y), with the 32 threads of a warp along x (a row's consecutive
// floats) or along y (one float from each of 32 rows).
KernelProfile scale(const Buffer<float> &in, bool threads_along_x, const Target &target) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func out("out");
    out(x, y) = in(x, y) * 2.0f;
    if (threads_along_x) {
        out.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    } else {
        out.gpu_tile(y, x, by, bx, ty, tx, 32, 8);
    }
    Buffer<float> result;
    KernelProfile p = profile(out, in.width(), target, result);
    bool right = true;
    for (int j = 0; j < in.height(); j++)
        for (int i = 0; i < in.width(); i++)
            right &= result(i, j) == 2.0f * in(i, j);
    expect(right, "the result is 2 in");
    return p;
}

} // namespace

int run() {
    const Target target("host-cuda-sm_80");
    const int N = 256;
    Buffer<float> in({N, N}, "in");
    in.for_each_element([&](const std::vector<int> &c) {
        in(c[0], c[1]) = float((c[0] * 31 + c[1] * 7) % 101) - 50.0f;
    });

    // 1. The transpose through shared memory. Thread (tx, ty) stores tile element (tx, ty),
    //    at word tx + 32 ty: a warp (fixed ty) writes 32 consecutive words, one per bank.
    //    It then reads element (ty, tx), at word ty + 32 tx: the warp's 32 words are 32
    //    words apart, all in bank ty: 32 wavefronts for one request.
    std::printf("== transpose through a 32 x 32 shared tile\n");
    KernelProfile conflicted = transpose(in, false, target);
    std::printf("%s", conflicted.to_string().c_str());
    const MemoryInstructionProfile *column = conflicted.find_instruction("load tile[...]");
    const MemoryInstructionProfile *row = conflicted.find_instruction("store tile[...]");
    expect(column && column->wavefronts_per_request() == 32.0,
           "reading a column of the tile takes 32 wavefronts per request");
    expect(row && row->wavefronts_per_request() == 1.0,
           "writing a row takes 1 wavefront per request");
    expect(conflicted.worst_shared_instruction() == column,
           "the column read is the worst shared-memory instruction");

    // 2. The fix: pad each row of the tile to 33 floats (align_storage rounds the stored
    //    extent of x up to a multiple of 33). Element (ty, tx) is now at word ty + 33 tx,
    //    in bank (ty + tx) mod 32: the warp's 32 words fall into 32 different banks. The
    //    row writes stay conflict-free, and the tile costs 32 floats more.
    std::printf("\n== the same tile with rows padded to 33 floats\n");
    KernelProfile padded = transpose(in, true, target);
    std::printf("%s", padded.to_string().c_str());
    column = padded.find_instruction("load tile[...]");
    expect(column && column->wavefronts_per_request() == 1.0,
           "reading a column of the padded tile takes 1 wavefront per request");
    expect(padded.shared_wavefronts() * 16 < conflicted.shared_wavefronts(),
           "16 times fewer wavefronts in all");
    // Global memory was coalesced all along: both kernels load and store every row of 32
    // floats (128 bytes) as 4 sectors.
    expect(padded.global_efficiency() == 1.0 && conflicted.global_efficiency() == 1.0,
           "every sector of device memory moved is fully used");

    // 3. Device memory. With threads along x, a warp reads 32 consecutive floats of a row:
    //    128 bytes, 4 sectors. With threads along y, it reads one float from each of 32
    //    rows, 1 KiB apart: 32 sectors, of which 4 bytes each are used (12.5%). Same values,
    //    same number of instructions, eight times the memory traffic.
    std::printf("\n== threads along x: coalesced\n");
    KernelProfile coalesced = scale(in, true, target);
    std::printf("%s", coalesced.to_string().c_str());
    std::printf("\n== threads along y: strided\n");
    KernelProfile strided = scale(in, false, target);
    std::printf("%s", strided.to_string().c_str());
    const MemoryInstructionProfile *good = coalesced.find_instruction("load in[...]");
    const MemoryInstructionProfile *bad = strided.find_instruction("load in[...]");
    expect(good && good->sectors_per_request() == 4.0 && good->efficiency() == 1.0,
           "coalesced: 4 sectors per request, all bytes used");
    expect(bad && bad->sectors_per_request() == 32.0 && bad->efficiency() == 0.125,
           "strided: 32 sectors per request, 12.5% of the bytes used");
    expect(strided.global_sectors() == 8 * coalesced.global_sectors(),
           "the strided kernel moves 8 times the sectors");
    expect(strided.instructions.total() == coalesced.instructions.total(),
           "both execute the same instructions");

    return errors == 0 ? 0 : 1;
}

int main() {
    // The counters are the simulator's: run the kernels there even on a machine with a GPU.
    setenv("AICF_DEVICE", "sim", 1);
    try {
        return run();
    } catch (const Error &e) {
        std::printf("error: %s\n", e.what());
        return 1;
    }
}
