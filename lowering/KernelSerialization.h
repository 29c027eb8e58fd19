#ifndef AICF_LOWERING_KERNEL_SERIALIZATION_H
#define AICF_LOWERING_KERNEL_SERIALIZATION_H

// A lowered kernel as bytes and back: what an ahead-of-time compiled pipeline carries for the
// simulator, which executes kernel IR. The format is versioned; reading bytes that are not a
// kernel of this version raises RuntimeError, never reads past the end.

#include "lowering/Kernel.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace aicf {
namespace lowering {

std::vector<uint8_t> serialize_kernel(const LoweredKernel &kernel);
std::shared_ptr<const LoweredKernel> deserialize_kernel(const uint8_t *data, size_t size);

} // namespace lowering
} // namespace aicf

#endif
