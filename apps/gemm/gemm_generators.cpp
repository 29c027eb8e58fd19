// The tensor-core matrix product (apps/common/GemmGPU.h) as generators, compiled ahead of time
// into the libraries apps/gemm/CMakeLists.txt lists:
//
//   gemm                      C = A B                      A, B of A.type (bfloat16, float16
//                                                          or float32, through TF32), C float32
//   gemm_bias_gelu            C = GELU(A B + bias)         bias float32 along x
//   gemm_bias_gelu_residual   C = GELU(A B + bias) + R     R and C bfloat16
//
// with C(x, y) = sum over k of A(k, y) B(x, k), K = A's extent along its first dimension.
// k_in_pieces=true builds take only a K that is a multiple of 16 bytes of elements, and copy
// all of A asynchronously. warpgroups=1 or 2 builds run on Hopper's warpgroup tensor cores
// (GemmSchedule::hopper(), for the target cuda-sm_90a) with bfloat16 or float16 inputs.

#include "GemmGPU.h"

#include <string>

using namespace aicf;

namespace {

// What the three share: inputs A and B of one type, the schedule's stages.
template <typename Self> class GemmBase : public Generator<Self> {
public:
    GeneratorParam<int> stages{"stages", 3, 1, 4};
    // K a multiple of 16 bytes of elements (GemmSchedule::k_in_pieces), checked when it runs.
    GeneratorParam<bool> k_in_pieces{"k_in_pieces", false};
    // Warpgroups of wgmma (GemmSchedule::hopper(warpgroups)); 0: mma.sync in warps.
    GeneratorParam<int> warpgroups{"warpgroups", 0, 0, 2};
    Input<Buffer<void, 2>> A{"A"};
    Input<Buffer<void, 2>> B{"B"};

protected:
    Func product(const aicf_apps::GemmEpilogue &epilogue, const Func &out) {
        if (A.type() != B.type()) {
            throw CompileError("gemm: A is " + detail::type_text(A.type()) + " and B is " +
                               detail::type_text(B.type()) +
                               "; set A.type and B.type to one of bfloat16, float16, float32.");
        }
        aicf_apps::GemmSchedule s = warpgroups > 0 ? aicf_apps::GemmSchedule::hopper(warpgroups)
                                                   : aicf_apps::GemmSchedule();
        s.stages = stages;
        s.k_in_pieces = k_in_pieces;
        return aicf_apps::gemm_tensor_cores(A.image(), B.image(), A.dim(0).extent(), "C", epilogue,
                                            out, s);
    }
};

class Gemm : public GemmBase<Gemm> {
public:
    Output<Buffer<float, 2>> C{"C"};
    void generate() { product({}, Func(C)); }
};

class GemmBiasGelu : public GemmBase<GemmBiasGelu> {
public:
    Input<Buffer<float, 1>> bias{"bias"};
    Output<Buffer<float, 2>> C{"C"};
    void generate() { product(aicf_apps::bias_gelu_epilogue(bias), Func(C)); }
};

class GemmBiasGeluResidual : public GemmBase<GemmBiasGeluResidual> {
public:
    Input<Buffer<float, 1>> bias{"bias"};
    Input<Buffer<bfloat16_t, 2>> residual{"residual"};
    Output<Buffer<bfloat16_t, 2>> C{"C"};
    void generate() { product(aicf_apps::bias_gelu_residual_epilogue(bias, residual), Func(C)); }
};

} // namespace

AICF_REGISTER_GENERATOR(Gemm, gemm)
AICF_REGISTER_GENERATOR(GemmBiasGelu, gemm_bias_gelu)
AICF_REGISTER_GENERATOR(GemmBiasGeluResidual, gemm_bias_gelu_residual)
