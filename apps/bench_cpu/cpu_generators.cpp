// The CPU benchmark's matrix product (apps/common/MatmulCPU.h) as a generator whose register
// block follows the target's CPU level, compiled ahead of time into libraries bench_cpu links
// (apps/bench_cpu/CMakeLists.txt): one with a build per level, which runs the best this machine
// runs, and one per level, to measure each.
//
//   int name(DLTensor *A, DLTensor *B, DLTensor *C);   // C(x, y) = sum over k A(k, y) B(x, k)

#include "MatmulCPU.h"

using namespace aicf;

namespace {

class MatmulCPU : public Generator<MatmulCPU> {
public:
    Input<Buffer<float, 2>> A{"A"};
    Input<Buffer<float, 2>> B{"B"};
    Output<Buffer<float, 2>> C{"C"};

    void generate() {
        aicf_apps::matmul_cpu(A.image(), B.image(), A.dim(0).extent(),
                              aicf_apps::cpu_matmul_block(get_target()), "C", Func(C));
    }
};

} // namespace

AICF_REGISTER_GENERATOR(MatmulCPU, matmul_cpu)
