// The demo's layernorm + softmax as a generator: the same algorithm (DemoBlock.h) and CPU
// schedules, compiled ahead of time at build time into a library the demo links
// (apps/demo/CMakeLists.txt), which it runs next to the JIT.

#include "DemoBlock.h"

using namespace aicf;

namespace {

class DemoGenerator : public Generator<DemoGenerator> {
public:
    GeneratorParam<int> dim{"dim", 1024, 16, 1 << 16};
    GeneratorParam<bool> region{"region", true}; // fused by rows, or operator by operator
    Input<Buffer<float, 2>> x{"x"};
    Input<Buffer<float, 1>> gamma{"gamma"};
    Input<Buffer<float, 1>> beta{"beta"};
    Output<Buffer<float, 2>> scores{"scores"};

    void generate() {
        block = std::make_unique<aicf_apps::DemoBlock>(x.image(), gamma.image(), beta.image(), dim,
                                                       scores);
    }
    void schedule() { block->schedule_cpu(region); }

private:
    std::unique_ptr<aicf_apps::DemoBlock> block;
};

} // namespace

AICF_REGISTER_GENERATOR(DemoGenerator, layernorm_softmax)
