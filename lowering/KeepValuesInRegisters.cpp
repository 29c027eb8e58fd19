#include "lowering/KeepValuesInRegisters.h"

#include "dsl/Names.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <map>
#include <set>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The lets in scope, each bound to its value written in the variables around the statements
// being compared, or undefined where that value cannot move (it reads memory, or has effects):
// such a let, and a loop variable, is a name of its own.
using LetValues = Scope<Expr>;

bool movable(const Expr &e) {
    bool ok = true;
    visit_each<Load>(e, [&](const Load *) { ok = false; });
    visit_each<Call>(e, [&](const Call *c) { ok = ok && c->is_pure(); });
    return ok;
}

Expr in_outer_terms(const Expr &e, const LetValues &lets) {
    if (!e.defined()) return e;
    std::map<std::string, Expr> values;
    for (const std::string &v : free_vars(e)) {
        const Expr *value = lets.find(v);
        if (value && value->defined()) values[v] = *value;
    }
    return values.empty() ? e : substitute(values, e);
}

void bind(LetValues &lets, const std::string &name, const Expr &value,
          std::set<std::string> *opaque = nullptr) {
    Expr v = movable(value) ? in_outer_terms(value, lets) : Expr();
    if (!v.defined() && opaque) opaque->insert(name);
    lets.push(name, v);
}

// One access: which buffer, and the element (or elements) it reads or writes, in outer terms.
struct ElementKey {
    std::string buffer;
    Type type;
    Expr index, predicate;
    Parameter param;
    size_t hash = 0;
    // The read as the program first wrote it, where that can stand before the statement
    // (it names nothing the statement binds): what the bound Load says, for readers.
    Expr written_index, written_predicate;

    bool same(const ElementKey &o) const {
        return hash == o.hash && buffer == o.buffer && type == o.type && equal(index, o.index) &&
               equal(predicate, o.predicate);
    }
    bool mentions_any(const std::set<std::string> &names) const {
        if (names.empty()) return false;
        for (const std::string &v : free_vars(index))
            if (names.count(v)) return true;
        for (const std::string &v : free_vars(predicate))
            if (names.count(v)) return true;
        return false;
    }
};

ElementKey key_of(const std::string &buffer, Type type, const Expr &index, const Expr &predicate,
                  const Parameter &param, const LetValues &lets) {
    ElementKey k;
    k.buffer = buffer;
    k.type = type;
    k.index = in_outer_terms(index, lets);
    k.predicate = in_outer_terms(predicate, lets);
    k.param = param;
    k.hash = std::hash<std::string>()(k.buffer) ^ (structural_hash(k.index) * 31u) ^
             (structural_hash(k.predicate) * 1009u) ^ size_t(k.type.lanes);
    return k;
}
ElementKey key_of(const Load *op, const LetValues &lets) {
    return key_of(op->name, op->type, op->index, op->predicate, op->param, lets);
}
ElementKey key_of(const Store *op, const LetValues &lets) {
    return key_of(op->name, op->value.type(), op->index, op->predicate, op->param, lets);
}

// What one statement of a sequence reads, writes and binds.
struct StmtSummary {
    std::vector<ElementKey> certain;                 // reads made whenever the statement runs
    std::vector<std::pair<ElementKey, int>> reads;   // every read, weighted 2 inside a loop
    std::set<std::string> writes;                    // buffers stored to or allocated
    std::vector<std::pair<ElementKey, bool>> stores; // every store, and whether it is certain
    std::set<std::string> atomics;                   // buffers updated atomically
    // The first access of each buffer in program order: a read or a store, certain or not.
    enum class First { CertainRead, UncertainRead, CertainStore, UncertainStore };
    std::map<std::string, First> first_access;
    std::set<std::string> bound; // loop variables and lets that cannot move
    bool barrier = false;
    // Where the statement is a loop whose extent is known only at run time, summarized as if
    // it runs: the condition under which it does (extent > 0).
    Expr runs_if;

    int weight_of(const ElementKey &k) const {
        for (const auto &r : reads)
            if (r.first.same(k)) return r.second;
        return 0;
    }
};

