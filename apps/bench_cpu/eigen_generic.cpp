// Eigen's GEMM built for the baseline x86-64 instruction set (SSE2), as a second peer: the
// figure a default build of a program using Eigen gets on this machine.

#include <Eigen/Dense>

void eigen_generic_matmul(const float *a, const float *b, float *c, int n) {
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const Mat> A(a, n, n), B(b, n, n);
    Eigen::Map<Mat> C(c, n, n);
    C.noalias() = A * B;
}
