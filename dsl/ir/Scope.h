#ifndef AICF_IR_SCOPE_H
#define AICF_IR_SCOPE_H

// A map from names to values with shadowing: push binds a name, pop restores what it hid.

#include "dsl/base/Error.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace ir {

template <typename T> class Scope {
public:
    void push(const std::string &name, const T &value) { table[name].push_back(value); }
    void pop(const std::string &name) {
        auto it = table.find(name);
        internal_assert(it != table.end() && !it->second.empty()) << "Scope::pop of " << name;
        it->second.pop_back();
        if (it->second.empty()) table.erase(it);
    }
    bool contains(const std::string &name) const { return table.count(name) > 0; }
    const T &get(const std::string &name) const {
        auto it = table.find(name);
        internal_assert(it != table.end()) << "Scope has no " << name;
        return it->second.back();
    }
    const T *find(const std::string &name) const {
        auto it = table.find(name);
        return it == table.end() ? nullptr : &it->second.back();
    }
    bool empty() const { return table.empty(); }
    // Visits the innermost binding of every name.
    template <typename F> void for_each(F &&f) const {
        for (const auto &kv : table)
            f(kv.first, kv.second.back());
    }

private:
    std::map<std::string, std::vector<T>> table;
};

// Binds a name for the lifetime of this object.
template <typename T> class ScopedBinding {
public:
    ScopedBinding(Scope<T> &s, const std::string &n, const T &v) : scope(s), name(n) {
        scope.push(name, v);
    }
    ~ScopedBinding() { scope.pop(name); }
    ScopedBinding(const ScopedBinding &) = delete;
    ScopedBinding &operator=(const ScopedBinding &) = delete;

private:
    Scope<T> &scope;
    std::string name;
};

} // namespace ir
} // namespace aicf

#endif
