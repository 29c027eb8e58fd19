#ifndef AICF_BASE_ERROR_H
#define AICF_BASE_ERROR_H

// The exceptions AICF raises, and the macros the library uses to raise them.
//
//   CompileError  a mistake in an algorithm or a schedule: names the Func and the loop
//   RuntimeError  a bad buffer or a device failure when a pipeline runs
//   KernelFault   (a RuntimeError) a kernel broke a rule of the GPU on the simulator: an access
//                 outside a buffer or shared memory, a race, a barrier under divergence. With
//                 indices that come from data, the algorithm's own fault; otherwise the
//                 compiler accepted a schedule it should have refused (a bug)
//   InternalError a broken invariant inside AICF (a bug), with the file and line

#include <sstream>
#include <stdexcept>
#include <string>

namespace aicf {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string &msg) : std::runtime_error(msg) {}
};

class CompileError : public Error {
public:
    explicit CompileError(const std::string &msg) : Error(msg) {}
};

class RuntimeError : public Error {
public:
    explicit RuntimeError(const std::string &msg) : Error(msg) {}
};

class KernelFault : public RuntimeError {
public:
    explicit KernelFault(const std::string &msg) : RuntimeError(msg) {}
};

class InternalError : public Error {
public:
    explicit InternalError(const std::string &msg) : Error(msg) {}
};

namespace detail {

enum class ErrorKind { Compile, Runtime, Internal };

// Collects a message with operator<< and throws when it goes out of scope.
class ErrorReport {
public:
    ErrorReport(ErrorKind kind, const char *file, int line, const char *condition);
    ErrorReport(const ErrorReport &) = delete;
    ErrorReport &operator=(const ErrorReport &) = delete;
    ~ErrorReport() noexcept(false);

    template <typename T> ErrorReport &operator<<(const T &v) {
        msg << v;
        return *this;
    }

private:
    ErrorKind kind;
    std::ostringstream msg;
};

// Lets the macros below be used as `user_assert(c) << "..."` in a statement position.
struct Voidify {
    void operator&(ErrorReport &) {}
};

} // namespace detail
} // namespace aicf

#define AICF_ERROR_IF(kind, c, text)                                                               \
    (!(c))                                                                                         \
        ? (void)0                                                                                  \
        : ::aicf::detail::Voidify() & ::aicf::detail::ErrorReport(::aicf::detail::ErrorKind::kind, \
                                                                  __FILE__, __LINE__, text)

#define user_error AICF_ERROR_IF(Compile, true, nullptr)
#define user_assert(c) AICF_ERROR_IF(Compile, !(c), #c)
#define runtime_error_report AICF_ERROR_IF(Runtime, true, nullptr)
#define runtime_assert(c) AICF_ERROR_IF(Runtime, !(c), #c)
#define internal_error AICF_ERROR_IF(Internal, true, nullptr)
#define internal_assert(c) AICF_ERROR_IF(Internal, !(c), #c)

#endif
