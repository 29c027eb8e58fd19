#ifndef AICF_BACKENDS_LLVM_LLVM_ERRORS_H
#define AICF_BACKENDS_LLVM_LLVM_ERRORS_H

// LLVM reports a failure it cannot recover from (a fatal error in a backend, memory it cannot
// allocate) through handlers that by default end the process. AICF installs its own: a fatal
// error becomes an InternalError that says what was being compiled, and a failed allocation
// a std::bad_alloc, both thrown to the caller of realize() or compile_to_ptx().

#include <string>

namespace llvm {
class Error;
}

namespace aicf {
namespace backends {

// Installs the handlers, once per process. Called before any LLVM work.
void install_llvm_error_handlers();

// Names what the current thread compiles while it lives, for the message of a fatal error:
// "the host code of pipeline blur", "kernel blur_k0_blur". Scopes nest; the innermost names.
class LLVMErrorScope {
public:
    explicit LLVMErrorScope(std::string what);
    ~LLVMErrorScope();
    LLVMErrorScope(const LLVMErrorScope &) = delete;
    LLVMErrorScope &operator=(const LLVMErrorScope &) = delete;

private:
    std::string what;
    const LLVMErrorScope *outer;
    friend std::string describe_llvm_work();
};

// What the innermost scope of this thread names ("LLVM work" outside any).
std::string describe_llvm_work();

// The messages of a recoverable llvm::Error (which this consumes).
std::string take_error(llvm::Error e);

} // namespace backends
} // namespace aicf

#endif
