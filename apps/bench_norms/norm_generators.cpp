// The norms of apps/common/ModelOps.h as generators, under the schedules of
// apps/common/NormSchedules.h: the same algorithm and schedules the benchmark runs by the
// JIT, compiled ahead of time into libraries the benchmark links (apps/bench_norms/
// CMakeLists.txt) and checks against the JIT, bit for bit.
//
// One generator per storage type (norm_float32, norm_bfloat16); its parameters choose the
// operator, the schedule and the row width (registers are sized for it). Every build takes
// in, weight and bias, whether the operator reads them or not, so all share one signature:
//
//   int name(DLTensor *in, DLTensor *weight, DLTensor *bias, DLTensor *out);

#include "ModelOps.h"
#include "NormSchedules.h"

using namespace aicf;
using aicf_apps::NormSchedule;
using aicf_apps::RowwiseOp;

namespace {

enum class NormOp { LayerNorm, RMSNorm, Softmax };

template <typename T> class Norm : public Generator<Norm<T>> {
public:
    GeneratorParam<NormOp> op{"op",
                              NormOp::LayerNorm,
                              {{"layernorm", NormOp::LayerNorm},
                               {"rmsnorm", NormOp::RMSNorm},
                               {"softmax", NormOp::Softmax}}};
    GeneratorParam<NormSchedule> schedule_kind{"schedule",
                                               NormSchedule::WarpPerRow,
                                               {{"warp_per_row", NormSchedule::WarpPerRow},
                                                {"block_per_row", NormSchedule::BlockPerRow},
                                                {"shared_tree", NormSchedule::SharedTree}}};
    GeneratorParam<int> width{"width", 1024, 1, 1 << 20};
    Input<Buffer<T, 2>> in{"in"};
    Input<Buffer<T, 1>> weight{"weight"};
    Input<Buffer<T, 1>> bias{"bias"};
    Output<Buffer<T, 2>> out{"out"};

    void generate() {
        const ImageParam &x = in.image(), &w = weight.image(), &b = bias.image();
        switch (op.value()) {
        case NormOp::LayerNorm:
            rowwise = aicf_apps::layer_norm<T>(x, w, b, width, 1e-5f, "norm", Func(out));
            break;
        case NormOp::RMSNorm:
            rowwise = aicf_apps::rms_norm<T>(x, w, width, 1e-5f, "norm", Func(out));
            break;
        default:
            rowwise = aicf_apps::softmax<T>(x, width, "norm", Func(out));
        }
    }
    void schedule() { aicf_apps::schedule<T>(rowwise, schedule_kind); }

private:
    RowwiseOp rowwise;
};

} // namespace

AICF_REGISTER_GENERATOR(Norm<float>, norm_float32)
AICF_REGISTER_GENERATOR(Norm<bfloat16_t>, norm_bfloat16)
