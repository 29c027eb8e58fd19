#ifndef AICF_BUFFER_H
#define AICF_BUFFER_H

// Buffer<T>: an N-dimensional array on the host, owning its memory or borrowing the caller's,
// with a min and a stride per dimension (dimension 0 innermost). Buffers are inputs and
// outputs of pipelines; called with Exprs inside an algorithm, a Buffer is an input.

#include "dsl/BufferABI.h"
#include "dsl/base/Float16.h"
#include "dsl/ir/IR.h"

#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace aicf {

// The shared state behind Buffer handles: the descriptor and the memory it points to.
class BufferStorage {
public:
    // Allocates a dense buffer (zero-filled) of the given extents; mins are 0.
    BufferStorage(ir::Type t, const std::vector<int> &extents, const std::string &name);
    // Borrows `data`, laid out densely with the given extents.
    BufferStorage(ir::Type t, void *data, const std::vector<int> &extents, const std::string &name);
    // Borrows `data` with explicit mins, extents and strides.
    BufferStorage(ir::Type t, void *data, const std::vector<aicf_dim_t> &dims,
                  const std::string &name);
    BufferStorage(const BufferStorage &) = delete;
    BufferStorage &operator=(const BufferStorage &) = delete;
    ~BufferStorage(); // releases the device copy, if any

    // Where the data is. A pipeline that runs on a GPU device leaves its outputs there
    // (device dirty); reading them on the host copies them back first.
    bool host_dirty() const { return (raw_.flags & AICF_BUFFER_HOST_DIRTY) != 0; }
    bool device_dirty() const { return (raw_.flags & AICF_BUFFER_DEVICE_DIRTY) != 0; }
    bool has_device_copy() const { return raw_.device != 0; }
    // Copies the device data back if the device copy is newer. Raises RuntimeError when the
    // device fails.
    void copy_to_host();
    // The host is about to change the data: a later GPU pipeline copies it again.
    void set_host_dirty();
    // Whether the host memory is the caller's (a Buffer made from a data pointer), which the
    // caller may change without the Buffer knowing.
    bool borrows_memory() const { return allocation_ == nullptr; }

    aicf_buffer_t *raw() { return &raw_; }
    const aicf_buffer_t *raw() const { return &raw_; }
    ir::Type type() const;
    const std::string &name() const { return name_; }
    int dimensions() const { return raw_.dimensions; }
    const aicf_dim_t &dim(int i) const;
    void set_min(const std::vector<int> &mins);
    int64_t number_of_elements() const;
    void check_memory_for_points(const void *data) const;
    void check_end(size_t d, int min) const;
    // Byte offset of an element from `host` given its coordinates.
    int64_t offset_of(const int *coords, int n) const;
    // The same for an element a program reads or writes: RuntimeError for another number of
    // coordinates than the buffer's dimensions, or a point outside it.
    int64_t checked_offset_of(const int *coords, int n) const;

private:
    aicf_buffer_t raw_{};
    std::vector<aicf_dim_t> dims_;
    std::string name_;
    std::shared_ptr<uint8_t> allocation_;
    void init_dense(ir::Type t, const std::vector<int> &extents);
};

// Untyped operations shared by all Buffer<T>.
class BufferBase {
public:
    bool defined() const { return storage_ != nullptr; }
    const std::string &name() const;
    ir::Type type() const;
    int dimensions() const;
    int min(int d) const;
    int extent(int d) const;
    int stride(int d) const;
    // One dimension's extent, as Halide's Buffer::dim(d) gives it.
    struct Dim {
        int min_, extent_, stride_;
        int min() const { return min_; }
        int extent() const { return extent_; }
        int max() const { return min_ + extent_ - 1; }
        int stride() const { return stride_; }
    };
    Dim dim(int d) const { return {min(d), extent(d), stride(d)}; }
    int width() const { return dimensions() > 0 ? extent(0) : 1; }
    int height() const { return dimensions() > 1 ? extent(1) : 1; }
    int channels() const { return dimensions() > 2 ? extent(2) : 1; }
    int64_t number_of_elements() const;
    void set_min(const std::vector<int> &mins);
    // The host data (brought back from the device first if the device copy is newer). The
    // buffer counts as changed on the host afterwards, since the pointer allows writes.
    void *raw_data() const;
    aicf_buffer_t *raw_buffer() const;
    // Explicit control over the host and device copies (realize and element access do this
    // on their own).
    void copy_to_host() const;
    void set_host_dirty() const;
    bool host_dirty() const;
    bool device_dirty() const;
    const std::shared_ptr<BufferStorage> &storage() const { return storage_; }

    // A point of this buffer inside an algorithm.
    ir::Expr operator()(const std::vector<ir::Expr> &args) const;

protected:
    BufferBase() = default;
    explicit BufferBase(std::shared_ptr<BufferStorage> s) : storage_(std::move(s)) {}
    std::shared_ptr<BufferStorage> storage_;
    void check_defined() const;
    void check_type(ir::Type expected) const;
    void check_rank(int expected) const;
};

