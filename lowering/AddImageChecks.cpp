#include "lowering/AddImageChecks.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "lowering/BoxesRequired.h"
#include "lowering/KernelAnalysis.h"
#include "lowering/RangesOverIterations.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

Expr i32(int64_t v) {
    return make_const(Int(32), v);
}
Expr i64(Expr e) {
    return cast(Int(64), std::move(e));
}
Expr field(const std::string &b, BufferField f, int d) {
    return Variable::make(Int(32), buffer_field_name(b, f, d));
}

Stmt check(Expr condition, RuntimeErrorKind kind, const std::string &buffer,
           std::vector<Expr> values) {
    std::vector<Expr> args = {i32(int64_t(kind)), StringImm::make(buffer)};
    for (Expr &v : values)
        args.push_back(i64(v));
    return AssertStmt::make(simplify(condition),
                            Call::make(Int(32), Intrinsic::runtime_error, args, Call::Intrinsic));
}

// The Funcs whose computation reads each input buffer, in the order first met.
class InputReaders : public IRVisitor {
public:
    std::map<std::string, std::vector<std::string>> readers;

private:
    std::vector<std::string> producing;
    using IRVisitor::visit;
    void visit(const ProducerConsumer *op) override {
        if (op->is_producer) producing.push_back(op->name);
        IRVisitor::visit(op);
        if (op->is_producer) producing.pop_back();
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type != Call::Image || producing.empty()) return;
        std::vector<std::string> &r = readers[op->name];
        if (std::find(r.begin(), r.end(), producing.back()) == r.end())
            r.push_back(producing.back());
    }
};

// The loops at which Funcs are computed: for each production, the closest host loop around it
// that runs serially or in parallel (not a loop that unrolling or vectorization will copy, nor
// one inside a GPU kernel); and the kernels (their outermost loops) that compute Funcs.
class FindComputeLoops : public IRVisitor {
public:
    std::set<const For *> loops;
    std::set<const For *> kernels;

private:
    std::vector<const For *> host_loops;
    const For *kernel = nullptr;
    using IRVisitor::visit;
    void visit(const For *op) override {
        bool opens_kernel = !kernel && is_gpu_loop(op->for_type);
        bool candidate =
            !kernel && (op->for_type == ForType::Serial || op->for_type == ForType::Parallel);
        if (candidate) host_loops.push_back(op);
        if (opens_kernel) kernel = op;
        IRVisitor::visit(op);
        if (opens_kernel) kernel = nullptr;
        if (candidate) host_loops.pop_back();
    }
    void visit(const ProducerConsumer *op) override {
        if (op->is_producer && kernel) kernels.insert(kernel);
        if (op->is_producer && !kernel && !host_loops.empty()) loops.insert(host_loops.back());
        IRVisitor::visit(op);
    }
};

// The statement with the bodies of the given loops emptied: what runs outside them.
class WithoutLoopBodies : public IRMutator {
public:
    explicit WithoutLoopBodies(const std::set<const For *> &loops) : loops(loops) {}

private:
    const std::set<const For *> &loops;
    using IRMutator::visit;
    Stmt visit(const For *op) override {
        if (!loops.count(op)) return IRMutator::visit(op);
        return For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim,
                         Evaluate::make(i32(0)));
    }
};

// An input whose region over the whole pipeline is checked only where it fails to fit.
struct DeferredInput {
    Argument arg;
    std::string described;       // the buffer and the Funcs that read it, for messages
    std::string fits;            // the variable: the region over the whole pipeline fits
    std::function<Stmt()> whole; // the checks of that region (found when first asked for)
};

// `checks` when the region over the whole pipeline does not fit.
Stmt unless_it_fits(const DeferredInput &in, Stmt checks) {
    return IfThenElse::make(Not::make(Variable::make(Bool(), in.fits)), std::move(checks));
}

// The checks of what `s` reads of the input, when the region over the whole pipeline does not
// fit: those of the region `s` reads, or where AICF cannot bound that, those of the whole
// region (which then fail).
// `part`, when given, says which part of the pipeline the region is of ("one iteration of
// loop a.y"), for the message: the whole region is larger.
Stmt checks_of_part(const DeferredInput &in, const Stmt &s, const std::string &part = "") {
    Access read =
        box_required(s, in.arg.name, Scope<Interval>(), Scope<Interval>(), LetsByName::WhenLarge);
    if (!read.used) return Stmt();
    for (const Interval &i : read.box)
        if (!i.is_bounded()) return unless_it_fits(in, in.whole());
    const std::string described = part.empty() ? in.described : in.described + "\x1f" + part;
    return with_definitions(
        read, unless_it_fits(in, Block::make(checks_buffer_covers(in.arg.name, read, described))));
}

