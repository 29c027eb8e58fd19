#include "dsl/base/Error.h"

#include <exception>

namespace aicf {
namespace detail {

ErrorReport::ErrorReport(ErrorKind k, const char *file, int line, const char *condition) : kind(k) {
    if (kind == ErrorKind::Internal) {
        msg << "Internal error at " << file << ":" << line;
        if (condition) msg << " (condition failed: " << condition << ")";
        msg << ": ";
    }
}

ErrorReport::~ErrorReport() noexcept(false) {
    // Never throw while another exception unwinds the stack: that would terminate.
    if (std::uncaught_exceptions() > 0) return;
    std::string text = msg.str();
    switch (kind) {
    case ErrorKind::Compile:
        throw CompileError(text);
    case ErrorKind::Runtime:
        throw RuntimeError(text);
    case ErrorKind::Internal:
        throw InternalError(text);
    }
}

} // namespace detail
} // namespace aicf
