// The GPU benchmark's kernels as generators: the register-tiled float32 matrix product
// (apps/common/MatmulGPU.h) and the layernorm with one block per row (apps/common/
// LayerNormGPU.h), compiled ahead of time into libraries bench_gpu links
// (apps/bench_gpu/CMakeLists.txt), runs beside the JIT and checks against it, bit for bit.
//
//   int matmul_simt_aot(DLTensor *A, DLTensor *B, DLTensor *C);   // C(x, y) = sum A(k, y) B(x, k)
//   int layernorm_block_aot(DLTensor *in, DLTensor *out);

#include "LayerNormGPU.h"
#include "MatmulGPU.h"

#include <string>

using namespace aicf;

namespace {

class MatmulSIMT : public Generator<MatmulSIMT> {
public:
    Input<Buffer<float, 2>> A{"A"};
    Input<Buffer<float, 2>> B{"B"};
    Output<Buffer<float, 2>> C{"C"};

    // The algorithm and its schedule come together from MatmulGPU.h.
    void generate() {
        aicf_apps::matmul_register_tiled(A.image(), B.image(), A.dim(0).extent(), "C", Func(C));
    }
};

class LayerNormBlock : public Generator<LayerNormBlock> {
public:
    GeneratorParam<int> width{"width", 4096, 1, 1 << 20};
    GeneratorParam<int> threads{"threads", 256, 32, 1024};
    Input<Buffer<float, 2>> in{"in"};
    Output<Buffer<float, 2>> out{"out"};

    void generate() {
        if (width % threads != 0) {
            throw CompileError("layernorm_block: width (" + std::to_string(int(width)) +
                               ") must be a multiple of threads (" + std::to_string(int(threads)) +
                               ").");
        }
        aicf_apps::layernorm_one_block_per_row(in.image(), width, threads, "out", Func(out));
    }
};

} // namespace

AICF_REGISTER_GENERATOR(MatmulSIMT, matmul_simt)
AICF_REGISTER_GENERATOR(LayerNormBlock, layernorm_block)