bool contains_key(const std::vector<ElementKey> &keys, const ElementKey &k) {
    for (const ElementKey &x : keys)
        if (x.same(k)) return true;
    return false;
}

class Summarize : public IRVisitor {
public:
    // With `runs`, the statement summarized (a loop, or a guard without an else around one)
    // is taken to run its body at least once, and so are the loops and guards nested directly
    // in it: the summary says under which condition in runs_if.
    Summarize(LetValues &lets, StmtSummary &out, const IRNode *runs = nullptr)
        : lets(lets), out(out), runs_next(runs) {}
    using IRVisitor::visit;

private:
    LetValues &lets;
    StmtSummary &out;
    const IRNode *runs_next; // the next loop or guard of the nest taken to run

    void runs_if(const Expr &condition) {
        out.runs_if =
            simplify(out.runs_if.defined() ? make_and(out.runs_if, condition) : condition);
    }
    // The loop or guard directly inside, which runs whenever `body` does.
    static const IRNode *nested(const Stmt &body) {
        if (const For *f = body.as<For>()) return f;
        const IfThenElse *g = body.as<IfThenElse>();
        return g && !g->else_case.defined() ? g : nullptr;
    }
    int uncertain = 0, loops = 0;
    std::multiset<std::string> inner; // names bound inside the statement, where we are

    bool names_inner(const Expr &e) const {
        if (inner.empty()) return false;
        for (const std::string &v : free_vars(e))
            if (inner.count(v)) return true;
        return false;
    }
    void enter(const std::string &name, const Expr &value) {
        if (value.defined()) {
            bind(lets, name, value, &out.bound);
        } else {
            out.bound.insert(name);
            lets.push(name, Expr());
        }
        inner.insert(name);
    }
    void leave(const std::string &name) {
        lets.pop(name);
        inner.erase(inner.find(name));
    }

    void visit(const Load *op) override {
        ElementKey k = key_of(op, lets);
        if (!names_inner(op->index) && !names_inner(op->predicate)) {
            k.written_index = op->index;
            k.written_predicate = op->predicate;
        }
        bool seen = false;
        for (auto &r : out.reads) {
            if (r.first.same(k)) {
                r.second += loops ? 2 : 1;
                seen = true;
                break;
            }
        }
        if (!seen) out.reads.push_back({k, loops ? 2 : 1});
        if (!uncertain && !contains_key(out.certain, k)) out.certain.push_back(k);
        out.first_access.emplace(op->name, uncertain ? StmtSummary::First::UncertainRead
                                                     : StmtSummary::First::CertainRead);
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        if (op->is_intrinsic(Intrinsic::gpu_barrier)) out.barrier = true;
        if (op->is_intrinsic(Intrinsic::atomic_update)) {
            // The read of an atomic update is part of the atomic operation: never shared.
            op->args[0].accept(this);
            op->args[1].accept(this);
            if (const Load *current = op->args[2].as<Load>()) {
                out.atomics.insert(current->name);
                current->index.accept(this);
                current->predicate.accept(this);
            } else {
                op->args[2].accept(this);
            }
            return;
        }
        IRVisitor::visit(op);
    }
    void visit(const Select *op) override {
        op->condition.accept(this);
        uncertain++;
        op->true_value.accept(this);
        op->false_value.accept(this);
        uncertain--;
    }
    void visit(const Let *op) override {
        op->value.accept(this);
        enter(op->name, op->value);
        op->body.accept(this);
        leave(op->name);
    }
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        enter(op->name, op->value);
        op->body.accept(this);
        leave(op->name);
    }
    void visit(const For *op) override {
        op->min.accept(this);
        op->extent.accept(this);
        bool runs = is_positive_const(simplify(op->extent));
        if (op == runs_next) {
            // (An extent that names a loop of the nest cannot be tested before it.)
            if (!runs && !names_inner(op->extent)) {
                runs_if(GT::make(op->extent, make_zero(op->extent.type())));
                runs = true;
            }
            runs_next = runs ? nested(op->body) : nullptr;
        }
        enter(op->name, Expr());
        uncertain += !runs;
        loops++;
        op->body.accept(this);
        loops--;
        uncertain -= !runs;
        leave(op->name);
    }
    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        if (op == runs_next && movable(op->condition) && !names_inner(op->condition)) {
            runs_if(op->condition);
            runs_next = nested(op->then_case);
            op->then_case.accept(this);
            return;
        }
        uncertain++;
        op->then_case.accept(this);
        if (op->else_case.defined()) op->else_case.accept(this);
        uncertain--;
    }
    void visit(const AssertStmt *op) override {
        op->condition.accept(this);
        uncertain++;
        op->message.accept(this);
        uncertain--;
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        ElementKey k = key_of(op, lets);
        if (!names_inner(op->index) && !names_inner(op->predicate)) {
            k.written_index = op->index;
            k.written_predicate = op->predicate;
        }
        out.stores.push_back({k, uncertain == 0});
        out.first_access.emplace(op->name, uncertain ? StmtSummary::First::UncertainStore
                                                     : StmtSummary::First::CertainStore);
        out.writes.insert(op->name);
    }
    void visit(const Allocate *op) override {
        out.writes.insert(op->name);
        IRVisitor::visit(op);
    }
};

