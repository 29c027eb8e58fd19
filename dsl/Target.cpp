#include "dsl/Target.h"

#include "dsl/Error.h"

#include <cstdlib>

namespace aicf {

Target::Target(const std::string &s) {
    user_assert(s == "host") << "Unknown target \"" << s << "\". Valid targets: host.";
    arch_ = Host;
}

std::string Target::to_string() const { return "host"; }

Target get_target_from_environment() {
    const char *env = std::getenv("AICF_TARGET");
    if (env && *env) return Target(env);
    return Target();
}

} // namespace aicf