// The kernel's block loops run on the host around the checks of the region each block reads,
// when the region over the whole pipeline does not fit: a kernel cannot stop before its blocks
// read. The lets between block loops come along; where one loads (a block's position read
// from memory), the whole region is checked instead.
Stmt checks_per_block(const DeferredInput &in, const For *kernel) {
    bool loads = false;
    std::function<Stmt(const Stmt &)> over_blocks = [&](const Stmt &s) -> Stmt {
        if (const For *f = s.as<For>(); f && f->for_type == ForType::GPUBlock) {
            Stmt body = over_blocks(f->body);
            return body.defined() ? For::make(f->name, f->min, f->extent, ForType::Serial, body)
                                  : body;
        }
        const LetStmt *l = s.as<LetStmt>();
        if (l && contains_loop_type(l->body, ForType::GPUBlock)) {
            visit_each<Load>(l->value, [&](const Load *) { loads = true; });
            visit_each<Call>(l->value, [&](const Call *c) {
                loads = loads || c->call_type == Call::Image || c->call_type == Call::Func;
            });
            Stmt body = over_blocks(l->body);
            return body.defined() ? LetStmt::make(l->name, l->value, body) : body;
        }
        Access read = box_required(s, in.arg.name, Scope<Interval>(), Scope<Interval>(),
                                   LetsByName::WhenLarge);
        if (!read.used) return Stmt();
        for (const Interval &i : read.box)
            loads = loads || !i.is_bounded();
        return with_definitions(
            read, Block::make(checks_buffer_covers(in.arg.name, read,
                                                   in.described + "\x1f" +
                                                       "one block of the kernel over loop " +
                                                       loop_for_users(kernel->name))));
    };
    Stmt per_block = over_blocks(Stmt(kernel));
    if (!per_block.defined()) return per_block;
    return unless_it_fits(in, loads ? in.whole() : per_block);
}

// Checks, at the top of each iteration of the loops where Funcs are computed, that the inputs
// cover what that iteration reads outside the nested such loops, when the region over the
// whole pipeline does not fit; and before each kernel that computes Funcs, what each of its
// blocks reads.
class CheckInsideComputeLoops : public IRMutator {
public:
    CheckInsideComputeLoops(const std::set<const For *> &loops,
                            const std::set<const For *> &kernels,
                            const std::vector<DeferredInput> &inputs)
        : loops(loops), kernels(kernels), inputs(inputs) {
        stops.insert(loops.begin(), loops.end());
        stops.insert(kernels.begin(), kernels.end());
    }

private:
    const std::set<const For *> &loops;
    const std::set<const For *> &kernels;
    std::set<const For *> stops; // where what an iteration reads stops: both of the above
    const std::vector<DeferredInput> &inputs;
    using IRMutator::visit;
    Stmt visit(const For *op) override {
        if (kernels.count(op)) {
            std::vector<Stmt> checks;
            for (const DeferredInput &in : inputs)
                if (Stmt c = checks_per_block(in, op); c.defined()) checks.push_back(c);
            checks.push_back(op);
            return Block::make(checks);
        }
        Stmt visited = IRMutator::visit(op);
        if (!loops.count(op)) return visited;
        const For *loop = visited.as<For>();
        Stmt own = WithoutLoopBodies(stops).mutate(op->body);
        std::vector<Stmt> checks;
        for (const DeferredInput &in : inputs)
            if (Stmt c =
                    checks_of_part(in, own, "one iteration of loop " + loop_for_users(op->name));
                c.defined())
                checks.push_back(c);
        if (checks.empty()) return visited;
        checks.push_back(loop->body);
        return For::make(loop->name, loop->min, loop->extent, loop->for_type, loop->gpu_dim,
                         Block::make(checks));
    }
};

