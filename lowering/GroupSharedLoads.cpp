#include "lowering/GroupSharedLoads.h"

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// One scalar read of shared memory bound by a LetStmt: its index is base + offset.
struct Read {
    const LetStmt *let = nullptr;
    Type type;
    Expr base;
    int64_t offset = 0;
    int64_t aligned = 1; // base is a multiple of it (a power of two up to 16), in elements
    std::map<std::string, int> bindings; // which binding of each name in base it reads
    std::vector<const LetStmt *> open;   // the reads whose scope holds it
};

// Where a group's vector is read, and from which lane each element comes.
struct Element {
    std::string vector; // its LetStmt's name
    Type type;          // the vector's
    int lane = 0;
};
struct Plan {
    std::map<const LetStmt *, Element> elements;
    std::map<const LetStmt *, std::pair<std::string, Expr>> vectors; // at the first: name, load
};

// Finds the groups, one straight run of statements (a region) at a time.
class FindGroups {
public:
    Plan plan;

    void walk(const Stmt &s) {
        if (!s.defined()) return;
        if (const LetStmt *op = s.as<LetStmt>()) {
            const bool read = consider(op);
            values.push(op->name, op->value);
            bindings[op->name]++;
            if (read) open.push_back(op);
            walk(op->body);
            if (read) open.pop_back();
            values.pop(op->name);
        } else if (const Block *op = s.as<Block>()) {
            walk(op->first);
            walk(op->rest);
        } else if (const ProducerConsumer *op = s.as<ProducerConsumer>()) {
            walk(op->body);
        } else if (const Allocate *op = s.as<Allocate>()) {
            walk(op->body);
        } else if (const Store *op = s.as<Store>()) {
            if (op->name == kSharedMemoryName) finish();
        } else if (const Evaluate *op = s.as<Evaluate>()) {
            // A barrier, a copy into shared memory, a tensor-core operation: the region ends.
            bool effects = false;
            visit_each<Call>(op->value, [&](const Call *c) { effects = effects || !c->is_pure(); });
            if (effects) finish();
        } else if (const For *op = s.as<For>()) {
            finish();
            values.push(op->name, Expr());
            bindings[op->name]++;
            walk(op->body);
            finish();
            values.pop(op->name);
        } else if (const IfThenElse *op = s.as<IfThenElse>()) {
            finish();
            walk(op->then_case);
            finish();
            walk(op->else_case);
            finish();
        } else {
            // A check that may leave the kernel, and anything else: the region ends.
            finish();
        }
    }

    void finish() {
        std::vector<bool> taken(region.size(), false);
        for (size_t i = 0; i < region.size(); i++) {
            if (taken[i]) continue;
            // The reads of the same elements' row as read i, in program order.
            std::vector<size_t> row;
            for (size_t j = i; j < region.size(); j++)
                if (!taken[j] && same_row(region[i], region[j])) row.push_back(j);
            for (int lanes = 16 / region[i].type.bytes(); lanes >= 2; lanes /= 2)
                group_in(row, taken, lanes);
        }
        region.clear();
    }

private:
    std::vector<Read> region;
    std::vector<const LetStmt *> open;
    Scope<Expr> values; // lets in scope (undefined: loop variables)
    std::map<std::string, int> bindings;
    int vectors = 0;

    bool consider(const LetStmt *op) {
        const Load *load = op->value.as<Load>();
        if (!load || load->name != kSharedMemoryName || load->type.lanes != 1 ||
            (load->predicate.defined() && !is_const_one(load->predicate)))
            return false;
        if (load->type.bytes() > 8 || load->type.is_bool()) return false;
        Read r;
        r.let = op;
        r.type = load->type;
        r.base = load->index;
        if (const Add *add = load->index.as<Add>()) {
            if (auto c = as_const_int(add->b)) r.base = add->a, r.offset = *c;
        } else if (auto c = as_const_int(load->index)) {
            r.base = make_zero(load->index.type()), r.offset = *c;
        }
        for (const std::string &v : free_vars(r.base))
            r.bindings[v] = bindings[v];
        // (Decided here, with the lets in scope that the index reads.)
        for (int64_t n = 16; n >= 2 && r.aligned == 1; n /= 2)
            if (multiple_of(r.base, n)) r.aligned = n;
        r.open = open;
        region.push_back(r);
        return true;
    }

