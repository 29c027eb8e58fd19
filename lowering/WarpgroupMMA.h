#ifndef AICF_LOWERING_WARPGROUP_MMA_H
#define AICF_LOWERING_WARPGROUP_MMA_H

// The warpgroup matrix instructions of sm_90a as kernel IR uses them (the gpu_wgmma
// intrinsics, dsl/ir/IR.h): wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16},
// executed together by the 128 threads of a warpgroup (4 consecutive warps, the first one's
// index a multiple of 4). A and B come from shared memory through matrix descriptors; D lives
// in registers, N / 2 floats a thread. The simulator executes the instruction through the maps
// below and the PTX code generator builds the descriptors from the same layout, so they are
// the one place the layout is written (PTX ISA 9.7.15.5, "Matrix Descriptor" and the canonical
// layouts; 9.7.15.5.1, the register fragment of D).
//
// A is 64 x 16 (M x K) and B is 16 x N (K x N), each in a canonical layout without swizzling,
// made of core matrices of 128 contiguous bytes: the core matrices adjacent along k lie `lbo`
// bytes apart (the leading dimension byte offset), those adjacent along the operand's rows (M
// of A, N of B) `sbo` bytes apart (the stride dimension byte offset). Stored K-major, a core
// matrix is 8 rows of 16 bytes of k (an operand's row holds its k contiguous); stored
// MN-major (the instruction's transpose bit), it is 8 k of 16 bytes of rows (consecutive rows
// of one k contiguous), as a row-major B (K x N, n contiguous) is copied in 16-byte pieces.
//
// D: thread t of the warpgroup (warp w = t / 32, g = (t % 32) / 4, q = t % 4) holds element
// i = 4j + 2h + c (j < N / 8, h and c 0 or 1) at row 16w + g + 8h, column 8j + 2q + c.
//
// The instruction is asynchronous: gpu_wgmma_fence orders the registers and shared memory
// written before it, gpu_wgmma_commit closes a group of wgmma, and gpu_wgmma_wait(n) waits
// until at most n groups are pending; only then may D be read. Shared memory written by
// ordinary stores (the generic proxy) becomes visible to wgmma (the async proxy) through
// gpu_async_proxy_fence, then a barrier.

#include "dsl/ir/IR.h"

#include <cstdint>
#include <utility>

namespace aicf {
namespace lowering {

constexpr int kWgmmaM = 64, kWgmmaK = 16, kWarpgroupThreads = 128;

// Whether wgmma has an m64nNk16 shape for N with 16-bit inputs of `element`'s type: N a
// multiple of 8 from 8 to 256, element bfloat16 or float16.
bool wgmma_shape_exists(int n, ir::Type element);

// The byte, from the operand's start, of element (row, k) of an operand in the canonical
// layout without swizzling, K-major or MN-major, with elements of `element_bytes`.
int64_t wgmma_operand_byte(int row, int k, int element_bytes, int64_t lbo, int64_t sbo,
                           bool mn_major = false);

// (row, column) of element i of D that thread `thread` (0 to 127) of a warpgroup holds.
std::pair<int, int> wgmma_d_element(int thread, int i);

// The intrinsic calls, with their operands checked (an internal error otherwise: lowering and
// tests make them). gpu_wgmma(element, n, a, b, d): the new D, a float32 vector of n / 2 lanes,
// from D (the same type) plus A * B, A starting `a.byte` bytes into shared memory, B `b.byte`.
struct WgmmaOperand {
    ir::Expr byte;            // from the start of the kernel's shared memory; a multiple of 16
    int64_t lbo = 0, sbo = 0; // multiples of 16, below 2^18
    bool mn_major = false;    // stored MN-major (transposed), not K-major
};
ir::Expr gpu_wgmma(ir::Type element, int n, const WgmmaOperand &a, const WgmmaOperand &b,
                   const ir::Expr &d);
// wgmma.fence: d itself, its registers ready for the wgmma that follow.
ir::Expr gpu_wgmma_fence(const ir::Expr &d);
ir::Stmt gpu_wgmma_commit();
// wgmma.wait_group pending: d itself, once at most `pending` groups are still running.
ir::Expr gpu_wgmma_wait(int pending, const ir::Expr &d);
// fence.proxy.async.shared::cta.
ir::Stmt gpu_async_proxy_fence();

// The parts of a gpu_wgmma call.
struct WgmmaCall {
    ir::Type element;
    int n = 0;
    WgmmaOperand a, b;
    ir::Expr d;
};
WgmmaCall wgmma_parts(const ir::Call *op);
// The `pending` of a gpu_wgmma_wait call.
int wgmma_wait_pending(const ir::Call *op);

} // namespace lowering
} // namespace aicf

#endif
