#include "dsl/BufferCopy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace aicf {

int copy_elements_to_host(aicf_buffer_t *b, char *error, size_t error_size) {
    auto *device = static_cast<const aicf_device_interface_t *>(b->device_interface);
    const int64_t span = aicf_buffer_footprint(b);
    const int64_t elem = ((b->type.bits + 7) / 8) * (b->type.lanes ? b->type.lanes : 1);
    int64_t elements = 1;
    for (int32_t d = 0; d < b->dimensions; d++)
        elements *= b->dim[d].extent > 0 ? b->dim[d].extent : 0;
    if (span <= 0 || elements * elem >= span)
        return device->copy_to_host(b, span, error, error_size);
    void *staging = std::malloc(size_t(span));
    if (!staging) {
        std::snprintf(error, error_size, "no host memory for a %lld-byte staging copy",
                      static_cast<long long>(span));
        return 1;
    }
    aicf_buffer_t view = *b;
    view.host = static_cast<uint8_t *>(staging);
    if (int r = device->copy_to_host(&view, span, error, error_size)) {
        std::free(staging);
        return r;
    }
    // Runs along the dimension of stride 1 (the first, if any), one element otherwise.
    int32_t run_dim = -1;
    for (int32_t d = 0; d < b->dimensions && run_dim < 0; d++)
        if (b->dim[d].stride == 1) run_dim = d;
    const int64_t run = (run_dim < 0 ? 1 : b->dim[run_dim].extent) * elem;
    std::vector<int32_t> at(size_t(b->dimensions), 0);
    while (true) {
        int64_t offset = 0;
        for (int32_t d = 0; d < b->dimensions; d++)
            offset += int64_t(at[size_t(d)]) * b->dim[d].stride;
        std::memcpy(b->host + offset * elem, view.host + offset * elem, size_t(run));
        int32_t d = 0;
        for (; d < b->dimensions; d++) {
            if (d == run_dim) continue;
            if (++at[size_t(d)] < b->dim[d].extent) break;
            at[size_t(d)] = 0;
        }
        if (d == b->dimensions) break;
    }
    std::free(staging);
    return 0;
}

} // namespace aicf
