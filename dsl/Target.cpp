#include "dsl/Target.h"

#include "dsl/base/Error.h"

#include <cstdlib>
#include <optional>
#include <sstream>
#include <vector>

namespace aicf {

namespace {

const char *valid_forms =
    "Valid targets: a CPU (host, the one compiling, or x86-64, x86-64-v2, "
    "x86-64-v3, x86-64-v4), followed by any of -fma, -libm, -reassoc and -cuda-sm_80, "
    "-cuda-sm_86, -cuda-sm_89, -cuda-sm_90, -cuda-sm_90a (e.g. "
    "host-cuda-sm_90-fma, x86-64-v3-cuda-sm_80).";

const char *const cpu_names[] = {"", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};

} // namespace

Target::Target(const std::string &s) {
    std::vector<std::string> parts;
    std::istringstream in(s);
    std::string part;
    while (std::getline(in, part, '-'))
        parts.push_back(part);
    size_t first = 1;
    if (parts.size() >= 2 && parts[0] == "x86" && parts[1] == "64") {
        arch_ = X86_64;
        first = 2;
        if (parts.size() > 2 && parts[2].size() == 2 && parts[2][0] == 'v') {
            const char level = parts[2][1];
            user_assert(level >= '2' && level <= '4')
                << "Unknown x86-64 level \"" << parts[2] << "\" in target \"" << s << "\". "
                << valid_forms;
            arch_ = Arch(X86_64 + (level - '1'));
            first = 3;
        }
    } else {
        user_assert(!parts.empty() && parts[0] == "host")
            << "Unknown target \"" << s << "\": it must start with a CPU. " << valid_forms;
    }
    // getline drops an empty last part: "host-" has one ("host-fma-" two).
    user_assert(s.empty() || s.back() != '-')
        << "Target \"" << s << "\" ends with '-': features follow a '-', and none is empty. "
        << valid_forms;
    for (size_t i = first; i < parts.size(); i++) {
        const std::string &p = parts[i];
        const std::pair<const char *, int> flags[] = {
            {"fma", FMA}, {"libm", LibraryMath}, {"reassoc", Reassociate}};
        bool flag = false;
        for (const auto &[name, bit] : flags) {
            if (p != name) continue;
            user_assert(!(features_ & bit))
                << "Target \"" << s << "\" names the feature " << p << " twice. " << valid_forms;
            features_ |= bit;
            flag = true;
        }
        if (flag) continue;
        if (p == "cuda") {
            user_assert(i + 1 < parts.size())
                << "Target \"" << s << "\" names cuda without an architecture. " << valid_forms;
            user_assert(parts[i + 1].rfind("sm_", 0) == 0)
                << "Unknown CUDA architecture \"" << parts[i + 1] << "\" in target \"" << s
                << "\": architectures are written sm_ and the compute capability. " << valid_forms;
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

Target Target::with_arch(Arch a) const {
    Target t = *this;
    t.arch_ = a;
    return t;
}

std::string Target::cpu_name() const {
    return cpu_names[arch_];
}

std::string Target::missing_cpu_features() const {
    std::string missing;
#if defined(__x86_64__) && defined(__GNUC__)
    // What each level adds to the one below it (the x86-64 psABI), as the compiler's CPU
    // detection names the features (it also checks that the OS saves the AVX registers).
    struct CPUFeature {
        Arch level;
        const char *name;
        bool present;
    };
    __builtin_cpu_init();
#define AICF_CPU_FEATURE(level, name)                                                              \
    { level, name, __builtin_cpu_supports(name) != 0 }
    static const CPUFeature features[] = {
        AICF_CPU_FEATURE(X86_64_v2, "sse3"),     AICF_CPU_FEATURE(X86_64_v2, "ssse3"),
        AICF_CPU_FEATURE(X86_64_v2, "sse4.1"),   AICF_CPU_FEATURE(X86_64_v2, "sse4.2"),
        AICF_CPU_FEATURE(X86_64_v2, "popcnt"),   AICF_CPU_FEATURE(X86_64_v3, "avx"),
        AICF_CPU_FEATURE(X86_64_v3, "avx2"),     AICF_CPU_FEATURE(X86_64_v3, "bmi"),
        AICF_CPU_FEATURE(X86_64_v3, "bmi2"),     AICF_CPU_FEATURE(X86_64_v3, "f16c"),
        AICF_CPU_FEATURE(X86_64_v3, "fma"),      AICF_CPU_FEATURE(X86_64_v3, "lzcnt"),
        AICF_CPU_FEATURE(X86_64_v3, "movbe"),    AICF_CPU_FEATURE(X86_64_v4, "avx512f"),
        AICF_CPU_FEATURE(X86_64_v4, "avx512bw"), AICF_CPU_FEATURE(X86_64_v4, "avx512cd"),
        AICF_CPU_FEATURE(X86_64_v4, "avx512dq"), AICF_CPU_FEATURE(X86_64_v4, "avx512vl"),
    };
#undef AICF_CPU_FEATURE
    // AICF_CPU_LEVEL caps the level this CPU counts as running, to try a library's builds for
    // lesser machines on this one.
    Arch cap = X86_64_v4;
    const char *env = std::getenv("AICF_CPU_LEVEL");
    if (env && *env) {
        std::optional<Target> level;
        try {
            level = Target(env);
        } catch (const CompileError &) {
        }
        user_assert(level && level->arch() != Host && !level->has_cuda() && level->features_ == 0)
            << "AICF_CPU_LEVEL=" << env << " is not an x86-64 level (x86-64, x86-64-v2, "
            << "x86-64-v3, x86-64-v4).";
        cap = level->arch();
    }
    bool capped = false;
    for (const CPUFeature &f : features) {
        if (f.level <= arch_ && (!f.present || f.level > cap))
            missing += std::string(missing.empty() ? "" : ", ") + f.name;
        capped = capped || (f.level <= arch_ && f.present && f.level > cap);
    }
    if (capped) missing += std::string(" (as AICF_CPU_LEVEL=") + env + " says)";
#else
    if (arch_ != Host) missing = "an x86-64 CPU";
#endif
    return missing;
}

Target::Arch Target::highest_level_here() {
    for (int a = X86_64_v4; a > X86_64; a--)
        if (Target().with_arch(Arch(a)).missing_cpu_features().empty()) return Arch(a);
    return X86_64;
}

Target Target::with_feature(Feature f) const {
    Target t = *this;
    t.features_ |= f;
    return t;
}

int Target::max_threads_per_multiprocessor() const {
    if (!has_cuda()) return 0;
    return cuda_sm_ == 86 || cuda_sm_ == 89 ? 1536 : 2048;
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
    std::string s = arch_ == Host ? "host" : cpu_name();
    if (has_cuda()) s += "-cuda-sm_" + std::to_string(cuda_sm_) + (arch_specific_ ? "a" : "");
    if (has_feature(FMA)) s += "-fma";
    if (has_feature(LibraryMath)) s += "-libm";
    if (has_feature(Reassociate)) s += "-reassoc";
    return s;
}

Target get_target_from_environment() {
    const char *env = std::getenv("AICF_TARGET");
    if (env && *env) return Target(env);
    return Target();
}

} // namespace aicf
