#ifndef AICF_LOWERING_TENSOR_CORES_H
#define AICF_LOWERING_TENSOR_CORES_H

// The warp-level matrix instructions of sm_80 and later as kernel IR uses them (the gpu_mma and
// gpu_ldmatrix intrinsics, dsl/ir/IR.h): their shapes, and where each lane's fragment elements
// sit in the matrices, as the PTX ISA defines them (sections 9.7.14.5.7, 9.7.14.5.8 and
// 9.7.14.5.15). The simulator executes the instructions through these maps and lowering lays
// tiles out by them, so they are the one place a lane mapping is written.
//
// Matrices are indexed (row, column): A is M x K, B is K x N, C and D are M x N. With
// g = lane / 4 and t = lane % 4:
//   m16n8k16 A (8 elements): (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1), then the same at
//            columns + 8;  B (4): (2t, g), (2t+1, g), (2t+8, g), (2t+9, g)
//   m16n8k8 (TF32) A (4): (g, t), (g+8, t), (g, t+4), (g+8, t+4);  B (2): (t, g), (t+4, g)
//   C and D of both (4): (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)

#include "dsl/ir/IR.h"

#include <optional>
#include <string>
#include <utility>

namespace aicf {
namespace lowering {

struct MMAShape {
    int m = 0, n = 0, k = 0;
    ir::Type a, b, c;  // the fragments' types as gpu_mma takes them (c is also d's)
    bool tf32 = false; // float32 inputs rounded to TF32 (m16n8k8)
    // The PTX instruction, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32".
    std::string ptx_name() const;
};

// The instruction gpu_mma(a, b, c) executes for these operand types, if any.
std::optional<MMAShape> mma_shape(ir::Type a, ir::Type b, ir::Type c);

// (row, column) of element i of lane `lane`'s fragment of A, B or C/D.
std::pair<int, int> mma_a_element(const MMAShape &s, int lane, int i);
std::pair<int, int> mma_b_element(const MMAShape &s, int lane, int i);
std::pair<int, int> mma_c_element(const MMAShape &s, int lane, int i);

// ldmatrix: (row, column) of the 8x8 matrix that element e (0 or 1) of a lane's register for
// that matrix holds; rows are the 16-byte rows the lanes supply.
std::pair<int, int> ldmatrix_element(int lane, int e, bool transpose);

// The intrinsic calls, with their operands checked (an internal error otherwise: lowering
// makes them).
ir::Expr gpu_mma(const ir::Expr &a, const ir::Expr &b, const ir::Expr &c);
ir::Expr gpu_ldmatrix(ir::Type element, const std::string &buffer, const ir::Expr &index,
                      int matrices, bool transpose);

// The parts of a gpu_ldmatrix call.
struct LdmatrixCall {
    std::string buffer;
    ir::Expr index;
    int matrices = 0;
    bool transpose = false;
};
LdmatrixCall ldmatrix_parts(const ir::Call *op);

} // namespace lowering
} // namespace aicf

#endif
