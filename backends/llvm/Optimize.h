#ifndef AICF_BACKENDS_LLVM_OPTIMIZE_H
#define AICF_BACKENDS_LLVM_OPTIMIZE_H

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace aicf {
namespace backends {

// Who unrolls loops that the schedule did not unroll.
enum class LoopUnrolling {
    ScheduleOnly, // LLVM unrolls nothing: a loop runs as the schedule wrote it
    AlsoLLVM,     // LLVM's unrollers may unroll small loops of constant extent too
};

// LLVM's O3 pipeline for the target machine (loop and SLP vectorization on).
//
// Host code uses LoopUnrolling::ScheduleOnly. On nested small loops LLVM's full unroller
// multiplies the code at each level, and the code generator then spends most of a compile on
// it: a pointwise pipeline with a few loops of 2 to 8 iterations compiled in 6 s rather than
// 0.5 s, and the CPU property tests (seed 26, 30 schedules per pipeline) in 39 s rather than
// 28 s, while the benchmarks' ratios stayed within the noise of the runs. `unroll` in a
// schedule unrolls a loop in AICF's own IR either way. Kernels for the GPU keep LLVM's unrolling,
// which small per-thread loops over registers rely on.
void optimize_module(llvm::Module &module, llvm::TargetMachine &tm, LoopUnrolling unrolling);

} // namespace backends
} // namespace aicf

#endif
