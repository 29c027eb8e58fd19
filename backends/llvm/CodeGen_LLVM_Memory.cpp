// The memory half of the LLVM translator: addresses of storage elements (summed so loop
// invariants stay outside loops), alias metadata, and the Load, Store and Allocate nodes.

#include "backends/llvm/CodeGen_LLVM.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

namespace aicf {
namespace backends {

using namespace ir;

llvm::MDNode *CodeGen_LLVM::storage_tbaa_tag(const std::string &name) {
    llvm::MDNode *&tag = tbaa_tags[name];
    if (!tag) {
        llvm::MDBuilder md(context);
        if (!tbaa_root) tbaa_root = md.createTBAARoot("aicf storage");
        llvm::MDNode *type = md.createTBAAScalarTypeNode(name, tbaa_root);
        tag = md.createTBAAStructTagNode(type, type, 0);
    }
    return tag;
}

llvm::Value *CodeGen_LLVM::address_of(const std::string &name, llvm::Value *index, Type elem,
                                      bool inbounds) {
    const llvm::Value *const *base = symbols.find(name);
    internal_assert(base) << "codegen: no storage named " << name;
    llvm::Value *idx = builder.CreateSExt(index, llvm::Type::getInt64Ty(context));
    llvm::Type *t = llvm_type_of(elem.element_of());
    llvm::Value *ptr = const_cast<llvm::Value *>(*base);
    return inbounds ? builder.CreateInBoundsGEP(t, ptr, idx) : builder.CreateGEP(t, ptr, idx);
}

int CodeGen_LLVM::depth_of(const Expr &e) const {
    int depth = 0;
    visit_each<Variable>(e, [&](const Variable *v) {
        if (const int *d = definition_depth.find(v->name)) depth = std::max(depth, *d);
    });
    return depth;
}

// Whether the let `name` binds a sum whose variables can all be used here (a parallel loop's
// body sees only the values its closure carries).
bool CodeGen_LLVM::expandable(const std::string &name) const {
    if (!let_values.contains(name)) return false;
    const Expr &value = let_values.get(name);
    if (!value.as<Add>() && !value.as<Sub>()) return false;
    bool ok = true;
    visit_each<Variable>(value, [&](const Variable *v) { ok = ok && symbols.contains(v->name); });
    return ok;
}

// The summands of an index, with their signs: a + b - c is {a, +}, {b, +}, {c, -}. A variable
// bound to a sum (by common subexpression elimination, say) counts as that sum, so that the
// same element reached through the variable and through the sum gets the same address
// computation, which alias analysis then recognizes.
void CodeGen_LLVM::collect_summands(const Expr &e, bool negate,
                                    std::vector<std::pair<Expr, bool>> &out, int depth) const {
    if (const Add *a = e.as<Add>()) {
        collect_summands(a->a, negate, out, depth);
        collect_summands(a->b, negate, out, depth);
    } else if (const Sub *s = e.as<Sub>()) {
        collect_summands(s->a, negate, out, depth);
        collect_summands(s->b, !negate, out, depth);
    } else if (const Variable *v = e.as<Variable>(); v && depth < 4 && expandable(v->name)) {
        collect_summands(let_values.get(v->name), negate, out, depth + 1);
    } else {
        out.emplace_back(e, negate);
    }
}

llvm::Value *CodeGen_LLVM::address_of(const std::string &name, const Expr &index, Type elem,
                                      bool inbounds) {
    std::vector<std::pair<Expr, bool>> summands;
    // Signed 32-bit index arithmetic does not overflow, so the sum may be taken in 64 bits.
    if (index.type() == Int(32)) collect_summands(index, false, summands);
    if (summands.size() < 2) return address_of(name, codegen(index), elem, inbounds);
    const llvm::Value *const *base = symbols.find(name);
    internal_assert(base) << "codegen: no storage named " << name;
    std::vector<std::pair<int, size_t>> order;
    for (size_t i = 0; i < summands.size(); i++)
        order.emplace_back(depth_of(summands[i].first), i);
    std::stable_sort(order.begin(), order.end());
    llvm::Type *i64 = llvm::Type::getInt64Ty(context), *elem_type = llvm_type_of(elem.element_of());
    llvm::Value *ptr = const_cast<llvm::Value *>(*base);
    for (const auto &o : order) {
        const auto &[term, negative] = summands[o.second];
        llvm::Value *v = builder.CreateSExt(codegen(term), i64);
        if (negative) v = builder.CreateNSWNeg(v);
        // Not inbounds: a partial sum may point outside the storage (below its min).
        ptr = builder.CreateGEP(elem_type, ptr, v);
    }
    return ptr;
}

namespace {

// Lane j of a vector integer expression, as a scalar expression; undefined where a lane
// depends on memory or on something else this does not take apart. Vector lets are read
// through `lets`.
Expr lane_of(const Expr &e, int j, const Scope<Expr> &lets, int depth = 0) {
    if (e.type().lanes == 1) return e;
    if (depth > 16) return Expr();
    auto lane = [&](const Expr &x) { return lane_of(x, j, lets, depth + 1); };
    if (const Ramp *r = e.as<Ramp>()) {
        if (r->base.type().lanes != 1) return Expr();
        return simplify(
            Add::make(r->base, Mul::make(r->stride, make_const(r->stride.type(), int64_t(j)))));
    }
    if (const Broadcast *b = e.as<Broadcast>())
        return b->value.type().lanes == 1 ? b->value : Expr();
    if (const Variable *v = e.as<Variable>()) {
        const Expr *value = lets.find(v->name);
        return value ? lane(*value) : Expr();
    }
    if (const Cast *c = e.as<Cast>()) {
        Expr x = lane(c->value);
        return x.defined() ? Cast::make(c->type.element_of(), x) : Expr();
    }
    auto binary = [&](const auto *op) -> Expr {
        using Node = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
        Expr a = lane(op->a), b = lane(op->b);
        return a.defined() && b.defined() ? Node::make(a, b) : Expr();
    };
    if (const Add *op = e.as<Add>()) return binary(op);
    if (const Sub *op = e.as<Sub>()) return binary(op);
    if (const Mul *op = e.as<Mul>()) return binary(op);
    if (const Div *op = e.as<Div>()) return binary(op);
    if (const Mod *op = e.as<Mod>()) return binary(op);
    if (const Min *op = e.as<Min>()) return binary(op);
    if (const Max *op = e.as<Max>()) return binary(op);
    return Expr();
}

// With the lanes of an index in k classes (lane j in class j % k): each lane's index less that
// of the first lane of its class, where every one is a constant. k = 1 takes a strided ramp;
// k = 2 takes ramp(x, 1, n) / 2, whose even and odd lanes are two dense ramps.
std::optional<std::vector<int64_t>> class_offsets(const std::vector<Expr> &lanes, size_t k) {
    std::vector<int64_t> offsets(lanes.size(), 0);
    for (size_t j = k; j < lanes.size(); j++) {
        std::optional<int64_t> d = as_const_int(simplify(Sub::make(lanes[j], lanes[j % k])));
        if (!d) return std::nullopt;
        offsets[j] = *d;
    }
    return offsets;
}

// The span from the lowest offset to the highest (inclusive), and the lowest.
std::pair<int64_t, int64_t> span_of(const std::vector<int64_t> &offsets) {
    auto [lo, hi] = std::minmax_element(offsets.begin(), offsets.end());
    return {*hi - *lo + 1, *lo};
}

} // namespace

llvm::Value *CodeGen_LLVM::join_vectors(std::vector<llvm::Value *> parts) {
    auto length = [](llvm::Value *v) {
        return int(llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements());
    };
    // Two at a time: shufflevector joins two of one length. A shorter second one is widened
    // with unused lanes; it is always the last, so they come last.
    while (parts.size() > 1) {
        std::vector<llvm::Value *> joined;
        for (size_t i = 0; i + 1 < parts.size(); i += 2) {
            const int n = length(parts[i]);
            llvm::Value *b = parts[i + 1];
            if (length(b) < n) {
                std::vector<int> widen(size_t(n), -1);
                std::iota(widen.begin(), widen.begin() + length(b), 0);
                b = builder.CreateShuffleVector(b, widen);
            }
            std::vector<int> both(size_t(2 * n));
            std::iota(both.begin(), both.end(), 0);
            joined.push_back(builder.CreateShuffleVector(parts[i], b, both));
        }
        if (parts.size() % 2) joined.push_back(parts.back());
        parts = joined;
    }
    return parts[0];
}

llvm::Value *CodeGen_LLVM::shuffled_dense_loads(const std::string &name, const Expr &start,
                                                const std::vector<int64_t> &offsets, int64_t span,
                                                Type t) {
    const int lanes = int(offsets.size());
    llvm::Type *elem = llvm_type_of(t.element_of());
    const llvm::Align align(t.element_of().bytes());
    // Vectors of `lanes` elements from the start, the last ending at the span's end (it may
    // overlap the one before); a span shorter than the lanes is one vector of its length.
    const int width = int(std::min<int64_t>(span, lanes));
    const int count = int((span + width - 1) / width);
    const int64_t last = int64_t(count - 1) * width;
    auto part_of = [&](int64_t e) { return e < last ? int(e / width) : count - 1; };
    auto part_start = [&](int p) { return p + 1 < count ? int64_t(p) * width : span - width; };
    std::vector<int> needed;
    for (int64_t e : offsets)
        needed.push_back(part_of(e));
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    std::vector<llvm::Value *> parts;
    for (int p : needed) {
        llvm::Value *ptr =
            address_of(name, simplify(Add::make(start, make_const(Int(32), part_start(p)))), t);
        parts.push_back(
            tag_access(builder.CreateAlignedLoad(llvm::FixedVectorType::get(elem, unsigned(width)),
                                                 ptr, align),
                       name));
    }
    // Element e is in part part_of(e), the parts laid end to end in `needed`'s order.
    std::vector<int> mask(static_cast<size_t>(lanes), 0);
    for (int j = 0; j < lanes; j++) {
        const int64_t e = offsets[size_t(j)];
        const int p = part_of(e);
        const int64_t at = std::lower_bound(needed.begin(), needed.end(), p) - needed.begin();
        mask[size_t(j)] = int(at * width + e - part_start(p));
    }
    return builder.CreateShuffleVector(join_vectors(parts), mask);
}

void CodeGen_LLVM::find_shared_spans(const Expr &value) {
    shared_spans.clear();
    if (!loads_by_shuffle || value.type().lanes < 2) return;
    // A name bound twice inside the value, or bound inside it and outside, may stand for two
    // values: indices that use one are not compared.
    std::map<std::string, int> bindings;
    visit_each<Let>(value, [&](const Let *l) { bindings[l->name]++; });
    struct Access {
        const Load *load;
        const Ramp *ramp;
        int64_t stride;
    };
    std::vector<Access> accesses;
    visit_each<Load>(value, [&](const Load *op) {
        Expr index = op->index;
        while (const Let *l = index.as<Let>())
            index = l->body;
        const Ramp *r = index.as<Ramp>();
        if (!r || !is_true(op->predicate) || r->base.type() != Int(32)) return;
        std::optional<int64_t> stride = as_const_int(r->stride);
        if (!stride || *stride < 2 || *stride > 4) return; // wider strides are gathered
        bool unique = true;
        visit_each<Variable>(r->base, [&](const Variable *v) {
            auto it = bindings.find(v->name);
            unique =
                unique && (it == bindings.end() || (it->second == 1 && !symbols.find(v->name)));
        });
        if (unique) accesses.push_back({op, r, *stride});
    });
    std::vector<bool> placed(accesses.size(), false);
    for (size_t i = 0; i < accesses.size(); i++) {
        if (placed[i]) continue;
        const Access &a = accesses[i];
        const int64_t n = a.ramp->lanes;
        // The accesses like this one, by their first lane's distance from its first lane.
        std::vector<std::pair<int64_t, const Ramp *>> like{{0, a.ramp}};
        for (size_t j = i + 1; j < accesses.size(); j++) {
            const Access &b = accesses[j];
            if (placed[j] || b.load->name != a.load->name || b.stride != a.stride ||
                b.ramp->lanes != a.ramp->lanes ||
                b.load->type.element_of().bytes() != a.load->type.element_of().bytes())
                continue;
            std::optional<int64_t> d =
                as_const_int(simplify(Sub::make(b.ramp->base, a.ramp->base)));
            if (!d || std::abs(*d) >= a.stride * n) continue;
            like.emplace_back(*d, b.ramp);
            placed[j] = true;
        }
        std::sort(like.begin(), like.end(),
                  [](const auto &x, const auto &y) { return x.first < y.first; });
        // Runs in which each first lane is at most a stride past the one before share spans.
        for (size_t lo = 0, hi; lo < like.size(); lo = hi) {
            for (hi = lo + 1; hi < like.size() && like[hi].first - like[hi - 1].first <= a.stride;)
                hi++;
            if (hi - lo < 2 || like[hi - 1].first == like[lo].first) continue;
            const int64_t span = like[hi - 1].first - like[lo].first + a.stride * (n - 1) + 1;
            for (size_t m = lo; m < hi; m++)
                shared_spans[{a.load->name, like[m].second}] = {like[m].first - like[lo].first,
                                                                span};
        }
    }
}

llvm::Value *CodeGen_LLVM::load_by_shuffle(const Load *op) {
    const Type t = op->type;
    const size_t lanes = size_t(t.lanes);
    if (!loads_by_shuffle || !is_true(op->predicate) || lanes < 2 ||
        op->index.type().element_of() != Int(32))
        return nullptr;
    // Each lane's index, through the lets around; none may read memory.
    std::vector<Expr> index(lanes);
    for (size_t j = 0; j < lanes; j++) {
        index[j] = lane_of(op->index, int(j), let_values);
        if (!index[j].defined() || (j == 0 && tree_size(index[0], 256) > 256)) return nullptr;
    }
    for (size_t k = 1; k <= 8 && 2 * k <= lanes && lanes % k == 0; k *= 2) {
        std::optional<std::vector<int64_t>> offsets = class_offsets(index, k);
        if (!offsets) continue;
        std::vector<std::vector<int64_t>> classes(k);
        for (size_t j = 0; j < lanes; j++)
            classes[j % k].push_back((*offsets)[j]);
        // Every element from a class's lowest lane to its highest lies between two that the
        // access reads, so it is in the same storage: the loads read nothing the access does
        // not span. Up to four vectors of it per class.
        bool narrow = true;
        for (const auto &c : classes)
            narrow = narrow && span_of(c).first <= 4 * int64_t(c.size());
        if (!narrow) return nullptr;
        if (k == 1) {
            if (auto shared = shared_spans.find({op->name, op->index.as<Ramp>()});
                shared != shared_spans.end()) {
                for (int64_t &e : (*offsets))
                    e += shared->second.offset;
                Expr start =
                    simplify(Sub::make(index[0], make_const(Int(32), shared->second.offset)));
                return shuffled_dense_loads(op->name, start, *offsets, shared->second.span, t);
            }
        }
        std::vector<llvm::Value *> values;
        for (size_t r = 0; r < k; r++) {
            const auto [span, lo] = span_of(classes[r]);
            for (int64_t &e : classes[r])
                e -= lo;
            values.push_back(shuffled_dense_loads(
                op->name, simplify(Add::make(index[r], make_const(Int(32), lo))), classes[r], span,
                t));
        }
        if (k == 1) return values[0];
        // Lane j is element j / k of class j % k.
        std::vector<int> mask(lanes);
        for (size_t j = 0; j < lanes; j++)
            mask[j] = int((j % k) * (lanes / k) + j / k);
        return builder.CreateShuffleVector(join_vectors(values), mask);
    }
    return nullptr;
}

void CodeGen_LLVM::visit(const Load *op) {
    // A bool is a byte in memory, 0 or 1, as in C and in the buffers users pass: a vector of
    // LLVM's i1 would be loaded from packed bits.
    if (op->type.is_bool()) {
        llvm::Value *bytes = codegen(
            Load::make(UInt(8, op->type.lanes), op->name, op->index, op->predicate, op->param));
        value = builder.CreateICmpNE(bytes, llvm::Constant::getNullValue(bytes->getType()));
        return;
    }
    Type t = op->type;
    llvm::Type *elem = llvm_type_of(t.element_of());
    llvm::Align align(t.element_of().bytes());
    if (t.lanes == 1) {
        llvm::Value *ptr = address_of(op->name, op->index, t);
        if (is_true(op->predicate)) {
            value = tag_access(builder.CreateAlignedLoad(elem, ptr, align), op->name);
            return;
        }
        internal_error << "codegen: predicated scalar load of " << op->name;
    }
    // Common subexpression elimination may wrap a dense access's ramp in lets, which would
    // hide it and make the access a gather: the lets are bound around the access instead.
    if (const Let *l = op->index.as<Let>(); l && !uses_var(op->predicate, l->name)) {
        value = codegen(Let::make(l->name, l->value,
                                  Load::make(t, op->name, l->body, op->predicate, op->param)));
        return;
    }
    const Ramp *ramp = op->index.as<Ramp>();
    if (ramp && is_const_one(ramp->stride)) {
        llvm::Value *ptr = address_of(op->name, ramp->base, t, is_true(op->predicate));
        if (is_true(op->predicate)) {
            value = tag_access(builder.CreateAlignedLoad(llvm_type_of(t), ptr, align), op->name);
        } else {
            value = tag_access(builder.CreateMaskedLoad(llvm_type_of(t), ptr, align,
                                                        codegen(op->predicate),
                                                        llvm::UndefValue::get(llvm_type_of(t))),
                               op->name);
        }
        return;
    }
    if (const Broadcast *b = op->index.as<Broadcast>(); b && is_true(op->predicate)) {
        llvm::Value *ptr = address_of(op->name, b->value, t);
        value = splat_if_vector(tag_access(builder.CreateAlignedLoad(elem, ptr, align), op->name),
                                t.lanes);
        return;
    }
    // Lanes at constant distances from the first: dense loads of the span they cover, shuffled.
    if (llvm::Value *v = load_by_shuffle(op)) {
        value = v;
        return;
    }
    // A gather, one lane at a time; masked-off lanes are not read.
    llvm::Value *indices = codegen(op->index);
    llvm::Value *pred = codegen(op->predicate);
    llvm::Value *result = llvm::UndefValue::get(llvm_type_of(t));
    for (int i = 0; i < t.lanes; i++) {
        llvm::Value *idx = builder.CreateExtractElement(indices, uint64_t(i));
        llvm::Value *lane_on = builder.CreateExtractElement(pred, uint64_t(i));
        llvm::Value *ptr = address_of(op->name, idx, t);
        llvm::BasicBlock *before = builder.GetInsertBlock();
        llvm::BasicBlock *load_bb = llvm::BasicBlock::Create(context, "gather_lane", function);
        llvm::BasicBlock *after = llvm::BasicBlock::Create(context, "gather_next", function);
        builder.CreateCondBr(lane_on, load_bb, after);
        builder.SetInsertPoint(load_bb);
        llvm::Value *x = tag_access(builder.CreateAlignedLoad(elem, ptr, align), op->name);
        llvm::Value *with = builder.CreateInsertElement(result, x, uint64_t(i));
        builder.CreateBr(after);
        builder.SetInsertPoint(after);
        llvm::PHINode *phi = builder.CreatePHI(result->getType(), 2);
        phi->addIncoming(result, before);
        phi->addIncoming(with, load_bb);
        result = phi;
    }
    value = result;
}

// The store of atomic_update(op, x, current): an atomicrmw where LLVM has the operation
// (integer add, min, max, and, or, xor; float add), else a compare-and-swap loop on the value's
// bits.
void CodeGen_LLVM::store_atomic(const Store *op, const Call *update) {
    Type t = op->value.type();
    internal_assert(t.is_scalar() && is_true(op->predicate)) << "atomic store to " << op->name;
    auto code = as_const_int(update->args[0]);
    internal_assert(code) << "atomic_update without a constant operation";
    const AtomicOp kind = AtomicOp(*code);
    llvm::Value *x = codegen(update->args[1]);
    llvm::Value *ptr = address_of(op->name, op->index, t);
    const llvm::Align align(t.bytes());
    const auto order = llvm::AtomicOrdering::Monotonic;
    using RMW = llvm::AtomicRMWInst;
    // 16-bit floats are 16-bit integers here, and their arithmetic is float's, rounded: they
    // take the compare-and-swap loop below.
    const bool half = t.is_float() && t.bits == 16;
    std::optional<RMW::BinOp> rmw;
    if (kind == AtomicOp::Add && !half) rmw = t.is_float() ? RMW::FAdd : RMW::Add;
    if (kind == AtomicOp::Min && !t.is_float()) rmw = t.is_int() ? RMW::Min : RMW::UMin;
    if (kind == AtomicOp::Max && !t.is_float()) rmw = t.is_int() ? RMW::Max : RMW::UMax;
    if (kind == AtomicOp::And) rmw = RMW::And; // bitwise: integers only
    if (kind == AtomicOp::Or) rmw = RMW::Or;
    if (kind == AtomicOp::Xor) rmw = RMW::Xor;
    if (rmw) {
        tag_access(builder.CreateAtomicRMW(*rmw, ptr, x, align, order), op->name);
        return;
    }
    // Compare and swap until no other thread changed the value in between.
    llvm::Type *bits = builder.getIntNTy(unsigned(t.bits));
    llvm::Value *first = builder.CreateAlignedLoad(bits, ptr, align);
    llvm::BasicBlock *before = builder.GetInsertBlock();
    llvm::BasicBlock *loop = llvm::BasicBlock::Create(context, "atomic_cas", function);
    llvm::BasicBlock *after = llvm::BasicBlock::Create(context, "atomic_done", function);
    builder.CreateBr(loop);
    builder.SetInsertPoint(loop);
    llvm::PHINode *old_bits = builder.CreatePHI(bits, 2);
    old_bits->addIncoming(first, before);
    llvm::Value *old = half ? half_to_float(old_bits, t.is_bfloat())
                            : builder.CreateBitCast(old_bits, llvm_type_of(t));
    if (half) x = half_to_float(x, t.is_bfloat());
    llvm::Value *updated;
    if (kind == AtomicOp::Add && half) {
        updated = builder.CreateFAdd(old, x);
    } else if (kind == AtomicOp::Mul) {
        updated = t.is_float() ? builder.CreateFMul(old, x) : builder.CreateMul(old, x);
    } else {
        // Floats: the IR's min and max (the other operand where a comparison is false).
        llvm::Value *better =
            kind == AtomicOp::Min ? builder.CreateFCmpOLT(x, old) : builder.CreateFCmpOGT(x, old);
        updated = builder.CreateSelect(better, x, old);
    }
    updated = half ? float_to_half(updated, t.is_bfloat()) : builder.CreateBitCast(updated, bits);
    llvm::Value *pair = builder.CreateAtomicCmpXchg(ptr, old_bits, updated, align, order, order);
    old_bits->addIncoming(builder.CreateExtractValue(pair, 0), loop);
    builder.CreateCondBr(builder.CreateExtractValue(pair, 1), after, loop);
    builder.SetInsertPoint(after);
}

void CodeGen_LLVM::visit(const Store *op) {
    if (const Call *c = op->value.as<Call>(); c && c->is_intrinsic(Intrinsic::atomic_update)) {
        store_atomic(op, c);
        return;
    }
    // Lets around a dense store's ramp (as around a load's, above) would make it a scatter.
    if (const Let *l = op->index.as<Let>(); l && op->index.type().lanes > 1 &&
                                            !uses_var(op->value, l->name) &&
                                            !uses_var(op->predicate, l->name)) {
        codegen(LetStmt::make(l->name, l->value,
                              Store::make(op->name, op->value, l->body, op->predicate, op->param)));
        return;
    }
    if (op->value.type().is_bool()) { // one byte each (see visit(const Load *))
        codegen(Store::make(op->name, Cast::make(UInt(8, op->value.type().lanes), op->value),
                            op->index, op->predicate, op->param));
        return;
    }
    Type t = op->value.type();
    std::map<std::pair<std::string, const Ramp *>, SharedSpan> outer_spans;
    std::swap(outer_spans, shared_spans);
    find_shared_spans(op->value);
    llvm::Value *v = codegen(op->value);
    shared_spans = std::move(outer_spans);
    llvm::Align align(t.element_of().bytes());
    if (t.lanes == 1) {
        internal_assert(is_true(op->predicate))
            << "codegen: predicated scalar store to " << op->name;
        tag_access(builder.CreateAlignedStore(v, address_of(op->name, op->index, t), align),
                   op->name);
        return;
    }
    const Ramp *ramp = op->index.as<Ramp>();
    if (ramp && is_const_one(ramp->stride)) {
        llvm::Value *ptr = address_of(op->name, ramp->base, t, is_true(op->predicate));
        if (is_true(op->predicate)) {
            tag_access(builder.CreateAlignedStore(v, ptr, align), op->name);
        } else {
            tag_access(builder.CreateMaskedStore(v, ptr, align, codegen(op->predicate)), op->name);
        }
        return;
    }
    llvm::Value *indices = codegen(op->index);
    llvm::Value *pred = codegen(op->predicate);
    for (int i = 0; i < t.lanes; i++) {
        llvm::Value *lane_on = builder.CreateExtractElement(pred, uint64_t(i));
        llvm::BasicBlock *store_bb = llvm::BasicBlock::Create(context, "scatter_lane", function);
        llvm::BasicBlock *after = llvm::BasicBlock::Create(context, "scatter_next", function);
        builder.CreateCondBr(lane_on, store_bb, after);
        builder.SetInsertPoint(store_bb);
        llvm::Value *idx = builder.CreateExtractElement(indices, uint64_t(i));
        tag_access(builder.CreateAlignedStore(builder.CreateExtractElement(v, uint64_t(i)),
                                              address_of(op->name, idx, t), align),
                   op->name);
        builder.CreateBr(after);
        builder.SetInsertPoint(after);
    }
}

void CodeGen_LLVM::visit(const Provide *op) {
    internal_error << "codegen: Provide to " << op->name << " survived storage flattening";
}

void CodeGen_LLVM::visit(const Allocate *op) {
    // The element count in 64 bits, checked: no overflow and at most 2^31 - 1 elements.
    llvm::Type *i64 = llvm::Type::getInt64Ty(context);
    llvm::Value *count = llvm::ConstantInt::get(i64, 1);
    for (const Expr &e : op->extents) {
        llvm::Value *ex = builder.CreateSExt(codegen(e), i64);
        ex = builder.CreateSelect(builder.CreateICmpSLT(ex, builder.getInt64(0)),
                                  builder.getInt64(0), ex);
        // Saturate at INT64_MAX instead of wrapping, so an absurd size is caught below.
        llvm::Value *max = builder.getInt64(INT64_MAX);
        llvm::Value *room = builder.CreateUDiv(
            max, builder.CreateSelect(builder.CreateICmpEQ(ex, builder.getInt64(0)),
                                      builder.getInt64(1), ex));
        count = builder.CreateSelect(builder.CreateICmpUGT(count, room), max,
                                     builder.CreateMul(count, ex));
    }
    // Flat indices are int32: an allocation holds at most 2^31 - 1 elements. (A constant
    // count that fits needs no check: lowering::kernel_check_names counts on that.)
    auto *constant = llvm::dyn_cast<llvm::ConstantInt>(count);
    if (!constant || constant->getSExtValue() > 0x7fffffff) {
        llvm::BasicBlock *too_big =
            llvm::BasicBlock::Create(context, "allocation_too_large", function);
        llvm::BasicBlock *fits = llvm::BasicBlock::Create(context, "allocation_fits", function);
        builder.CreateCondBr(builder.CreateICmpSLE(count, builder.getInt64(0x7fffffff)), fits,
                             too_big);
        builder.SetInsertPoint(too_big);
        emit_runtime_error(RuntimeErrorKind::FuncStorageTooLarge, op->name, {count});
        builder.SetInsertPoint(fits);
    }
    // Room for a whole vector after the last element: a masked access whose first lane is the
    // last element spans the full vector width, and LLVM's alias analysis takes an access
    // wider than its object to be elsewhere (and so moved a load past a masked store to it).
    int lanes = 1;
    visit_each<Load>(op->body, [&](const Load *l) {
        if (l->name == op->name) lanes = std::max(lanes, int(l->type.lanes));
    });
    visit_each<Store>(op->body, [&](const Store *s) {
        if (s->name == op->name) lanes = std::max(lanes, int(s->value.type().lanes));
    });
    if (lanes > 1) count = builder.CreateAdd(count, builder.getInt64(lanes - 1));
    llvm::Value *bytes = builder.CreateMul(count, builder.getInt64(op->type.bytes()));
    llvm::Value *ptr = nullptr;
    // Stack storage is one alloca in the entry block, so it needs a size known there.
    bool on_heap = op->memory_type == MemoryType::Heap || op->memory_type == MemoryType::Auto ||
                   !llvm::isa<llvm::Constant>(count);
    if (on_heap) {
        ptr = emit_heap_allocation(op->name, bytes);
    } else {
        ptr = create_alloca_at_entry(llvm_type_of(op->type.element_of()),
                                     builder.CreateTrunc(count, builder.getInt32Ty()), op->name);
        // Aligned to the widest vector that accesses it (at most a cache line), as heap storage
        // is: a vector at a multiple of its width then never straddles two cache lines.
        uint64_t widest = uint64_t(lanes) * uint64_t(op->type.bytes());
        uint64_t align = std::max<uint64_t>(op->type.bytes(),
                                            std::min<uint64_t>(64, llvm::PowerOf2Ceil(widest)));
        llvm::cast<llvm::AllocaInst>(ptr)->setAlignment(llvm::Align(align));
    }
    {
        ScopedBinding<llvm::Value *> bind(symbols, op->name, ptr);
        if (on_heap) {
            heap_storage.emplace_back(op->name, false);
            codegen(op->body);
            const bool freed = heap_storage.back().second;
            heap_storage.pop_back();
            if (!freed) emit_heap_free(ptr);
        } else {
            ScopedBinding<int> stack(stack_storage, op->name, 1);
            codegen(op->body);
        }
    }
}

// Heap storage freed after its last use, where it runs once in the allocation's body; stack
// storage stays until its scope ends.
void CodeGen_LLVM::visit(const Free *op) {
    for (auto it = heap_storage.rbegin(); it != heap_storage.rend(); ++it) {
        if (it->first != op->name) continue;
        if (!it->second) emit_heap_free(symbols.get(op->name));
        it->second = true;
        return;
    }
}

void CodeGen_LLVM::visit(const Realize *op) {
    internal_error << "codegen: Realize of " << op->name << " survived storage flattening";
}

} // namespace backends
} // namespace aicf
