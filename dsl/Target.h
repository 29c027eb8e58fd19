#ifndef AICF_TARGET_H
#define AICF_TARGET_H

// What to compile for: today the host CPU, with optional features ("host-fma"). GPU targets
// extend this.

#include <string>

namespace aicf {

class Target {
public:
    enum Arch { Host };
    enum Feature {
        // Let floating-point a * b + c become one fused multiply-add (one rounding instead
        // of two), as CUDA does by default. Results may then differ in the last bits between
        // schedules that group the operations differently.
        FMA = 1 << 0,
    };

    Target() = default;
    // Parses "host" or "host-fma"; raises CompileError naming the valid forms otherwise.
    explicit Target(const std::string &s);

    Arch arch() const { return arch_; }
    bool has_feature(Feature f) const { return (features_ & f) != 0; }
    Target with_feature(Feature f) const;
    std::string to_string() const;
    bool operator==(const Target &o) const { return arch_ == o.arch_ && features_ == o.features_; }

private:
    Arch arch_ = Host;
    unsigned features_ = 0;
};

// The host target, or the one named by AICF_TARGET.
Target get_target_from_environment();

} // namespace aicf

#endif
