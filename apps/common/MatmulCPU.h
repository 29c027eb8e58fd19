#ifndef AICF_APPS_MATMUL_CPU_H
#define AICF_APPS_MATMUL_CPU_H

// C = A * B in float32 on the CPU (C(x, y) = sum over k of A(k, y) * B(x, k)), register-blocked
// for the vector registers of a CPU level:
//   - each parallel task computes a strip of C's columns over its whole height, with the
//     strip's columns of B packed once per task into contiguous memory;
//   - within it, for each group of rows, a block of accumulators stays in registers while k
//     runs over a row of A and the packed strip.
// AVX-512 (x86-64-v4, 32 registers of 16 floats): 6 rows x 64 columns, 24 accumulators.
// AVX2 (x86-64-v3, 16 registers of 8): 6 rows x 16 columns, 12 accumulators.
// SSE (x86-64, 16 registers of 4, no fused multiply-add): 2 rows x 16 columns, 8 accumulators,
// which leaves the 4 vectors of B, the broadcast of A and a product in registers.
// Sizes need not be multiples of the blocks: the last strip and row group shift inwards (C at
// least a block wide and high), and the reduction, unrolled by two, is guarded.
// bench_cpu measures it (by the JIT and as compiled ahead of time for each level, by
// apps/bench_cpu/cpu_generators.cpp).

#include "dsl/aicf.h"

#include <optional>
#include <string>

namespace aicf_apps {

struct CPUMatmulBlock {
    int vector;  // floats per vector register
    int columns; // columns of the register block: a multiple of vector
    int rows;    // rows of the register block
};

// The block for a target's CPU ("host": this machine's widest vectors).
inline CPUMatmulBlock cpu_matmul_block(const aicf::Target &t) {
    const aicf::Target::Arch level =
        t.arch() == aicf::Target::Host ? aicf::Target::highest_level_here() : t.arch();
    if (level >= aicf::Target::X86_64_v4) return {16, 64, 6};
    if (level >= aicf::Target::X86_64_v3) return {8, 16, 6};
    return {4, 16, 2};
}

// A and B are Buffers or ImageParams, K their shared extent; `result`, when given, is the Func
// to define (a generator's Output).
template <typename Src>
aicf::Func matmul_cpu(const Src &A, const Src &B, const aicf::Expr &K, const CPUMatmulBlock &block,
                      const std::string &name, const std::optional<aicf::Func> &result = {}) {
    using namespace aicf;
    Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
    RVar ko("ko"), ki("ki");
    RDom k(0, K, "k");
    Func prod("prod"), panel("panel"), out = result ? *result : Func(name);
    panel(x, y) = B(x, y);
    prod(x, y) = 0.0f;
    prod(x, y) += A(k, y) * panel(x, k);
    out(x, y) = prod(x, y);

    const int v = block.vector;
    out.split(x, xo, xi, block.columns)
        .split(y, yo, yi, block.rows)
        .reorder(xi, yi, yo, xo)
        .parallel(xo)
        .vectorize(xi, v)
        .unroll(xi)
        .unroll(yi);
    panel.compute_at(out, xo).vectorize(x, v);
    prod.compute_at(out, yo).vectorize(x, v).unroll(x).unroll(y);
    prod.update()
        .split(k, ko, ki, 2)
        .reorder(x, y, ki, ko)
        .vectorize(x, v)
        .unroll(x)
        .unroll(y)
        .unroll(ki);
    return out;
}

} // namespace aicf_apps

#endif