struct Binding {
    ElementKey key;
    std::string name;
    size_t last = 0; // the last statement of the sequence that uses it
};

// A mutator that knows the lets in scope, to tell which element each access is.
class ScopedMutator : public IRMutator {
public:
    explicit ScopedMutator(LetValues &lets) : lets(lets) {}
    using IRMutator::visit;

protected:
    LetValues &lets;

    Expr visit(const Let *op) override {
        Expr value = mutate(op->value);
        bind(lets, op->name, op->value);
        Expr body = mutate(op->body);
        lets.pop(op->name);
        return Let::make(op->name, value, body);
    }
    Stmt visit(const LetStmt *op) override {
        Expr value = mutate(op->value);
        bind(lets, op->name, op->value);
        Stmt body = mutate(op->body);
        lets.pop(op->name);
        return LetStmt::make(op->name, value, body);
    }
    Stmt visit(const For *op) override {
        Expr min = mutate(op->min), extent = mutate(op->extent);
        lets.push(op->name, Expr());
        Stmt body = mutate(op->body);
        lets.pop(op->name);
        return For::make(op->name, min, extent, op->for_type, op->gpu_dim, body);
    }
};

// Reads of the bound elements, replaced by the variables that hold them.
class UseBindings : public ScopedMutator {
public:
    UseBindings(LetValues &lets, const std::vector<const Binding *> &bindings)
        : ScopedMutator(lets), bindings(bindings) {}
    using ScopedMutator::visit;

private:
    const std::vector<const Binding *> &bindings;

    Expr visit(const Load *op) override {
        ElementKey k = key_of(op, lets);
        for (const Binding *b : bindings)
            if (b->key.same(k)) return Variable::make(op->type, b->name);
        return ScopedMutator::visit(op);
    }
    Expr visit(const Call *op) override {
        const Load *current =
            op->is_intrinsic(Intrinsic::atomic_update) ? op->args[2].as<Load>() : nullptr;
        if (!current) return ScopedMutator::visit(op);
        Expr self = Load::make(current->type, current->name, mutate(current->index),
                               mutate(current->predicate), current->param);
        return Call::make(op->type, op->intrinsic, {mutate(op->args[0]), mutate(op->args[1]), self},
                          op->call_type);
    }
};

// Where a register holding one element of type t is accessed: element 0, or all its lanes.
Expr register_index(Type t) {
    return t.lanes == 1 ? make_zero(Int(32))
                        : Ramp::make(make_zero(Int(32)), make_one(Int(32)), t.lanes);
}

// Accesses of one element, made to a register instead.
class UseRegister : public ScopedMutator {
public:
    UseRegister(LetValues &lets, const ElementKey &element, const std::string &reg)
        : ScopedMutator(lets), element(element), reg(reg) {}
    using ScopedMutator::visit;

private:
    const ElementKey &element;
    const std::string &reg;

