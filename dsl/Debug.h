#ifndef AICF_DSL_DEBUG_H
#define AICF_DSL_DEBUG_H

// AICF_DEBUG, read in one place:
//   1  what the compiler chose and why (a loop left unvectorized), and how long each lowering
//      pass and each LLVM phase took, per pipeline
//   2  also the IR after every lowering pass
//   3  also the optimized LLVM IR

#include <chrono>
#include <string>
#include <vector>

namespace aicf {

int debug_level();

// Times the phases of one compile and, at AICF_DEBUG >= 1, prints them on one line each to
// standard error when it goes out of scope, slowest first:
//   AICF: lowering out took 12.3 ms: bounds_inference 4.1, simplify 2.0, ...
class PhaseTimer {
public:
    explicit PhaseTimer(std::string what);
    ~PhaseTimer();
    PhaseTimer(const PhaseTimer &) = delete;
    PhaseTimer &operator=(const PhaseTimer &) = delete;

    // Ends the current phase, naming it. Phases with the same name add up.
    void phase(const std::string &name);
    // Starts the next phase now: the time since the last one (printing IR, say) counts for none.
    void skip();

private:
    using Clock = std::chrono::steady_clock;
    std::string what;
    Clock::time_point start, last;
    struct Entry {
        std::string name;
        double ms;
    };
    std::vector<Entry> entries;
    bool enabled;
};

} // namespace aicf

#endif
