#include "lowering/Names.h"

namespace aicf {
namespace lowering {

std::string loop_name(const std::string &func, int stage, const std::string &var) {
    return func + ".s" + std::to_string(stage) + "." + var;
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