    Expr visit(const Load *op) override {
        if (!key_of(op, lets).same(element)) return ScopedMutator::visit(op);
        return Load::make(op->type, reg, register_index(element.type), const_true(op->type.lanes));
    }
    Stmt visit(const Store *op) override {
        if (!key_of(op, lets).same(element)) return ScopedMutator::visit(op);
        return Store::make(reg, mutate(op->value), register_index(element.type),
                           const_true(op->value.type().lanes));
    }
};

// Whether `s` is a loop, or a loop under guards without an else.
bool is_loop_nest(Stmt s) {
    while (const IfThenElse *g = s.as<IfThenElse>()) {
        if (g->else_case.defined()) return false;
        s = g->then_case;
    }
    return s.as<For>() != nullptr;
}

// Guards that do not depend on a loop, tested once before it: for r { if (c) S } becomes
// if (c) { for r { S } } (lets between the loop and the guard go along); and statements in a
// row under the same guard (the copies of an unrolled loop) share one test.
class HoistInvariantGuards : public IRMutator {
public:
    using IRMutator::visit;

private:
    Stmt visit(const Block *op) override {
        std::vector<Stmt> stmts = Block::parts(op), merged;
        for (const Stmt &st : stmts) {
            Stmt s = mutate(st);
            const IfThenElse *guard = s.as<IfThenElse>();
            const IfThenElse *previous = merged.empty() ? nullptr : merged.back().as<IfThenElse>();
            if (guard && previous && !guard->else_case.defined() &&
                !previous->else_case.defined() && movable(guard->condition) &&
                equal(guard->condition, previous->condition)) {
                merged.back() = IfThenElse::make(
                    previous->condition, Block::make(previous->then_case, guard->then_case));
            } else {
                merged.push_back(s);
            }
        }
        return Block::make(merged);
    }
    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        std::vector<const LetStmt *> lets;
        Stmt inner = body;
        while (const LetStmt *l = inner.as<LetStmt>()) {
            lets.push_back(l);
            inner = l->body;
        }
        const IfThenElse *guard = inner.as<IfThenElse>();
        bool invariant = guard && !guard->else_case.defined() && movable(guard->condition) &&
                         !uses_var(guard->condition, op->name);
        for (const LetStmt *l : lets)
            invariant = invariant && !uses_var(guard->condition, l->name);
        if (invariant) {
            visit_each<Call>(guard->then_case, [&](const Call *c) {
                invariant = invariant && !c->is_intrinsic(Intrinsic::gpu_barrier);
            });
        }
        if (!invariant) {
            return body.same_as(op->body)
                       ? Stmt(op)
                       : For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, body);
        }
        Stmt kept = guard->then_case;
        for (auto l = lets.rbegin(); l != lets.rend(); ++l)
            kept = LetStmt::make((*l)->name, (*l)->value, kept);
        return IfThenElse::make(guard->condition, For::make(op->name, op->min, op->extent,
                                                            op->for_type, op->gpu_dim, kept));
    }
};

// A walk over the sequences of statements of a kernel, with the lets in scope: each sequence
// (a Block's statements, or the one statement a loop, branch or let holds) goes to
// sequence(), which recurses into its statements through mutate().
class SequenceMutator : public IRMutator {
public:
    explicit SequenceMutator(const Stmt &body) {
        visit_each<Store>(body, [&](const Store *op) { written.insert(op->name); });
    }
    using IRMutator::visit;
    virtual Stmt sequence(const Stmt &s) = 0;

protected:
    LetValues lets;
    std::set<std::string> written; // buffers the kernel stores to (any thread)

    // Whether a statement may change what a read of `buffer` gives: it writes the buffer, or
    // waits at a barrier after which other threads' writes to it are seen.
    bool kills(const std::string &buffer, const StmtSummary &s) const {
        return s.writes.count(buffer) || (s.barrier && written.count(buffer));
    }

