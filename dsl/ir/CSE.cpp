#include "dsl/ir/CSE.h"

#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/SimplifyInternal.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace aicf {
namespace ir {

namespace {

inline void mix(size_t &h, size_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}

// Structural hashes of the subexpressions of the expressions being rewritten, each node's from
// its own fields and its children's hashes, computed once per node. Comparing two deep
// expressions of a chain (e = e * 3 + i, thousands of times) costs their depth; comparing
// their hashes first makes the maps below cost time in proportion to the expression.
class SubtreeHashes {
public:
    size_t of(const Expr &e) {
        auto it = memo.find(e.get());
        if (it != memo.end()) return it->second;
        size_t h = size_t(e.node_type()) + 1;
        const Type t = e.type();
        mix(h, (size_t(t.code) << 24) | (size_t(t.bits) << 16) | size_t(t.lanes));
        if (const IntImm *i = e.as<IntImm>()) mix(h, size_t(i->value));
        if (const UIntImm *u = e.as<UIntImm>()) mix(h, size_t(u->value));
        if (const FloatImm *f = e.as<FloatImm>()) mix(h, std::hash<double>()(f->value));
        if (const StringImm *s = e.as<StringImm>()) mix(h, std::hash<std::string>()(s->value));
        if (const Variable *v = e.as<Variable>()) mix(h, std::hash<std::string>()(v->name));
        if (const Load *l = e.as<Load>()) mix(h, std::hash<std::string>()(l->name));
        if (const Let *l = e.as<Let>()) mix(h, std::hash<std::string>()(l->name));
        if (const Call *c = e.as<Call>()) {
            mix(h, std::hash<std::string>()(c->name));
            mix(h, size_t(c->intrinsic));
            mix(h, size_t(c->value_index));
        }
        for (const Expr &child : children_of(e))
            mix(h, of(child));
        memo.emplace(e.get(), h);
        return h;
    }

private:
    std::unordered_map<const IRNode *, size_t> memo;
};

// An order on expressions by structure: their hashes, then (equal hashes) the expressions.
struct ExprLess {
    SubtreeHashes *hashes;
    bool operator()(const Expr &a, const Expr &b) const {
        if (a.same_as(b)) return false;
        const size_t ha = hashes->of(a), hb = hashes->of(b);
        if (ha != hb) return ha < hb;
        return simplify_detail::compare_exprs(a, b) < 0;
    }
};

// Whether an expression is cheap enough to recompute wherever it appears.
bool trivial(const Expr &e) {
    if (is_const(e) || e.as<Variable>() || e.as<StringImm>()) return true;
    if (const Broadcast *b = e.as<Broadcast>()) return trivial(b->value);
    if (const Ramp *r = e.as<Ramp>()) return trivial(r->base) && trivial(r->stride);
    return false;
}

// An alignment_hint (the base of a dense access's Ramp, which the code generators read
// there) marks an access rather than doing anything: it and the Ramp around it stay in place,
// and do not keep the expression around them from being shared.
bool is_hint(const Expr &e) {
    const Call *c = e.as<Call>();
    return c && c->is_intrinsic(Intrinsic::alignment_hint);
}
bool stays_in_place(const Expr &e) {
    const Ramp *r = e.as<Ramp>();
    return is_hint(e) || (r && is_hint(r->base));
}

// Whether an expression may not be moved: it has a side effect or binds a name.
bool pinned(const Expr &e) {
    bool binds = false, effects = false;
    visit_each_distinct<Let>(e, [&](const Let *) { binds = true; });
    visit_each_distinct<Call>(e, [&](const Call *c) {
        effects = effects || (!c->is_pure() && !c->is_intrinsic(Intrinsic::alignment_hint));
    });
    return binds || effects;
}

// Numbers the distinct subexpressions of one expression. A subexpression counts one use per
// occurrence of a distinct parent: the children of a repeated subexpression are used once,
// through it.
class Numbering : public IRMutator {
public:
    struct Entry {
        Expr expr;
        int uses = 0;
        int finished = -1; // post-order position: children finish first
    };
    explicit Numbering(SubtreeHashes &hashes) : ids(ExprLess{&hashes}) {}
    std::map<Expr, size_t, ExprLess> ids;
    std::vector<Entry> entries;

    using IRMutator::mutate;
    Expr mutate(const Expr &e) override {
        auto it = ids.find(e);
        if (it != ids.end()) {
            entries[it->second].uses++;
            return e;
        }
        size_t id = entries.size();
        ids.emplace(e, id);
        entries.push_back({e, 1, -1});
        if (!trivial(e)) IRMutator::mutate(e);
        entries[id].finished = next_finished++;
        return e;
    }

private:
    int next_finished = 0;
};

// Replaces the lifted subexpressions by their variables (but not the one being defined).
class Replace : public IRMutator {
public:
    Replace(const std::map<Expr, Expr, ExprLess> &names) : names(names) {}
    Expr root;

    using IRMutator::mutate;
    Expr mutate(const Expr &e) override {
        if (!e.same_as(root)) {
            auto it = names.find(e);
            if (it != names.end()) return it->second;
        }
        return IRMutator::mutate(e);
    }

private:
    const std::map<Expr, Expr, ExprLess> &names;
};

std::atomic<int> counter{0};

class CSEStmt : public IRMutator {
public:
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override { return common_subexpression_elimination(e); }
};

} // namespace

Expr common_subexpression_elimination(const Expr &e) {
    if (!e.defined() || trivial(e) || pinned(e)) return e;
    SubtreeHashes hashes;
    Numbering numbering(hashes);
    numbering.mutate(e);
    std::vector<const Numbering::Entry *> lifted;
    for (const Numbering::Entry &entry : numbering.entries) {
        if (entry.uses > 1 && !trivial(entry.expr) && !stays_in_place(entry.expr))
            lifted.push_back(&entry);
    }
    if (lifted.empty()) return e;
    // Children before parents, so each value can use the variables of the ones it contains.
    std::sort(lifted.begin(), lifted.end(),
              [](const Numbering::Entry *a, const Numbering::Entry *b) {
                  return a->finished < b->finished;
              });
    std::map<Expr, Expr, ExprLess> names(ExprLess{&hashes});
    std::vector<std::pair<std::string, Expr>> lets;
    for (const Numbering::Entry *entry : lifted) {
        std::string name = "cse." + std::to_string(counter++);
        names.emplace(entry->expr, Variable::make(entry->expr.type(), name));
        lets.emplace_back(name, entry->expr);
    }
    Replace replace(names);
    for (auto &let : lets) {
        replace.root = let.second;
        let.second = replace.mutate(let.second);
    }
    replace.root = Expr();
    Expr result = replace.mutate(e);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
        result = Let::make(it->first, it->second, result);
    return result;
}

Expr share_repeated_subexpressions(const Expr &e) {
    if (!e.defined()) return e;
    const size_t small = 4096;
    size_t graph = count_distinct_nodes(e, std::numeric_limits<size_t>::max());
    size_t tree = count_nodes(e, std::max(small, 16 * graph));
    if (tree <= small || tree <= 16 * graph) return e;
    return common_subexpression_elimination(e);
}

Stmt common_subexpression_elimination(const Stmt &s) {
    if (!s.defined()) return s;
    return CSEStmt().mutate(s);
}

} // namespace ir
} // namespace aicf
