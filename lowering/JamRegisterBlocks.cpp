#include "lowering/JamRegisterBlocks.h"

#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The way from a loop's body down to the one loop R inside it: lets, allocations,
// producer/consumer marks and blocks, each block split into the statements before and after
// the part that leads on.
struct Level {
    Stmt node; // a LetStmt, Allocate, ProducerConsumer or Block
    std::vector<Stmt> before, after;
};

bool contains_loop(const Stmt &s) {
    bool found = false;
    visit_each<For>(s, [&](const For *) { found = true; });
    return found;
}

// Fills `levels` and returns R, or null when the body does not lead to exactly one serial
// loop through the nodes above.
const For *find_spine(const Stmt &s, std::vector<Level> &levels) {
    if (const LetStmt *op = s.as<LetStmt>()) {
        levels.push_back({s, {}, {}});
        return find_spine(op->body, levels);
    }
    if (const Allocate *op = s.as<Allocate>()) {
        levels.push_back({s, {}, {}});
        return find_spine(op->body, levels);
    }
    if (const ProducerConsumer *op = s.as<ProducerConsumer>()) {
        levels.push_back({s, {}, {}});
        return find_spine(op->body, levels);
    }
    if (s.as<Block>()) {
        const std::vector<Stmt> parts = Block::parts(s);
        int on = -1;
        for (size_t i = 0; i < parts.size(); i++) {
            if (!contains_loop(parts[i])) continue;
            if (on >= 0) return nullptr;
            on = int(i);
        }
        if (on < 0) return nullptr;
        Level level{s, {}, {}};
        level.before.assign(parts.begin(), parts.begin() + on);
        level.after.assign(parts.begin() + on + 1, parts.end());
        levels.push_back(level);
        return find_spine(parts[size_t(on)], levels);
    }
    if (const For *op = s.as<For>()) return op->for_type == ForType::Serial ? op : nullptr;
    return nullptr;
}

// What a loop's body defines, stores and loads, and whether it holds anything the pass does
// not move (loops other than R, calls with effects, evaluated expressions).
class Survey : public IRVisitor {
public:
    std::set<std::string> defined, allocated, stored, loaded;
    bool movable = true;

private:
    using IRVisitor::visit;
    void visit(const LetStmt *op) override {
        defined.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        defined.insert(op->name);
        allocated.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        stored.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        loaded.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        if (!op->is_pure()) movable = false;
        IRVisitor::visit(op);
    }
    void visit(const AssertStmt *op) override {
        // The message (a runtime_error call) runs only when the assertion fails.
        op->condition.accept(this);
    }
    void visit(const Evaluate *) override { movable = false; }
    void visit(const Provide *) override { movable = false; }
    void visit(const Realize *) override { movable = false; }
};

// R's body: vector stores to allocations of the spine, at indices that do not move with R,
// each reading back what it stores. Counts the distinct stored vectors (the chains).
class ChainBody : public IRVisitor {
public:
    ChainBody(const std::string &loop, const std::set<std::string> &blocks)
        : loop(loop), blocks(blocks) {}
    bool ok = true;
    std::set<std::string> chains;

private:
    using IRVisitor::visit;
    const std::string &loop;
    const std::set<std::string> &blocks;

    void visit(const Store *op) override {
        if (!blocks.count(op->name) || op->value.type().lanes < 2 || uses_var(op->index, loop) ||
            (op->predicate.defined() && !is_true(op->predicate))) {
            ok = false;
            return;
        }
        bool reads_back = false;
        visit_each<Load>(op->value, [&](const Load *l) { reads_back |= l->name == op->name; });
        if (!reads_back) ok = false;
        chains.insert(op->name + "[" + to_string(op->index) + "]");
        IRVisitor::visit(op);
    }
    void visit(const For *) override { ok = false; }
    void visit(const IfThenElse *) override { ok = false; }
    void visit(const Allocate *) override { ok = false; }
    void visit(const AssertStmt *) override { ok = false; }
};

// Where the stores to buffers outside the loop's own allocations are: not in R, not before
// it, and after R at one level only.
bool outside_stores_in_one_place(const std::vector<Level> &levels,
                                 const std::set<std::string> &allocated) {
    int at = -1;
    for (size_t l = 0; l < levels.size(); l++) {
        for (int side = 0; side < 2; side++) {
            for (const Stmt &s : side == 0 ? levels[l].before : levels[l].after) {
                bool outside = false;
                visit_each<Store>(s,
                                  [&](const Store *op) { outside |= !allocated.count(op->name); });
                if (!outside) continue;
                if (side == 0 || (at >= 0 && at != int(l))) return false;
                at = int(l);
            }
        }
    }
    return true;
}

// Gives the lets and allocations a body defines new names (name + suffix), so that copies of
// the body can share one scope.
class Rename : public IRMutator {
public:
    explicit Rename(const std::string &suffix) : suffix(suffix) {}

private:
    using IRMutator::visit;
    std::string suffix;
    Scope<std::string> names;

