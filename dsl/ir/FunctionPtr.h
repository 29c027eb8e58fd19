#ifndef AICF_IR_FUNCTION_PTR_H
#define AICF_IR_FUNCTION_PTR_H

// How a Call node refers to the Func it calls. A Func's own update definitions refer to it
// weakly, so a Func that reads itself (f(x) += f(x - 1)) does not keep itself alive.

#include "dsl/ir/IntrusivePtr.h"

namespace aicf {
namespace ir {

struct FunctionContents;
void intrusive_ptr_add_ref(FunctionContents *p);
void intrusive_ptr_release(FunctionContents *p);

struct FunctionPtr {
    IntrusivePtr<FunctionContents> strong;
    FunctionContents *weak = nullptr;

    FunctionPtr() = default;
    explicit FunctionPtr(FunctionContents *p) : strong(p) {}

    FunctionContents *get() const { return strong.defined() ? strong.get() : weak; }
    bool defined() const { return get() != nullptr; }
    FunctionPtr as_weak() const {
        FunctionPtr w;
        w.weak = get();
        return w;
    }
    bool same_as(const FunctionPtr &o) const { return get() == o.get(); }
};

} // namespace ir
} // namespace aicf

#endif