    Stmt visit(const Block *op) override { return sequence(op); }
    Stmt visit(const LetStmt *op) override {
        bind(lets, op->name, op->value);
        Stmt body = sequence(op->body);
        lets.pop(op->name);
        return body.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, op->value, body);
    }
    Stmt visit(const For *op) override {
        lets.push(op->name, Expr());
        Stmt body = sequence(op->body);
        lets.pop(op->name);
        return body.same_as(op->body)
                   ? Stmt(op)
                   : For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, body);
    }
    Stmt visit(const IfThenElse *op) override {
        Stmt then_case = sequence(op->then_case);
        Stmt else_case = op->else_case.defined() ? sequence(op->else_case) : Stmt();
        return IfThenElse::make(op->condition, then_case, else_case);
    }
    Stmt visit(const Allocate *op) override {
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, sequence(op->body));
    }
    Stmt visit(const ProducerConsumer *op) override {
        return ProducerConsumer::make(op->name, op->is_producer, sequence(op->body));
    }
};

// What the statements of a sequence do to one buffer.
struct BufferUse {
    const ElementKey *element = nullptr; // the one element they access, if one
    bool stored = false;
    int statements = 0; // how many of them access it
    // Whether their first access reads it, with certainty (else it stores it, certainly).
    bool reads_first = false;
    bool in_loop = false; // whether one of those is a loop
    // Whether their first access stores it, with certainty: later accesses may then be
    // conditional (the register holds what memory would, and the store after them writes
    // where the run writes anyway).
    bool stores_first = false;
    Expr runs_if; // the condition under which the run, a loop that may run no time, runs
};

// Elements that a sequence of statements (or a loop, at every iteration) reads and writes at
// one index and nowhere else, held in a register through them: loaded before them (if they
// read it), stored once after them.
class KeepElements : public SequenceMutator {
public:
    explicit KeepElements(const Stmt &body) : SequenceMutator(body) {
        visit_each<Allocate>(body, [&](const Allocate *op) {
            if (op->memory_type == MemoryType::Register) registers.insert(op->name);
        });
    }

    Stmt sequence(const Stmt &s) override {
        std::vector<Stmt> stmts = Block::parts(s);
        for (Stmt &st : stmts) {
            st = mutate(st);
            // An element kept through an inner loop under the test that it runs: the test
            // moves out of the loops around it, for them to keep the element too.
            if (st.as<For>()) st = HoistInvariantGuards().mutate(st);
        }
        // A run of one statement keeps an element only through a loop; one that is not a
        // loop (a let, whose body was a sequence of its own) has nothing to keep. (Summarized
        // anyway, a chain of lets summarized the rest of the chain at each of its lets.)
        if (stmts.size() == 1 && !is_loop_nest(stmts[0])) return stmts[0];
        // One buffer at a time; a run kept in a register becomes one statement, summarized
        // again for the next buffer (the others keep their summaries).
        std::set<std::string> done;
        // Each statement's summary, and a loop's as if it ran (for a run of that loop alone,
        // kept under the condition that it runs).
        std::vector<StmtSummary> summaries(stmts.size()), if_runs(stmts.size());
        std::vector<bool> stale(stmts.size(), true);
        while (true) {
            for (size_t i = 0; i < stmts.size(); i++) {
                if (!stale[i]) continue;
                summaries[i] = StmtSummary();
                Summarize summarize(lets, summaries[i]);
                stmts[i].accept(&summarize);
                if_runs[i] = StmtSummary();
                // (A loop or a guard around one, and those nested directly in them.)
                bool certain = true, loop = false;
                for (Stmt n = stmts[i]; n.defined();) {
                    if (const For *l = n.as<For>()) {
                        certain = certain && is_const(simplify(l->extent));
                        loop = true;
                        n = l->body;
                    } else if (const IfThenElse *g = n.as<IfThenElse>();
                               g && !g->else_case.defined()) {
                        certain = false;
                        n = g->then_case;
                    } else {
                        break;
                    }
                }
                if (loop && !certain) {
                    Summarize as_if_run(lets, if_runs[i], stmts[i].get());
                    stmts[i].accept(&as_if_run);
                }
                stale[i] = false;
            }
            std::string buffer;
            for (const StmtSummary &sm : summaries)
                for (const auto &st : sm.stores)
                    if (buffer.empty() && !done.count(st.first.buffer) &&
                        !registers.count(st.first.buffer))
                        buffer = st.first.buffer;
            if (buffer.empty()) break;
            done.insert(buffer);
            size_t i = 0;
            while (i < stmts.size()) {
                // The longest run from i whose accesses of `buffer` are all one element, from
                // its first statement that accesses it to its last.
                BufferUse use;
                size_t end = i, first = stmts.size(), last = i;
                while (end < stmts.size()) {
                    BufferUse with = use;
                    if (!compatible(buffer, summaries[end], stmts[end], with)) {
                        // A loop that may run no time starts a run of its own, under the
                        // condition that it runs.
                        with = use;
                        if (use.statements || !if_runs[end].runs_if.defined() ||
                            !compatible(buffer, if_runs[end], stmts[end], with))
                            break;
                        with.runs_if = if_runs[end].runs_if;
                    } else if (use.runs_if.defined() && with.statements > use.statements) {
                        break;
                    }
                    if (with.statements > use.statements) {
                        first = std::min(first, end);
                        last = end;
                    }
                    use = with;
                    end++;
                }
                if (use.element && use.stored && (use.statements >= 2 || use.in_loop)) {
                    std::vector<Stmt> run(stmts.begin() + first, stmts.begin() + last + 1);
                    Stmt kept = keep_element(*use.element, use.reads_first, Block::make(run));
                    if (use.runs_if.defined()) kept = IfThenElse::make(use.runs_if, kept);
                    stmts.erase(stmts.begin() + first, stmts.begin() + last + 1);
                    stmts.insert(stmts.begin() + first, kept);
                    summaries.erase(summaries.begin() + first, summaries.begin() + last + 1);
                    summaries.insert(summaries.begin() + first, StmtSummary());
                    stale.erase(stale.begin() + first, stale.begin() + last + 1);
                    stale.insert(stale.begin() + first, true);
                    i = first + 1;
                } else {
                    i = std::max(end, i + 1);
                }
            }
        }
        return Block::make(stmts);
    }

private:
    std::set<std::string> registers;
    int count = 0;

