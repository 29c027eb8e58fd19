#include "lowering/Names.h"

namespace aicf {
namespace lowering {

namespace {
// Between a Func's name and its stage number in the names of stages and loops. Func names
// hold no '.' (names users choose are checked for it), so the first occurrence is the one.
constexpr const char *kStageSeparator = ".s";
} // namespace

std::string stage_name(const std::string &func, int stage) {
    return func + kStageSeparator + std::to_string(stage);
}

std::string loop_name(const std::string &func, int stage, const std::string &var) {
    return stage_name(func, stage) + "." + var;
}

LoopNameParts parse_loop_name(const std::string &loop) {
    LoopNameParts parts;
    size_t sep = loop.find(kStageSeparator);
    if (sep == std::string::npos) return parts;
    size_t digits = sep + 2, dot = loop.find('.', digits);
    if (dot == std::string::npos || dot == digits) return parts;
    int stage = 0;
    for (size_t i = digits; i < dot; i++) {
        if (loop[i] < '0' || loop[i] > '9') return parts;
        stage = stage * 10 + (loop[i] - '0');
    }
    parts.func = loop.substr(0, sep);
    parts.stage = stage;
    parts.var = loop.substr(dot + 1);
    return parts;
}

std::string func_of_loop(const std::string &loop) {
    LoopNameParts parts = parse_loop_name(loop);
    return parts.func.empty() ? loop : parts.func;
}

std::string stage_of_loop(const std::string &loop) {
    LoopNameParts parts = parse_loop_name(loop);
    return parts.func.empty() ? loop : stage_name(parts.func, parts.stage);
}
std::string loop_min_name(const std::string &func, int stage, const std::string &var) {
    return loop_name(func, stage, var) + ".min";
}
std::string loop_max_name(const std::string &func, int stage, const std::string &var) {
    return loop_name(func, stage, var) + ".max";
}
std::string loop_extent_name(const std::string &func, int stage, const std::string &var) {
    return loop_name(func, stage, var) + ".extent";
}
std::string realized_min_name(const std::string &func, const std::string &arg) {
    return func + "." + arg + ".min_realized";
}
std::string realized_extent_name(const std::string &func, const std::string &arg) {
    return func + "." + arg + ".extent_realized";
}
std::string storage_name(const std::string &func, int value_index, int outputs) {
    return outputs == 1 ? func : func + "." + std::to_string(value_index);
}

} // namespace lowering
} // namespace aicf
