#include "dsl/Buffer.h"

#include "dsl/BufferMemory.h"
#include "dsl/HostMemory.h"
#include "dsl/Var.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace aicf {

using namespace ir;

namespace {

aicf_type_t to_abi(Type t) {
    aicf_type_t r;
    r.code = static_cast<uint8_t>(t.code);
    r.bits = t.bits;
    r.lanes = t.lanes;
    return r;
}

std::string buffer_name(const std::string &name) {
    if (name.empty()) return detail::unique_name("b");
    detail::check_user_name(name, "Buffer");
    return name;
}

void check_type(Type t, const std::string &name) {
    user_assert(is_valid_value_type(t))
        << "Buffer " << name << " cannot hold elements of type " << to_string(t) << ".";
}

} // namespace

void BufferStorage::init_dense(Type t, const std::vector<int> &extents) {
    check_type(t, name_);
    raw_.type = to_abi(t);
    raw_.dimensions = static_cast<int32_t>(extents.size());
    dims_.resize(extents.size());
    int64_t stride = 1;
    for (size_t d = 0; d < extents.size(); d++) {
        if (extents[d] < 0) {
            runtime_error_report << "Buffer " << name_ << ": dimension " << d
                                 << " has a negative extent (" << extents[d] << ").";
        }
        dims_[d] = aicf_dim_t{0, extents[d], static_cast<int32_t>(stride), 0};
        int64_t next = stride * std::max(extents[d], 1);
        if (next > std::numeric_limits<int32_t>::max()) {
            runtime_error_report << "Buffer " << name_ << ": its extents make dimension " << d
                                 << " reach " << next
                                 << " elements, past the 2^31 - 1 that int32 strides "
                                 << "and indices address. Split the data into several buffers.";
        }
        stride = next;
    }
    raw_.dim = dims_.empty() ? nullptr : dims_.data();
}

BufferStorage::BufferStorage(Type t, const std::vector<int> &extents, const std::string &name)
    : name_(buffer_name(name)) {
    init_dense(t, extents);
    int64_t elements = number_of_elements();
    size_t bytes = static_cast<size_t>(std::max<int64_t>(elements, 1)) * t.bytes();
    void *p = host_allocate(bytes);
    if (!p) {
        runtime_error_report << "Buffer " << name_ << ": could not allocate " << bytes
                             << " bytes on the host.";
    }
    std::memset(p, 0, bytes);
    allocation_ =
        std::shared_ptr<uint8_t>(static_cast<uint8_t *>(p), [](uint8_t *q) { host_free(q); });
    raw_.host = allocation_.get();
    raw_.flags = 0;
}

BufferStorage::BufferStorage(Type t, void *data, const std::vector<int> &extents,
                             const std::string &name)
    : name_(buffer_name(name)) {
    init_dense(t, extents);
    check_memory_for_points(data);
    raw_.host = static_cast<uint8_t *>(data);
}

BufferStorage::BufferStorage(Type t, void *data, const std::vector<aicf_dim_t> &dims,
                             const std::string &name)
    : name_(buffer_name(name)) {
    check_type(t, name_);
    raw_.type = to_abi(t);
    dims_ = dims;
    for (size_t d = 0; d < dims_.size(); d++) {
        if (dims_[d].extent < 0) {
            runtime_error_report << "Buffer " << name_ << ": dimension " << d
                                 << " has a negative extent (" << dims_[d].extent << ").";
        }
        check_end(d, dims_[d].min);
    }
    raw_.dimensions = static_cast<int32_t>(dims_.size());
    raw_.dim = dims_.empty() ? nullptr : dims_.data();
    check_memory_for_points(data);
    raw_.host = static_cast<uint8_t *>(data);
}

// Borrowed memory: a buffer with points needs some (an empty one, over an empty vector's null
// pointer, does not).
void BufferStorage::check_memory_for_points(const void *data) const {
    bool empty = false;
    for (const aicf_dim_t &d : dims_)
        empty = empty || d.extent == 0;
    if (data != nullptr || empty) return;
    runtime_error_report << "Buffer " << name_
                         << " was given a null data pointer, but it has points (no extent is 0).";
}