// `checks` placed after the checks at the top of `body` (bounds inference's, that the outputs
// cover what their schedules write) and the lets around them: an output too small for its
// schedule's tiles also makes the inputs seem too small, and its own message says why.
Stmt after_leading_checks(const Stmt &body, const Stmt &checks) {
    if (!checks.defined()) return body;
    auto only_checks = [](const Stmt &s) {
        bool only = true;
        std::function<void(const Stmt &)> walk = [&](const Stmt &x) {
            if (const Block *b = x.as<Block>()) {
                walk(b->first);
                walk(b->rest);
            } else if (x.defined() && !x.as<AssertStmt>()) {
                only = false;
            }
        };
        walk(s);
        return only;
    };
    if (const LetStmt *l = body.as<LetStmt>()) {
        bool loads = false;
        visit_each<Load>(l->value, [&](const Load *) { loads = true; });
        if (loads) return Block::make(checks, body);
        return LetStmt::make(l->name, l->value, after_leading_checks(l->body, checks));
    }
    if (const Block *b = body.as<Block>(); b && only_checks(b->first))
        return Block::make(b->first, after_leading_checks(b->rest, checks));
    return Block::make(checks, body);
}

// The checks that split factors known only at run time are positive, where a factor depends
// on the pipeline's scalar inputs alone: they come before any region is checked, since a
// factor of 0 also makes the regions the loops cover nonsense.
std::vector<Stmt> split_factor_checks(const Stmt &body) {
    std::vector<Stmt> checks;
    visit_each<AssertStmt>(body, [&](const AssertStmt *a) {
        const Call *msg = a->message.as<Call>();
        if (!msg || !msg->is_intrinsic(Intrinsic::runtime_error) || msg->args.empty()) return;
        auto kind = as_const_int(msg->args[0]);
        if (!kind || *kind != int64_t(RuntimeErrorKind::SplitFactorNotPositive)) return;
        bool params_only = true;
        visit_each<Variable>(a->condition, [&](const Variable *v) {
            params_only = params_only && v->param.defined();
        });
        if (!params_only) return;
        for (const Stmt &c : checks)
            if (equal(c, Stmt(a))) return;
        checks.push_back(a);
    });
    return checks;
}

} // namespace

