#include "backends/llvm/LLVMErrors.h"

#include "dsl/base/Error.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/ErrorHandling.h>

#include <mutex>
#include <new>

namespace aicf {
namespace backends {

namespace {

thread_local const LLVMErrorScope *innermost = nullptr;

// LLVM declares the handler must not return; throwing leaves through LLVM's frames, whose
// state the caller then drops with the module it was compiling.
[[noreturn]] void on_fatal_error(void *, const char *reason, bool) {
    internal_error << "LLVM failed while compiling " << describe_llvm_work() << ": " << reason;
    throw InternalError(reason); // not reached: internal_error throws
}

[[noreturn]] void on_bad_alloc(void *, const char *, bool) {
    throw std::bad_alloc();
}

} // namespace

void install_llvm_error_handlers() {
    static std::once_flag installed;
    std::call_once(installed, [] {
        llvm::install_fatal_error_handler(on_fatal_error, nullptr);
        llvm::install_bad_alloc_error_handler(on_bad_alloc, nullptr);
    });
}

LLVMErrorScope::LLVMErrorScope(std::string w) : what(std::move(w)), outer(innermost) {
    innermost = this;
}

LLVMErrorScope::~LLVMErrorScope() {
    innermost = outer;
}

std::string take_error(llvm::Error e) {
    std::string s;
    llvm::handleAllErrors(std::move(e),
                          [&](const llvm::ErrorInfoBase &info) { s += info.message(); });
    return s;
}

std::string describe_llvm_work() {
    return innermost ? innermost->what : std::string("LLVM work");
}

} // namespace backends
} // namespace aicf
