#include "dsl/BufferMemory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace aicf {

int64_t buffer_element_bytes(const aicf_buffer_t *b) {
    return ((b->type.bits + 7) / 8) * (b->type.lanes ? b->type.lanes : 1);
}

int64_t buffer_elements(const aicf_buffer_t *b) {
    int64_t elements = 1;
    for (int32_t d = 0; d < b->dimensions; d++)
        elements *= b->dim[d].extent > 0 ? b->dim[d].extent : 0;
    return elements;
}

int copy_elements_to_host(aicf_buffer_t *b, char *error, size_t error_size) {
    auto *device = static_cast<const aicf_device_interface_t *>(b->device_interface);
    const int64_t span = aicf_buffer_footprint(b);
    const int64_t elem = buffer_element_bytes(b);
    if (span <= 0 || buffer_elements(b) * elem >= span)
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

namespace {

// Whether sum(k[d] * stride[d]) == target for some k[d] in [lo[d], hi[d]], dimensions taken
// from the largest stride down. `budget` bounds the search; running out answers yes.
struct LatticeSearch {
    struct Dim {
        int64_t stride, lo, hi;
    };
    std::vector<Dim> dims;
    std::vector<int64_t> rest_min, rest_max; // what dims [i, n) can add up to
    int budget = 4096;

    bool reaches(size_t i, int64_t target) {
        if (i == dims.size()) return target == 0;
        if (--budget < 0) return true;
        if (target < rest_min[i] || target > rest_max[i]) return false;
        const Dim &d = dims[i];
        if (d.stride == 0) return reaches(i + 1, target);
        // k * stride must leave what the smaller strides can still add up to.
        auto floor_div = [](int64_t a, int64_t b) {
            return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
        };
        int64_t a = target - rest_max[i + 1], b = target - rest_min[i + 1];
        int64_t lo, hi;
        if (d.stride > 0) {
            lo = -floor_div(-a, d.stride), hi = floor_div(b, d.stride);
        } else {
            lo = -floor_div(-b, d.stride), hi = floor_div(a, d.stride);
        }
        lo = std::max(lo, d.lo), hi = std::min(hi, d.hi);
        if (hi - lo > 64) return true;
        for (int64_t k = lo; k <= hi; k++)
            if (reaches(i + 1, target - k * d.stride)) return true;
        return false;
    }
};

} // namespace

bool buffers_share_memory(const aicf_buffer_t *a, uint64_t base_a, const aicf_buffer_t *b,
                          uint64_t base_b) {
    uint64_t first_a, end_a, first_b, end_b;
    aicf_buffer_span(a, base_a, &first_a, &end_a);
    aicf_buffer_span(b, base_b, &first_b, &end_b);
    if (first_a == end_a || first_b == end_b || end_a <= first_b || end_b <= first_a) return false;
    const int64_t elem = buffer_element_bytes(a);
    if (elem != buffer_element_bytes(b) || a->dimensions != b->dimensions) return true;
    const int64_t delta_bytes = int64_t(base_b - base_a);
    if (delta_bytes % elem != 0) return true;
    // An element a[i] is b[j] where sum((i[d] - j[d]) * stride[d]) == (base_b - base_a) / elem.
    LatticeSearch search;
    for (int32_t d = 0; d < a->dimensions; d++) {
        if (a->dim[d].stride != b->dim[d].stride) return true;
        search.dims.push_back(
            {a->dim[d].stride, -int64_t(b->dim[d].extent - 1), int64_t(a->dim[d].extent - 1)});
    }
    std::sort(search.dims.begin(), search.dims.end(), [](const auto &x, const auto &y) {
        return std::llabs(x.stride) > std::llabs(y.stride);
    });
    const size_t n = search.dims.size();
    search.rest_min.assign(n + 1, 0);
    search.rest_max.assign(n + 1, 0);
    for (size_t i = n; i-- > 0;) {
        const auto &d = search.dims[i];
        const int64_t x = d.lo * d.stride, y = d.hi * d.stride;
        search.rest_min[i] = search.rest_min[i + 1] + std::min(x, y);
        search.rest_max[i] = search.rest_max[i + 1] + std::max(x, y);
    }
    return search.reaches(0, delta_bytes / elem);
}

} // namespace aicf