BufferStorage::~BufferStorage() {
    auto *device = static_cast<const aicf_device_interface_t *>(raw_.device_interface);
    if (raw_.device && device) device->device_free(&raw_);
}

void BufferStorage::copy_to_host() {
    if (!device_dirty()) return;
    auto *device = static_cast<const aicf_device_interface_t *>(raw_.device_interface);
    internal_assert(device && raw_.device)
        << "Buffer " << name_ << " is device dirty without a device copy";
    internal_assert(raw_.host) << "Buffer " << name_ << " has no host memory to copy to";
    char error[512] = {0};
    if (copy_elements_to_host(&raw_, error, sizeof error) != 0) {
        runtime_error_report << "Buffer " << name_ << ": copying its data from the " << device->name
                             << " device to the host failed: " << error;
    }
    raw_.flags &= ~uint64_t(AICF_BUFFER_DEVICE_DIRTY);
}

void BufferStorage::set_host_dirty() {
    internal_assert(!device_dirty()) << "Buffer " << name_ << " is dirty on both sides";
    if (raw_.device) raw_.flags |= AICF_BUFFER_HOST_DIRTY;
}

Type BufferStorage::type() const {
    return Type(static_cast<TypeCode>(raw_.type.code), raw_.type.bits, raw_.type.lanes);
}

const aicf_dim_t &BufferStorage::dim(int i) const {
    runtime_assert(i >= 0 && i < raw_.dimensions)
        << "Buffer " << name_ << " has " << raw_.dimensions << " dimensions; dimension " << i
        << " does not exist.";
    return dims_[i];
}

void BufferStorage::set_min(const std::vector<int> &mins) {
    runtime_assert(mins.size() <= dims_.size())
        << "set_min on Buffer " << name_ << " with " << mins.size() << " values, but it has "
        << dims_.size() << " dimensions.";
    for (size_t d = 0; d < mins.size(); d++)
        check_end(d, mins[d]);
    for (size_t d = 0; d < mins.size(); d++)
        dims_[d].min = mins[d];
}

// Coordinates are int32s: the last one of dimension d starting at `min` must be one.
void BufferStorage::check_end(size_t d, int min) const {
    const int64_t last = int64_t(min) + dims_[d].extent - 1;
    if (last <= INT32_MAX) return;
    runtime_error_report << "Buffer " << name_ << ": dimension " << d << " starts at " << min
                         << " and has extent " << dims_[d].extent << ", so its last coordinate "
                         << "would be " << last << ", past the 2^31 - 1 that 32-bit coordinates "
                         << "reach. Give it a min of at most "
                         << INT32_MAX - int64_t(dims_[d].extent) + 1 << ".";
}

int64_t BufferStorage::number_of_elements() const {
    int64_t n = 1;
    for (const aicf_dim_t &d : dims_)
        n *= d.extent;
    return n;
}

int64_t BufferStorage::offset_of(const int *coords, int n) const {
    int64_t off = 0;
    for (int d = 0; d < n && d < raw_.dimensions; d++) {
        off += int64_t(coords[d] - dims_[d].min) * dims_[d].stride;
    }
    return off * type().bytes();
}

int64_t BufferStorage::checked_offset_of(const int *coords, int n) const {
    auto point = [&] {
        std::string text = name_ + "(";
        for (int d = 0; d < n; d++)
            text += (d ? ", " : "") + std::to_string(coords[d]);
        return text + ")";
    };
    if (n != raw_.dimensions) {
        runtime_error_report << "Buffer " << name_ << " has " << raw_.dimensions << " dimension"
                             << (raw_.dimensions == 1 ? "" : "s") << ", but " << point()
                             << " gives " << n << " coordinate" << (n == 1 ? "" : "s")
                             << ": give one per dimension.";
    }
    for (int d = 0; d < n; d++) {
        const int64_t lo = dims_[d].min, hi = lo + int64_t(dims_[d].extent) - 1;
        if (coords[d] < lo || coords[d] > hi) {
            runtime_error_report << "Buffer " << name_ << ": " << point() << " is outside it: "
                                 << "dimension " << d << " covers [" << lo << ", " << hi << "].";
        }
    }
    return offset_of(coords, n);
}

