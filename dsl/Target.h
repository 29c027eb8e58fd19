#ifndef AICF_TARGET_H
#define AICF_TARGET_H

// What to compile for. Today: the host CPU. GPU targets extend this.

#include <string>

namespace aicf {

class Target {
public:
    enum Arch { Host };

    Target() = default;
    // Parses "host"; raises CompileError naming the valid forms otherwise.
    explicit Target(const std::string &s);

    Arch arch() const { return arch_; }
    std::string to_string() const;
    bool operator==(const Target &o) const { return arch_ == o.arch_; }

private:
    Arch arch_ = Host;
};

// The host target, or the one named by AICF_TARGET.
Target get_target_from_environment();

} // namespace aicf

#endif
