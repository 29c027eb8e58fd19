#include "dsl/Var.h"

#include "dsl/Names.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"

#include <atomic>
#include <cctype>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace aicf {

namespace detail {

namespace {

// The names handed out so far (a counter per prefix), and every name a user chose: a fresh
// name skips those, so that an unnamed Buffer is never called "b1" beside the user's own b1.
struct NameRegistry {
    std::mutex lock;
    std::map<std::string, int> counters;
    std::set<std::string> chosen;
    std::set<std::string> taken_after; // chosen after unique_name had handed them out

    bool handed_out(const std::string &name) {
        const size_t digits = name.find_last_not_of("0123456789") + 1;
        if (digits == 0 || digits == name.size() || name.size() - digits > 9) return false;
        auto it = counters.find(name.substr(0, digits));
        return it != counters.end() && std::stoi(name.substr(digits)) < it->second &&
               !chosen.count(name);
    }
};

NameRegistry &names() {
    static NameRegistry *r = new NameRegistry; // outlives the static objects that name things
    return *r;
}

} // namespace

std::string unique_name(const std::string &prefix) {
    NameRegistry &r = names();
    std::lock_guard<std::mutex> guard(r.lock);
    std::string name;
    do {
        name = prefix + std::to_string(r.counters[prefix]++);
    } while (r.chosen.count(name));
    return name;
}

bool is_generated_name(const std::string &name) {
    NameRegistry &r = names();
    std::lock_guard<std::mutex> guard(r.lock);
    return r.taken_after.count(name) > 0;
}

void check_schedule_size(const ir::Expr &e, const std::string &what) {
    if (!e.defined()) return;
    std::string loop_var, func;
    ir::visit_each<ir::Variable>(e, [&](const ir::Variable *v) {
        if (!v->param.defined() && loop_var.empty()) loop_var = v->name;
    });
    ir::visit_each<ir::Call>(e, [&](const ir::Call *c) {
        if ((c->call_type == ir::Call::Func || c->call_type == ir::Call::Image) && func.empty())
            func = c->name;
    });
    user_assert(loop_var.empty() && func.empty())
        << what << " is " << e << ", which "
        << (loop_var.empty() ? "reads " + func : "uses the variable " + loop_var)
        << ": a schedule's sizes must be known before any loop runs. Use constants, Params "
        << "and the shapes of inputs (in.width(), in.dim(1).extent()).";
    // Loops run over 32-bit indices: a wider size would be cut to its low 32 bits.
    const ir::Type t = e.type();
    std::optional<int64_t> value = ir::as_const_int(e);
    if (auto u = ir::as_const_uint(e)) value = *u > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(*u);
    if (value) {
        user_assert(*value >= INT32_MIN && *value <= INT32_MAX)
            << what << " is " << *value << ", beyond the 32-bit range of loop indices "
            << "([-2^31, 2^31 - 1]).";
    } else {
        user_assert(!t.is_int_or_uint() || (t.is_int() && t.bits <= 32) ||
                    (t.is_uint() && t.bits < 32))
            << what << " is " << e << ", of type " << t << ", but loops run over 32-bit "
            << "indices. Check its range and give cast<int>() of it.";
    }
}

void check_user_name(const std::string &name, const char *what) {
    user_assert(!name.empty()) << "A " << what << " cannot have an empty name.";
    user_assert(name.find_first_of(".$") == std::string::npos)
        << "The " << what << " name \"" << name << "\" contains '.' or '$'. AICF reserves these "
        << "characters for the names it derives (such as "
        << loop_name(name.substr(0, name.find_first_of(".$")), 0, "x")
        << "); choose a name of letters, "
        << "digits and '_'.";
    // Names become symbols of the generated code (PTX, object files, C headers), which take
    // nothing else.
    const size_t bad = name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_");
    user_assert(bad == std::string::npos && !std::isdigit(static_cast<unsigned char>(name[0])))
        << "The " << what << " name \"" << name << "\" "
        << (bad == std::string::npos
                ? std::string("starts with a digit")
                : "contains " + (std::isprint(static_cast<unsigned char>(name[bad]))
                                     ? "'" + std::string(1, name[bad]) + "'"
                                     : std::string("a byte that is not a printable ASCII "
                                                   "character")))
        << "; names become symbols of the generated code: choose one of letters, digits and '_', "
        << "not starting with a digit.";
    NameRegistry &r = names();
    std::lock_guard<std::mutex> guard(r.lock);
    if (r.handed_out(name)) r.taken_after.insert(name);
    r.chosen.insert(name);
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
