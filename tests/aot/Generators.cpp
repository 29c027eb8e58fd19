// Generators the ahead-of-time tests compile at build time (tests/CMakeLists.txt) and also
// build in the test itself, to run the same pipelines through the JIT.

#include "dsl/aicf.h"

using namespace aicf;

namespace {

// out(x, y) = in(x, y) * scale + offset: scalar inputs of two types, a vectorized schedule.
class ScaleOffset : public Generator<ScaleOffset> {
public:
    GeneratorParam<int> vector{"vector", 8, 1, 64};
    Input<Buffer<float, 2>> in{"in"};
    Input<float> scale{"scale"};
    Input<int32_t> offset{"offset"};
    Output<Buffer<float, 2>> out{"out"};

    void generate() { out(x, y) = in(x, y) * scale + cast<float>(offset); }
    void schedule() { out.parallel(y).vectorize(x, vector); }

private:
    Var x{"x"}, y{"y"};
};

enum class BlurSchedule { Root, Tiled };

// A 3x3 box blur of 16-bit pixels, two stages, scheduled at the root or in tiles.
class Blur : public Generator<Blur> {
public:
    GeneratorParam<BlurSchedule> schedule_kind{
        "schedule",
        BlurSchedule::Root,
        {{"root", BlurSchedule::Root}, {"tiled", BlurSchedule::Tiled}}};
    GeneratorParam<int> tile{"tile", 32, 8, 256};
    Input<Buffer<uint16_t, 2>> in{"in"};
    Output<Buffer<uint16_t, 2>> out{"out"};

    void generate() {
        Expr w = cast<uint32_t>(in(x, y)) + in(x + 1, y) + in(x + 2, y);
        rows(x, y) = w;
        out(x, y) = cast<uint16_t>((rows(x, y) + rows(x, y + 1) + rows(x, y + 2)) / 9);
    }
    void schedule() {
        if (schedule_kind == BlurSchedule::Root) {
            rows.compute_root().vectorize(x, 8);
            out.vectorize(x, 8);
        } else {
            Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
            out.tile(x, y, xo, yo, xi, yi, tile, tile).parallel(yo).vectorize(xi, 8);
            rows.compute_at(out, xo).vectorize(x, 8);
        }
    }

private:
    Var x{"x"}, y{"y"};
    Func rows{"rows"};
};

// Column sums of a matrix whose element type, and the sum's type, are parameters.
class ColumnSum : public Generator<ColumnSum> {
public:
    Input<Buffer<>> in{"in"};
    Output<Buffer<>> out{"out"};

    void generate() {
        RDom r(0, in.dim(1).extent(), "r");
        out(x) = cast(out_type(), 0);
        out(x) += cast(out_type(), in(x, r));
    }

private:
    Var x{"x"};
    ir::Type out_type() const { return out.type(); }
};

// Root mean square normalization of each row. For a target with a GPU: a block per row, the
// row's sum of squares reduced across the block's threads (warp shuffles, then across warps),
// each thread holding it in a register. For a CPU: rows in parallel, vectorized.
class RMSNorm : public Generator<RMSNorm> {
public:
    GeneratorParam<int> threads{"threads", 64, 32, 1024};
    Input<Buffer<float, 2>> in{"in"};
    Input<Buffer<float, 1>> weight{"weight"};
    Input<float> epsilon{"epsilon"};
    Output<Buffer<float, 2>> out{"out"};

    void generate() {
        r = RDom(0, in.dim(0).extent(), "r");
        sumsq(y) = 0.0f;
        sumsq(y) += in(r, y) * in(r, y);
        Expr scale = rsqrt(sumsq(y) / cast<float>(in.dim(0).extent()) + epsilon);
        out(x, y) = in(x, y) * scale * weight(x);
    }
    void schedule() {
        if (!get_target().has_cuda()) {
            out.parallel(y).vectorize(x, 8);
            sumsq.compute_at(out, y);
            return;
        }
        Var xo("xo"), tx("tx");
        RVar ro("ro"), rt("rt");
        out.split(x, xo, tx, threads, TailStrategy::GuardWithIf)
            .reorder(tx, xo, y)
            .gpu_blocks(y)
            .gpu_threads(tx);
        sumsq.compute_at(out, y).store_in(MemoryType::Register);
        sumsq.update()
            .split(r.x, ro, rt, threads, TailStrategy::GuardWithIf)
            .reorder(ro, rt)
            .gpu_threads(rt);
    }

private:
    Var x{"x"}, y{"y"};
    RDom r;
    Func sumsq{"sumsq"};
};

} // namespace

AICF_REGISTER_GENERATOR(ScaleOffset, scale_offset)
AICF_REGISTER_GENERATOR(Blur, blur, (blur_tiled, (schedule, tiled)(tile, 16)))
AICF_REGISTER_GENERATOR(ColumnSum, column_sum)
AICF_REGISTER_GENERATOR(RMSNorm, rms_norm)
