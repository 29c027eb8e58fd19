#include "dsl/Var.h"

#include "dsl/Names.h"

#include "dsl/base/Error.h"

#include <atomic>
#include <map>
#include <mutex>

namespace aicf {

namespace detail {

std::string unique_name(const std::string &prefix) {
    static std::mutex lock;
    static std::map<std::string, int> counters;
    std::lock_guard<std::mutex> guard(lock);
    return prefix + std::to_string(counters[prefix]++);
}

void check_user_name(const std::string &name, const char *what) {
    user_assert(!name.empty()) << "A " << what << " cannot have an empty name.";
    user_assert(name.find_first_of(".$") == std::string::npos)
        << "The " << what << " name \"" << name << "\" contains '.' or '$'. AICF reserves these "
        << "characters for the names it derives (such as "
        << loop_name(name.substr(0, name.find_first_of(".$")), 0, "x")
        << "); choose a name of letters, "
        << "digits and '_'.";
}

} // namespace detail

Var::Var() : name_(detail::unique_name("v")) {}

Var::Var(const std::string &name) : name_(name) {
    detail::check_user_name(name, "Var");
}

Var::operator ir::Expr() const {
    return ir::Variable::make(ir::Int(32), name_);
}

} // namespace aicf