    // Whether statement `st` can join a run in which `buffer` is one element kept in a
    // register, and if so what it adds to the run's use.
    bool compatible(const std::string &buffer, const StmtSummary &sm, const Stmt &st,
                    BufferUse &use) const {
        if (sm.barrier && written.count(buffer)) return false;
        if (sm.atomics.count(buffer)) return false;
        bool accesses = false;
        auto same_element = [&](const ElementKey &k) {
            if (!use.element) use.element = &k;
            return k.same(*use.element);
        };
        const bool stores_first =
            use.statements ? use.stores_first
                           : sm.first_access.count(buffer) &&
                                 sm.first_access.at(buffer) == StmtSummary::First::CertainStore;
        for (const auto &store : sm.stores) {
            if (store.first.buffer != buffer) continue;
            if ((!store.second && !stores_first) || !same_element(store.first)) return false;
            accesses = use.stored = true;
        }
        for (const auto &r : sm.reads) {
            if (r.first.buffer != buffer) continue;
            if (!same_element(r.first)) return false;
            accesses = true;
        }
        if (!accesses) return !sm.writes.count(buffer); // (an allocation of it)
        if (use.element->mentions_any(sm.bound) || !is_const(simplify(use.element->predicate), 1))
            return false;
        if (use.statements == 0) {
            // Loaded before the run only where the run would read it first anyway (a load
            // that may not run could read what nothing has written yet).
            StmtSummary::First first = sm.first_access.at(buffer);
            if (first != StmtSummary::First::CertainRead &&
                first != StmtSummary::First::CertainStore)
                return false;
            use.reads_first = first == StmtSummary::First::CertainRead;
            use.stores_first = stores_first;
        }
        use.statements++;
        use.in_loop = use.in_loop || is_loop_nest(st);
        return true;
    }