// Buffer<T> holds elements of type T (Buffer<> or Buffer<void>: any type); Buffer<T, D> also
// states its rank, as a generator's Input<Buffer<float, 2>> does.
template <typename T = void, int Dims = -1> class Buffer : public BufferBase {
    static constexpr bool typed = !std::is_void<T>::value;
    using Elem = std::conditional_t<typed, T, uint8_t>;

public:
    Buffer() = default;

    // A dense buffer of the given extents, zero-filled.
    template <typename... Ints, typename = std::enable_if_t<(std::is_integral<Ints>::value && ...)>>
    explicit Buffer(int extent0, Ints... rest)
        : Buffer(std::vector<int>{extent0, static_cast<int>(rest)...}) {}
    explicit Buffer(const std::vector<int> &extents, const std::string &name = "")
        : BufferBase(std::make_shared<BufferStorage>(element_type(), extents, name)) {
        check_static_rank();
    }
    // The same from a braced list, so that Buffer<float> b({W, H}) is not ambiguous.
    explicit Buffer(std::initializer_list<int> extents, const std::string &name = "")
        : Buffer(std::vector<int>(extents), name) {}
    // A dense buffer of type t (for Buffer<void>).
    Buffer(ir::Type t, const std::vector<int> &extents, const std::string &name = "")
        : BufferBase(std::make_shared<BufferStorage>(t, extents, name)) {
        if (typed) check_type(element_type());
        check_static_rank();
    }
    // Borrows `data` (not copied; it must outlive the buffer), dense in the given extents.
    Buffer(Elem *data, const std::vector<int> &extents, const std::string &name = "")
        : BufferBase(std::make_shared<BufferStorage>(element_type(), data, extents, name)) {
        check_static_rank();
    }
    // The same from a braced list, so that Buffer<float> b(data, {N}) is not ambiguous.
    Buffer(Elem *data, std::initializer_list<int> extents, const std::string &name = "")
        : Buffer(data, std::vector<int>(extents), name) {}

    // Borrows `data` with explicit mins, extents and strides per dimension (a view into a
    // larger array, a transposed layout, ...). Pipelines require dimension 0 to be dense.
    Buffer(Elem *data, const std::vector<aicf_dim_t> &dims, const std::string &name = "")
        : BufferBase(std::make_shared<BufferStorage>(element_type(), data, dims, name)) {
        check_static_rank();
    }

    // Conversion between typed and untyped views of the same storage (checked).
    template <typename U, int D> Buffer(const Buffer<U, D> &other) : BufferBase(other.storage()) {
        if (typed && defined()) check_type(element_type());
        check_static_rank();
    }

    static constexpr int static_dimensions() { return Dims; }

    static ir::Type element_type() {
        if constexpr (typed) {
            return ir::type_of<T>();
        } else {
            return ir::UInt(8);
        }
    }

    Elem *data() const { return static_cast<Elem *>(raw_data()); }

    // Element access at absolute coordinates (taking the mins into account).
    template <typename... Ints, typename = std::enable_if_t<(std::is_integral<Ints>::value && ...)>>
    Elem &operator()(Ints... coords) const {
        const int c[] = {static_cast<int>(coords)..., 0};
        return *reinterpret_cast<Elem *>(static_cast<uint8_t *>(raw_data()) +
                                         storage_->checked_offset_of(c, sizeof...(Ints)));
    }
    Elem &operator()() const { return *data(); }

    // A point of this buffer inside an algorithm: b(x, y) with Vars or Exprs.
    template <typename... Args,
              typename = std::enable_if_t<!(std::is_integral<Args>::value && ...) ||
                                          (sizeof...(Args) == 0)>>
    ir::Expr operator()(const Args &...args) const {
        return BufferBase::operator()(std::vector<ir::Expr>{ir::Expr(args)...});
    }
    using BufferBase::operator();

    // Sets every element to v.
    void fill(Elem v) const {
        for_each_offset([&](int64_t off) {
            *reinterpret_cast<Elem *>(static_cast<uint8_t *>(raw_data()) + off) = v;
        });
    }

    // Calls f(coords) for every element, dimension 0 fastest.
    template <typename F> void for_each_element(F &&f) const {
        int n = dimensions();
        std::vector<int> c(n);
        for (int d = 0; d < n; d++) {
            if (extent(d) <= 0) return;
            c[d] = min(d);
        }
        while (true) {
            f(c);
            int d = 0;
            for (; d < n; d++) {
                // (Relative to the min: the last coordinate may be 2^31 - 1.)
                if (c[d] - min(d) < extent(d) - 1) {
                    c[d]++;
                    break;
                }
                c[d] = min(d);
            }
            if (d == n) return;
        }
    }

private:
    // Buffer<T, D> holds D dimensions (a RuntimeError otherwise, as for the element type).
    void check_static_rank() const {
        if (Dims >= 0 && defined()) check_rank(Dims);
    }
    template <typename F> void for_each_offset(F &&f) const {
        for_each_element([&](const std::vector<int> &c) {
            f(storage_->offset_of(c.data(), static_cast<int>(c.size())));
        });
    }
};

} // namespace aicf

#endif
