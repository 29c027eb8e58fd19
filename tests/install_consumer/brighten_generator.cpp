// out(x, y) = min(in(x, y) * gain, 255) in 8-bit pixels, vectorized and in parallel.

#include <dsl/aicf.h>

using namespace aicf;

class Brighten : public Generator<Brighten> {
public:
    GeneratorParam<int> gain{"gain", 2, 1, 255};
    Input<Buffer<>> in{"in"};
    Output<Buffer<uint8_t, 2>> out{"out"};

    void generate() { out(x, y) = cast<uint8_t>(min(cast<int32_t>(in(x, y)) * gain, 255)); }
    void schedule() { out.parallel(y).vectorize(x, 16); }

private:
    Var x{"x"}, y{"y"};
};

AICF_REGISTER_GENERATOR(Brighten, brighten)