    static bool same_row(const Read &a, const Read &b) {
        return a.type == b.type && a.bindings == b.bindings && equal(a.base, b.base);
    }

    // Whether e is a multiple of n wherever the threads and loops are (lets followed).
    bool multiple_of(const Expr &e, int64_t n, int depth = 0) const {
        if (depth > 16) return false;
        if (auto c = as_const_int(e)) return *c % n == 0;
        if (const Add *a = e.as<Add>())
            return multiple_of(a->a, n, depth + 1) && multiple_of(a->b, n, depth + 1);
        if (const Sub *d = e.as<Sub>())
            return multiple_of(d->a, n, depth + 1) && multiple_of(d->b, n, depth + 1);
        if (const Mul *m = e.as<Mul>())
            return multiple_of(m->a, n, depth + 1) || multiple_of(m->b, n, depth + 1);
        if (const Variable *v = e.as<Variable>()) {
            const Expr *value = values.find(v->name);
            return value && value->defined() && multiple_of(*value, n, depth + 1);
        }
        return false;
    }

    // Groups of `lanes` consecutive elements of a row, starting at multiples of lanes.
    void group_in(const std::vector<size_t> &row, std::vector<bool> &taken, int lanes) {
        if (row.size() < size_t(lanes) || region[row[0]].aligned % lanes != 0) return;
        std::map<int64_t, size_t> at; // offset -> read (the first of any repeats)
        for (size_t j : row)
            if (!taken[j]) at.emplace(region[j].offset, j);
        for (const auto &[offset, j] : at) {
            if (offset % lanes != 0) continue;
            std::vector<size_t> members;
            for (int64_t k = 0; k < lanes; k++) {
                auto it = at.find(offset + k);
                if (it == at.end() || taken[it->second]) break;
                members.push_back(it->second);
            }
            if (members.size() != size_t(lanes)) continue;
            const size_t first = *std::min_element(members.begin(), members.end());
            bool scoped = true;
            for (size_t m : members) {
                const auto &o = region[m].open;
                scoped = scoped && (m == first ||
                                    std::find(o.begin(), o.end(), region[first].let) != o.end());
            }
            if (!scoped) continue;
            const Read &r = region[first];
            const std::string name =
                std::string(kSharedMemoryName) + ".vector." + std::to_string(vectors++);
            Expr start = simplify_offset(r.base, offset);
            Expr hinted = Call::make(start.type(), Intrinsic::alignment_hint,
                                     {start, make_const(Int(32), int64_t(lanes))}, Call::Intrinsic);
            const Type t = r.type.with_lanes(lanes);
            plan.vectors[r.let] = {name,
                                   Load::make(t, kSharedMemoryName,
                                              Ramp::make(hinted, make_one(start.type()), lanes),
                                              const_true(lanes))};
            for (size_t m : members) {
                taken[m] = true;
                plan.elements[region[m].let] = {name, t, int(region[m].offset - offset)};
            }
        }
    }

    static Expr simplify_offset(const Expr &base, int64_t offset) {
        if (auto c = as_const_int(base)) return make_const(base.type(), *c + offset);
        return offset == 0 ? base : Add::make(base, make_const(base.type(), offset));
    }
};

class Rewrite : public IRMutator {
public:
    explicit Rewrite(const Plan &plan) : plan(plan) {}

private:
    const Plan &plan;

    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        auto element = plan.elements.find(op);
        if (element == plan.elements.end()) return IRMutator::visit(op);
        const Element &e = element->second;
        Stmt s = LetStmt::make(op->name, extract_element(Variable::make(e.type, e.vector), e.lane),
                               mutate(op->body));
        auto first = plan.vectors.find(op);
        if (first != plan.vectors.end())
            s = LetStmt::make(first->second.first, first->second.second, s);
        return s;
    }
};

} // namespace

void group_shared_loads(LoweredKernel &kernel) {
    FindGroups find;
    find.walk(kernel.body);
    find.finish();
    if (find.plan.elements.empty()) return;
    kernel.body = Rewrite(find.plan).mutate(kernel.body);
}

} // namespace lowering
} // namespace aicf
