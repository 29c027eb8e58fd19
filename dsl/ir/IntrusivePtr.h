#ifndef AICF_IR_INTRUSIVE_PTR_H
#define AICF_IR_INTRUSIVE_PTR_H

// A reference-counting pointer for objects that carry their own count. The pointee type
// provides `intrusive_ptr_add_ref(T *)` and `intrusive_ptr_release(T *)`, found by lookup in
// its namespace, so the pointer works with types that are only declared.

#include <atomic>
#include <utility>

namespace aicf {

// A base for simple reference-counted objects.
struct RefCounted {
    mutable std::atomic<int> ref_count{0};
    RefCounted() = default;
    RefCounted(const RefCounted &) : ref_count(0) {}
    virtual ~RefCounted() = default;
};

inline void intrusive_ptr_add_ref(const RefCounted *p) {
    p->ref_count.fetch_add(1, std::memory_order_relaxed);
}
// Deletes an object whose count reached zero. Objects released while another is being
// deleted wait in a per-thread list, so destroying a long chain (an expression a million
// operations deep) takes constant stack depth.
void destroy_ref_counted(const RefCounted *p);

inline void intrusive_ptr_release(const RefCounted *p) {
    if (p->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_ref_counted(p);
}

template <typename T> class IntrusivePtr {
public:
    IntrusivePtr() = default;
    IntrusivePtr(T *p) : ptr(p) { retain(); }
    IntrusivePtr(const IntrusivePtr &o) : ptr(o.ptr) { retain(); }
    IntrusivePtr(IntrusivePtr &&o) noexcept : ptr(o.ptr) { o.ptr = nullptr; }
    template <typename U> IntrusivePtr(const IntrusivePtr<U> &o) : ptr(o.get()) { retain(); }
    ~IntrusivePtr() { release(); }

    IntrusivePtr &operator=(const IntrusivePtr &o) {
        if (o.ptr != ptr) {
            T *old = ptr;
            ptr = o.ptr;
            retain();
            if (old) intrusive_ptr_release(old);
        }
        return *this;
    }
    IntrusivePtr &operator=(IntrusivePtr &&o) noexcept {
        std::swap(ptr, o.ptr);
        return *this;
    }

    T *get() const { return ptr; }
    T *operator->() const { return ptr; }
    T &operator*() const { return *ptr; }
    bool defined() const { return ptr != nullptr; }
    bool same_as(const IntrusivePtr &o) const { return ptr == o.ptr; }
    bool operator<(const IntrusivePtr &o) const { return ptr < o.ptr; }
    explicit operator bool() const { return ptr != nullptr; }

protected:
    T *ptr = nullptr;

private:
    void retain() {
        if (ptr) intrusive_ptr_add_ref(ptr);
    }
    void release() {
        if (ptr) intrusive_ptr_release(ptr);
        ptr = nullptr;
    }
};

} // namespace aicf

#endif
