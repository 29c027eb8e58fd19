#include "dsl/Target.h"

#include "dsl/Error.h"

#include <cstdlib>
#include <sstream>

namespace aicf {

Target::Target(const std::string &s) {
    std::istringstream in(s);
    std::string part;
    bool first = true;
    while (std::getline(in, part, '-')) {
        if (first) {
            user_assert(part == "host") << "Unknown target \"" << s << "\": it must start with "
                                        << "\"host\". Valid targets: host, host-fma.";
            arch_ = Host;
            first = false;
            continue;
        }
        user_assert(part == "fma") << "Unknown feature \"" << part << "\" in target \"" << s
                                   << "\". Valid features: fma.";
        features_ |= FMA;
    }
    user_assert(!first) << "Empty target string. Valid targets: host, host-fma.";
}

Target Target::with_feature(Feature f) const {
    Target t = *this;
    t.features_ |= f;
    return t;
}

std::string Target::to_string() const {
    std::string s = "host";
    if (has_feature(FMA)) s += "-fma";
    return s;
}

Target get_target_from_environment() {
    const char *env = std::getenv("AICF_TARGET");
    if (env && *env) return Target(env);
    return Target();
}

} // namespace aicf