    std::string renamed(const std::string &name) const {
        return names.contains(name) ? names.get(name) : name;
    }
    Stmt visit(const LetStmt *op) override {
        Expr value = mutate(op->value);
        ScopedBinding<std::string> bind(names, op->name, op->name + suffix);
        Stmt body = mutate(op->body);
        return LetStmt::make(op->name + suffix, value, body);
    }
    Expr visit(const Let *op) override {
        Expr value = mutate(op->value);
        ScopedBinding<std::string> bind(names, op->name, op->name);
        return Let::make(op->name, value, mutate(op->body));
    }
    Stmt visit(const Allocate *op) override {
        std::vector<Expr> extents;
        for (const Expr &e : op->extents)
            extents.push_back(mutate(e));
        ScopedBinding<std::string> bind(names, op->name, op->name + suffix);
        Stmt body = mutate(op->body);
        return Allocate::make(op->name + suffix, op->type, op->memory_type, extents, body);
    }
    Expr visit(const Variable *op) override {
        if (!names.contains(op->name)) return op;
        return Variable::make(op->type, names.get(op->name));
    }
    Expr visit(const Load *op) override {
        Expr index = mutate(op->index);
        Expr predicate = op->predicate.defined() ? mutate(op->predicate) : Expr();
        return Load::make(op->type, renamed(op->name), index, predicate, op->param);
    }
    Stmt visit(const Store *op) override {
        Expr value = mutate(op->value), index = mutate(op->index);
        Expr predicate = op->predicate.defined() ? mutate(op->predicate) : Expr();
        return Store::make(renamed(op->name), value, index, predicate, op->param);
    }
    Stmt visit(const Free *op) override { return Free::make(renamed(op->name)); }
};

class JamRegisterBlocks : public IRMutator {
public:
    JamRegisterBlocks(int max_chains, int max_registers)
        : max_chains(max_chains), max_registers(max_registers) {}

private:
    using IRMutator::visit;
    int max_chains, max_registers;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        Stmt loop = body.same_as(op->body)
                        ? Stmt(op)
                        : For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, body);
        Stmt jammed = jam(loop.as<For>());
        return jammed.defined() ? jammed : loop;
    }

    // The jammed loop, or undefined where the loop does not qualify.
    Stmt jam(const For *op) const {
        const std::optional<int64_t> extent = as_const_int(op->extent);
        if (op->for_type != ForType::Serial || !extent || *extent < 2 || *extent > 4) return {};
        const int copies = int(*extent);
        std::vector<Level> levels;
        const For *inner = find_spine(op->body, levels);
        if (!inner) return {};
        Survey survey;
        op->body.accept(&survey);
        if (!survey.movable) return {};
        std::set<std::string> defined = survey.defined;
        defined.insert(op->name);
        if (uses_vars(inner->min, defined) || uses_vars(inner->extent, defined)) return {};
        // The register blocks: allocations on the way down to R, on the stack or in registers.
        std::set<std::string> blocks;
        for (const Level &l : levels) {
            const Allocate *a = l.node.as<Allocate>();
            if (a &&
                (a->memory_type == MemoryType::Stack || a->memory_type == MemoryType::Register))
                blocks.insert(a->name);
        }
        ChainBody chain(inner->name, blocks);
        inner->body.accept(&chain);
        if (!chain.ok || chain.chains.empty() || int(chain.chains.size()) > max_chains ||
            copies * int(chain.chains.size()) > max_registers)
            return {};
        // What the body stores outside its own allocations, no part of it reads.
        for (const std::string &name : survey.stored) {
            if (!survey.allocated.count(name) && survey.loaded.count(name)) return {};
        }
        if (!outside_stores_in_one_place(levels, survey.allocated)) return {};

        // The copies, each with its own names, and their ways down to R.
        std::vector<std::vector<Level>> spines(static_cast<size_t>(copies));
        std::vector<const For *> inners(static_cast<size_t>(copies));
        std::vector<Stmt> bodies;
        for (int i = 0; i < copies; i++) {
            Expr at = simplify(Add::make(op->min, make_const(op->min.type(), int64_t(i))));
            bodies.push_back(
                Rename(".jam" + std::to_string(i))(substitute(op->name, at, op->body)));
            inners[size_t(i)] = find_spine(bodies.back(), spines[size_t(i)]);
            internal_assert(inners[size_t(i)] && spines[size_t(i)].size() == levels.size())
                << "jam_register_blocks: a copy of " << op->name << " lost its shape";
        }
        return build(spines, inners, 0);
    }

    static Stmt build(const std::vector<std::vector<Level>> &spines,
                      const std::vector<const For *> &inners, size_t level) {
        const size_t copies = spines.size();
        if (level == spines[0].size()) {
            std::vector<Stmt> bodies;
            for (const For *f : inners)
                bodies.push_back(f->body);
            const For *r = inners[0];
            return For::make(r->name, r->min, r->extent, r->for_type, r->gpu_dim,
                             Block::make(bodies));
        }
        if (spines[0][level].node.as<Block>()) {
            std::vector<Stmt> parts;
            for (size_t i = 0; i < copies; i++)
                for (const Stmt &s : spines[i][level].before)
                    parts.push_back(s);
            parts.push_back(build(spines, inners, level + 1));
            for (size_t i = 0; i < copies; i++)
                for (const Stmt &s : spines[i][level].after)
                    parts.push_back(s);
            return Block::make(parts);
        }
        // Lets, allocations and marks: copy 0's around copy 1's, and so on.
        Stmt s = build(spines, inners, level + 1);
        for (size_t i = copies; i-- > 0;) {
            const Stmt &node = spines[i][level].node;
            if (const LetStmt *l = node.as<LetStmt>()) {
                s = LetStmt::make(l->name, l->value, s);
            } else if (const Allocate *a = node.as<Allocate>()) {
                s = Allocate::make(a->name, a->type, a->memory_type, a->extents, s);
            } else {
                const ProducerConsumer *pc = node.as<ProducerConsumer>();
                s = ProducerConsumer::make(pc->name, pc->is_producer, s);
            }
        }
        return s;
    }
};

} // namespace

Stmt jam_register_blocks(const Stmt &s, int max_chains, int max_registers) {
    return JamRegisterBlocks(max_chains, max_registers)(s);
}

} // namespace lowering
} // namespace aicf