Stmt add_image_checks(const Stmt &input_body, const std::vector<Argument> &args) {
    std::vector<Stmt> region_checks;
    InputReaders readers;
    input_body.accept(&readers);
    FindComputeLoops compute_loops;
    input_body.accept(&compute_loops);
    std::set<const For *> stops = compute_loops.loops;
    stops.insert(compute_loops.kernels.begin(), compute_loops.kernels.end());
    Stmt outside = WithoutLoopBodies(stops).mutate(input_body);
    std::vector<DeferredInput> deferred;
    std::vector<std::pair<std::string, Expr>> fits_lets;
    Access hoisted; // only its definitions: those of every input's region
    for (const Argument &a : args) {
        if (!a.is_buffer || a.is_output) continue;
        // The message names the Funcs that read the buffer.
        std::string described = a.name;
        const std::vector<std::string> &by = readers.readers[a.name];
        for (size_t i = 0; i < by.size(); i++)
            described += (i == 0 ? "\x1f" : ", ") + by[i];
        // The region over the whole pipeline, as tight as box_required finds it, with checks that
        // the buffer covers it. The lets it names go around the checks, at the top.
        std::string read_by;
        for (size_t i = 0; i < by.size(); i++)
            read_by += (i == 0               ? " (read by "
                        : i + 1 == by.size() ? " and "
                                             : ", ") +
                       by[i] + (i + 1 == by.size() ? ")" : "");
        auto whole_region = [&input_body, &hoisted, a, described, read_by]() {
            Access read = box_required(input_body, a.name, Scope<Interval>(), Scope<Interval>(),
                                       LetsByName::WhenLarge);
            merge_definitions(hoisted, read);
            for (int d = 0; read.used && d < a.dimensions; d++) {
                if (read.box[d].is_bounded()) continue;
                // A loop of 2^30 iterations or more (a split by such a factor): its tiles'
                // coordinates pass the 32-bit range, where the region is unbounded.
                const For *huge = nullptr;
                visit_each<For>(input_body, [&](const For *l) {
                    auto n = as_const_int(l->extent);
                    if (!huge && n && *n >= (int64_t(1) << 30)) huge = l;
                });
                user_assert(!huge)
                    << "AICF cannot bound the region of input " << a.name << " read in dimension "
                    << d << ": the loop " << loop_for_users(huge->name) << " runs "
                    << *as_const_int(huge->extent)
                    << " iterations (a split by that factor), so the coordinates of its tiles "
                    << "pass the 32-bit range. Split by a factor no larger than the extent the "
                    << "loop covers.";
                user_error << "AICF cannot bound the region of input " << a.name << read_by
                           << " in dimension " << d
                           << ": an index into it is data-dependent or unbounded (a value loaded "
                           << "from memory, such as a gather " << a.name
                           << "(idx(i)), has no range AICF can know). Clamp the index to the "
                           << "valid range, e.g. " << a.name << "(clamp(idx(i), 0, n - 1), ...).";
            }
            return read.used ? checks_buffer_covers(a.name, read, described) : std::vector<Stmt>();
        };
        if (stops.empty()) {
            // Nothing is computed in loops: the whole region is what is checked.
            std::vector<Stmt> whole = whole_region();
            region_checks.insert(region_checks.end(), whole.begin(), whole.end());
            continue;
        }
        // Where Funcs are computed in loops, the whole region only decides whether each
        // iteration's is checked instead: its range over the loops, found in one walk, serves
        // (box_required's, found through every stage's region, grows with the number of stages
        // that nest it), and the tighter region is found only where a part of the pipeline
        // cannot be bounded. Where the range cannot be bounded either, that region decides.
        Access range = ranges_over_iterations(input_body, {}, a.name).read;
        if (!range.used) continue;
        bool bounded = true;
        for (const Interval &i : range.box)
            bounded = bounded && i.is_bounded();
        std::vector<Stmt> whole;
        if (bounded) {
            merge_definitions(hoisted, range);
            whole = checks_buffer_covers(a.name, range, described);
        } else {
            whole = whole_region();
        }
        // The region over the whole pipeline is a bound found by interval arithmetic, which
        // can exceed what the pipeline reads: where a Func is computed per tile and the last
        // tile is shorter, the tile's start and its length are bounded separately. When that
        // bound does not fit, the region each iteration of the loops where Funcs are computed
        // reads is checked instead, before the iteration reads it (exactly for the iteration's
        // own variables), together with what is read outside those loops.
        Expr fit;
        for (const Stmt &c : whole) {
            Expr cond = c.as<AssertStmt>()->condition;
            fit = fit.defined() ? make_and(fit, cond) : cond;
        }
        // (The tighter region, when a part needs it, is found once.)
        auto found = std::make_shared<Stmt>(bounded ? Stmt() : Block::make(whole));
        DeferredInput in{a, described, a.name + ".fits_read_region", [whole_region, found]() {
                             if (!found->defined()) *found = Block::make(whole_region());
                             return *found;
                         }};
        fits_lets.emplace_back(in.fits, simplify(fit));
        if (Stmt c = checks_of_part(in, outside); c.defined()) region_checks.push_back(c);
        deferred.push_back(in);
    }
    Stmt body = input_body;
    if (!deferred.empty())
        body = CheckInsideComputeLoops(compute_loops.loops, compute_loops.kernels, deferred)
                   .mutate(body);
    // The elements of a Tuple-valued output share one shape.
    for (size_t i = 0; i < args.size(); i++) {
        const Argument &a = args[i];
        StorageNameParts storage = parse_storage_name(a.name);
        if (!a.is_output || !storage.of_tuple || storage.value_index == 0) continue;
        std::string first = storage_name(storage.func, 0, 2);
        for (int d = 0; d < a.dimensions; d++) {
            Expr mn = field(a.name, BufferField::Min, d),
                 ex = field(a.name, BufferField::Extent, d);
            Expr mn0 = field(first, BufferField::Min, d),
                 ex0 = field(first, BufferField::Extent, d);
            Expr same = make_and(EQ::make(mn, mn0), EQ::make(ex, ex0));
            region_checks.push_back(check(same, RuntimeErrorKind::TupleShapesDiffer,
                                          first + "\x1f" + a.name,
                                          {i32(d), mn0, Sub::make(Add::make(mn0, ex0), i32(1)), mn,
                                           Sub::make(Add::make(mn, ex), i32(1))}));
        }
    }
    Stmt s = after_leading_checks(body, Block::make(region_checks));
    if (std::vector<Stmt> factors = split_factor_checks(input_body); !factors.empty())
        s = Block::make(Block::make(factors), s);
    for (auto it = fits_lets.rbegin(); it != fits_lets.rend(); ++it)
        s = LetStmt::make(it->first, it->second, s);
    s = with_definitions(hoisted, s);

    // Bind the shape of each buffer, after checking its rank, type and size.
    for (auto it = args.rbegin(); it != args.rend(); ++it) {
        const Argument &a = *it;
        if (!a.is_buffer) continue;
        Expr desc = Variable::make(Handle(), buffer_descriptor_name(a.name));
        std::vector<Stmt> shape_checks;
        Expr span = make_const(Int(64), int64_t(0));
        for (int d = 0; d < a.dimensions; d++) {
            Expr ex = field(a.name, BufferField::Extent, d);
            Expr st = field(a.name, BufferField::Stride, d);
            shape_checks.push_back(check(GE::make(ex, i32(0)),
                                         RuntimeErrorKind::BufferExtentNegative, a.name,
                                         {i32(d), ex}));
            // Loops run to min + extent, which must be an int32 too.
            Expr mn = field(a.name, BufferField::Min, d);
            shape_checks.push_back(check(
                LE::make(Add::make(i64(mn), i64(ex)), make_const(Int(64), int64_t(0x7fffffff))),
                RuntimeErrorKind::BufferEndTooLarge, a.name, {i32(d), mn, ex}));
            Expr abs_stride = Call::make(Int(64), Intrinsic::abs, {i64(st)});
            span = Add::make(span,
                             Mul::make(i64(Max::make(Sub::make(ex, i32(1)), i32(0))), abs_stride));
        }
        // The strides the code takes as constants (a concrete Buffer's, JIT-compiled): the
        // buffer passed is that Buffer, so they hold, but a mismatch is an error, never wrong
        // addresses.
        for (int d = 1; d < a.dimensions && d < int(a.known_strides.size()); d++) {
            Expr stride = Call::make(Int(32), Intrinsic::buffer_get_stride, {desc, i32(d)});
            shape_checks.insert(shape_checks.begin(),
                                check(EQ::make(stride, i32(a.known_strides[d])),
                                      RuntimeErrorKind::BufferStrideChanged, a.name,
                                      {stride, i32(d), i32(a.known_strides[d])}));
        }
        if (a.dimensions > 0) {
            // (One point is dense whatever its stride.)
            Expr stride0 = Call::make(Int(32), Intrinsic::buffer_get_stride, {desc, i32(0)});
            Expr extent0 = Call::make(Int(32), Intrinsic::buffer_get_extent, {desc, i32(0)});
            shape_checks.insert(
                shape_checks.begin(),
                check(Or::make(EQ::make(stride0, i32(1)), LE::make(extent0, i32(1))),
                      RuntimeErrorKind::BufferStride, a.name, {stride0}));
        }
        Expr limit = make_const(Int(64), int64_t(0x7fffffff));
        shape_checks.push_back(
            check(LT::make(span, limit), RuntimeErrorKind::BufferTooLarge, a.name, {span}));
        s = Block::make(Block::make(shape_checks), s);
        for (int d = a.dimensions - 1; d >= 0; d--) {
            Expr dim = i32(d);
            // Dimension 0 is dense (checked above), so its stride is the constant 1 and
            // accesses along it become contiguous vector loads and stores.
            Expr stride = d == 0 ? i32(1)
                          : d < int(a.known_strides.size())
                              ? i32(a.known_strides[d])
                              : Call::make(Int(32), Intrinsic::buffer_get_stride, {desc, dim});
            s = LetStmt::make(buffer_field_name(a.name, BufferField::Stride, d), stride, s);
            s = LetStmt::make(buffer_field_name(a.name, BufferField::Extent, d),
                              Call::make(Int(32), Intrinsic::buffer_get_extent, {desc, dim}), s);
            s = LetStmt::make(buffer_field_name(a.name, BufferField::Min, d),
                              Call::make(Int(32), Intrinsic::buffer_get_min, {desc, dim}), s);
        }
        s = LetStmt::make(a.name, Call::make(Handle(), Intrinsic::buffer_get_host, {desc}), s);
        Expr code = Call::make(Int(32), Intrinsic::buffer_get_type_code, {desc});
        Expr bits = Call::make(Int(32), Intrinsic::buffer_get_type_bits, {desc});
        Expr dims = Call::make(Int(32), Intrinsic::buffer_get_dimensions, {desc});
        Stmt type_check =
            check(make_and(EQ::make(code, i32(int(a.type.code))), EQ::make(bits, i32(a.type.bits))),
                  RuntimeErrorKind::BufferType, a.name,
                  {code, bits, i32(int(a.type.code)), i32(a.type.bits)});
        Stmt dims_check =
            check(EQ::make(dims, i32(a.dimensions)), RuntimeErrorKind::BufferDimensions, a.name,
                  {dims, i32(a.dimensions)});
        s = Block::make({dims_check, type_check, s});
    }
    return s;
}

} // namespace lowering
} // namespace aicf