void BufferBase::check_defined() const {
    user_assert(storage_ != nullptr) << "Use of an undefined Buffer.";
}

void BufferBase::check_type(Type expected) const {
    if (!storage_) return;
    if (storage_->type() != expected) {
        runtime_error_report << "Buffer " << storage_->name() << " holds "
                             << to_string(storage_->type())
                             << " elements, but is used as a Buffer of " << to_string(expected)
                             << ".";
    }
}

void BufferBase::check_rank(int expected) const {
    if (!storage_ || storage_->dimensions() == expected) return;
    runtime_error_report << "Buffer " << storage_->name() << " has " << storage_->dimensions()
                         << " dimension" << (storage_->dimensions() == 1 ? "" : "s")
                         << ", but is used as a Buffer of " << expected << " dimensions.";
}

const std::string &BufferBase::name() const {
    check_defined();
    return storage_->name();
}
Type BufferBase::type() const {
    check_defined();
    return storage_->type();
}
int BufferBase::dimensions() const {
    check_defined();
    return storage_->dimensions();
}
int BufferBase::min(int d) const {
    check_defined();
    return storage_->dim(d).min;
}
int BufferBase::extent(int d) const {
    check_defined();
    return storage_->dim(d).extent;
}
int BufferBase::stride(int d) const {
    check_defined();
    return storage_->dim(d).stride;
}
int64_t BufferBase::number_of_elements() const {
    check_defined();
    return storage_->number_of_elements();
}
void BufferBase::set_min(const std::vector<int> &mins) {
    check_defined();
    storage_->set_min(mins);
}
void *BufferBase::raw_data() const {
    check_defined();
    storage_->copy_to_host();
    storage_->set_host_dirty();
    return storage_->raw()->host;
}
void BufferBase::copy_to_host() const {
    check_defined();
    storage_->copy_to_host();
}
void BufferBase::set_host_dirty() const {
    check_defined();
    if (storage_->device_dirty()) {
        runtime_error_report
            << "set_host_dirty() on Buffer " << name()
            << ", whose device copy holds newer data than its host memory (a GPU pipeline "
            << "wrote it and nothing has read it on the host since): the host memory would "
            << "then be taken as the newest, and the GPU's results lost. Call copy_to_host() "
            << "(or read the Buffer) before writing through a pointer kept from before the "
            << "GPU run, then set_host_dirty().";
    }
    storage_->set_host_dirty();
}
bool BufferBase::host_dirty() const {
    check_defined();
    return storage_->host_dirty();
}
bool BufferBase::device_dirty() const {
    check_defined();
    return storage_->device_dirty();
}
aicf_buffer_t *BufferBase::raw_buffer() const {
    check_defined();
    return storage_->raw();
}

Expr BufferBase::operator()(const std::vector<Expr> &args) const {
    check_defined();
    user_assert(static_cast<int>(args.size()) == dimensions())
        << "Buffer " << name() << " has " << dimensions() << " dimensions but is called with "
        << args.size() << " argument" << (args.size() == 1 ? "" : "s") << ".";
    std::vector<Expr> int_args;
    for (size_t i = 0; i < args.size(); i++) {
        user_assert(args[i].defined() && args[i].type().is_int_or_uint() &&
                    args[i].type().is_scalar())
            << "Argument " << i << " of a call to Buffer " << name()
            << " must be an integer expression.";
        int_args.push_back(ir::cast(Int(32), args[i]));
    }
    Parameter p(type(), true, dimensions(), name());
    p.set_buffer(storage_, true);
    return Call::make_image(type(), name(), int_args, p);
}

} // namespace aicf
