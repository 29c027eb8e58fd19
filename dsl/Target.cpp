#include "dsl/Target.h"

#include "dsl/base/Error.h"

#include <cstdlib>
#include <sstream>
#include <vector>

namespace aicf {

namespace {

const char *valid_forms = "Valid targets: host, followed by any of -fma and "
                          "-cuda-sm_80, -cuda-sm_86, -cuda-sm_89, -cuda-sm_90, -cuda-sm_90a "
                          "(e.g. host-cuda-sm_90-fma).";

} // namespace

Target::Target(const std::string &s) {
    std::vector<std::string> parts;
    std::istringstream in(s);
    std::string part;
    while (std::getline(in, part, '-'))
        parts.push_back(part);
    user_assert(!parts.empty() && parts[0] == "host")
        << "Unknown target \"" << s << "\": it must start with \"host\". " << valid_forms;
    for (size_t i = 1; i < parts.size(); i++) {
        const std::string &p = parts[i];
        if (p == "fma") {
            features_ |= FMA;
            continue;
        }
        if (p == "cuda") {
            user_assert(i + 1 < parts.size() && parts[i + 1].rfind("sm_", 0) == 0)
                << "Target \"" << s << "\" names cuda without an architecture. " << valid_forms;
            std::string sm = parts[++i].substr(3);
            arch_specific_ = !sm.empty() && sm.back() == 'a';
            if (arch_specific_) sm.pop_back();
            int v = std::atoi(sm.c_str());
            bool known = v == 80 || v == 86 || v == 89 || v == 90;
            user_assert(known && (!arch_specific_ || v == 90) &&
                        sm.find_first_not_of("0123456789") == std::string::npos)
                << "Unknown CUDA architecture \"" << parts[i] << "\" in target \"" << s << "\". "
                << valid_forms;
            user_assert(cuda_sm_ == 0) << "Target \"" << s << "\" names two GPUs. " << valid_forms;
            cuda_sm_ = v;
            continue;
        }
        user_error << "Unknown feature \"" << p << "\" in target \"" << s << "\". " << valid_forms;
    }
}

Target Target::with_feature(Feature f) const {
    Target t = *this;
    t.features_ |= f;
    return t;
}

int64_t Target::max_shared_memory_per_block() const {
    switch (cuda_sm_) {
    case 80:
        return 163 * 1024;
    case 86:
    case 89:
        return 99 * 1024;
    case 90:
        return 227 * 1024;
    default:
        return 0;
    }
}

std::string Target::to_string() const {
    std::string s = "host";
    if (has_cuda()) s += "-cuda-sm_" + std::to_string(cuda_sm_) + (arch_specific_ ? "a" : "");
    if (has_feature(FMA)) s += "-fma";
    return s;
}

Target get_target_from_environment() {
    const char *env = std::getenv("AICF_TARGET");
    if (env && *env) return Target(env);
    return Target();
}

} // namespace aicf
