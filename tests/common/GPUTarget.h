#ifndef AICF_TESTS_GPU_TARGET_H
#define AICF_TESTS_GPU_TARGET_H

// The target GPU tests compile for: AICF_TEST_GPU_TARGET, or host-cuda-sm_80 (which also
// runs on later GPUs). The device they run on is AICF_DEVICE's.

#include "dsl/Target.h"

#include <cstdlib>

namespace aicf_test {

inline aicf::Target gpu_test_target() {
    const char *env = std::getenv("AICF_TEST_GPU_TARGET");
    return aicf::Target(env && *env ? env : "host-cuda-sm_80");
}

} // namespace aicf_test

#endif
