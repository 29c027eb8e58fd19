#ifndef AICF_LOWERING_MULTI_STAGE_STAGING_H
#define AICF_LOWERING_MULTI_STAGE_STAGING_H

#include "dsl/Function.h"
#include "lowering/Kernel.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// Tiles staged in shared memory at a serial loop with gpu_pipeline(N, PipelineCopy::Async):
// each gets N buffers, used in turn, and is filled N - 1 iterations ahead of its use.
//
// multi_buffer_async_stages: for each serial loop L whose body stages such Funcs (their
// `produce` at the top of L's body, outside its inner loops and branches), the body becomes
//   wait for all but N - 2 copy groups; barrier;
//   if (L + N - 1 < L's end) { the staging of iteration L + N - 1 }; commit a group;
//   the rest of the body;
// with the stagings of L's first N - 1 iterations (each a group) before L, after a barrier
// where they read shared memory the block wrote or a loop around L runs it again, and a wait
// for every group after it. Iteration i's staging writes buffer i % N, and the rest of its
// body reads buffer i % N. The barriers the body had outside its inner loops go: the one barrier
// per iteration covers both the writes of the copies it waited for (read after write) and
// the reads of the buffer the next copies refill, which the previous iteration made (write
// after read). Where the body runs warpgroup products (gpu_wgmma) and N >= 3, each iteration's
// group of them is left running into the next (its wait lets one group stay pending, and the
// accumulators are waited for after L), and the copies move after the rest of the body: the
// buffer they refill is the one the previous iteration's group read, which this iteration's
// wait retired (a second barrier before them where the block has several warpgroups, each
// waiting for its own group). They are still N - 1 iterations ahead.
// Expects: a kernel after inject_gpu_barriers, before pack_shared_memory (each shared Func
// its own Allocate). Raises CompileError naming the Func when it is not staged directly at a
// serial loop of the kernel, when the loop also stages Funcs in shared memory that are not
// pipelined with the same number of stages, or when its tile has no constant size.
void multi_buffer_async_stages(std::vector<LoweredKernel> &kernels,
                               const std::map<std::string, ir::Function> &env);

// In those stagings, each store of a device buffer's elements into shared memory whose two
// addresses are aligned (alignment_hint, version_wide_accesses) and whose size a cp.async
// takes (4, 8 or 16 bytes) becomes that cp.async. Stores that are not, such as those of a
// fallback kernel for unaligned buffers, stay plain loads and stores (as correct, without
// the overlap).
// Expects: kernels after version_wide_accesses.
void copy_stages_asynchronously(std::vector<LoweredKernel> &kernels,
                                const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