    Stmt keep_element(const ElementKey &element, bool read, const Stmt &run) {
        const std::string reg = kept_value_name(element.buffer, count++);
        registers.insert(reg);
        const Type t = element.type;
        Expr reg_index = register_index(t);
        Expr index = element.written_index.defined() ? element.written_index : element.index;
        Expr predicate = const_true(t.lanes);
        Stmt body = UseRegister(lets, element, reg).mutate(run);
        Stmt after = Store::make(element.buffer, Load::make(t, reg, reg_index, predicate), index,
                                 predicate, element.param);
        Stmt before;
        if (read) {
            before =
                Store::make(reg, Load::make(t, element.buffer, index, predicate, element.param),
                            reg_index, predicate);
        }
        return Allocate::make(reg, t.element_of(), MemoryType::Register,
                              {make_const(Int(32), int64_t(t.lanes))},
                              Block::make({before, body, after}));
    }
};

class ShareLoads : public SequenceMutator {
public:
    using SequenceMutator::SequenceMutator;

    // Each sequence of statements: the reads that several of its statements make (or one
    // makes in a loop) become one, bound before the first.
    Stmt sequence(const Stmt &s) override {
        std::vector<Stmt> stmts = Block::parts(s);
        const size_t n = stmts.size();
        // One statement shares reads only as a loop (below); a let's body was a sequence of
        // its own.
        if (n == 1 && !stmts[0].as<For>()) return mutate(stmts[0]);
        std::vector<StmtSummary> summaries(n);
        for (size_t i = 0; i < n; i++) {
            Summarize summarize(lets, summaries[i]);
            stmts[i].accept(&summarize);
        }
        std::vector<std::vector<Binding>> made(n);
        std::vector<const Binding *> active;
        for (size_t i = 0; i < n; i++) {
            made[i].reserve(summaries[i].certain.size());
            for (const ElementKey &k : summaries[i].certain) {
                bool bound_before = false;
                for (const Binding *b : active)
                    bound_before = bound_before || (b->last >= i && b->key.same(k));
                if (bound_before) continue;
                if (kills(k.buffer, summaries[i]) || k.mentions_any(summaries[i].bound)) continue;
                int weight = summaries[i].weight_of(k);
                size_t last = i;
                for (size_t m = i + 1; m < n; m++) {
                    if (kills(k.buffer, summaries[m]) || k.mentions_any(summaries[m].bound)) break;
                    if (int w = summaries[m].weight_of(k)) {
                        weight += w;
                        last = m;
                    }
                }
                // Reads all inside one statement that only binds names are shared inside
                // it, next to their uses; a loop's are shared here, before it.
                if (weight < 2 || (last == i && !stmts[i].as<For>())) continue;
                made[i].push_back({k, loaded_value_name(k.buffer, count++), last});
            }
            for (const Binding &b : made[i])
                active.push_back(&b);
            std::vector<const Binding *> live;
            for (const Binding *b : active)
                if (b->last >= i) live.push_back(b);
            active = live;
            if (!active.empty()) {
                UseBindings use(lets, active);
                stmts[i] = use.mutate(stmts[i]);
            }
            stmts[i] = mutate(stmts[i]);
        }
        Stmt result;
        for (size_t k = n; k-- > 0;) {
            result = result.defined() ? Block::make(stmts[k], result) : stmts[k];
            for (auto b = made[k].rbegin(); b != made[k].rend(); ++b) {
                const ElementKey &k = b->key;
                Expr load = k.written_index.defined()
                                ? Load::make(k.type, k.buffer, k.written_index, k.written_predicate,
                                             k.param)
                                : Load::make(k.type, k.buffer, k.index, k.predicate, k.param);
                result = LetStmt::make(b->name, load, result);
            }
        }
        return result;
    }

private:
    int count = 0;
};

} // namespace

void keep_values_in_registers(LoweredKernel &kernel) {
    kernel.body = HoistInvariantGuards().mutate(kernel.body);
    KeepElements keep(kernel.body);
    kernel.body = keep.sequence(kernel.body);
    ShareLoads share(kernel.body);
    kernel.body = share.sequence(kernel.body);
}

} // namespace lowering
} // namespace aicf
