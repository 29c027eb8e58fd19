#include "lowering/AddImageChecks.h"

#include "dsl/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "lowering/BoxesRequired.h"
#include "lowering/Names.h"

#include <algorithm>
#include <map>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

Expr i32(int64_t v) { return make_const(Int(32), v); }
Expr i64(Expr e) { return cast(Int(64), std::move(e)); }
Expr field(const std::string &b, BufferField f, int d) {
    return Variable::make(Int(32), buffer_field_name(b, f, d));
}

Stmt check(Expr condition, RuntimeErrorKind kind, const std::string &buffer,
           std::vector<Expr> values) {
    std::vector<Expr> args = {i32(int64_t(kind)), StringImm::make(buffer)};
    for (Expr &v : values) args.push_back(i64(v));
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
        if (std::find(r.begin(), r.end(), producing.back()) == r.end()) r.push_back(producing.back());
    }
};

} // namespace

Stmt add_image_checks(const Stmt &body, const std::vector<Argument> &args) {
    std::vector<Stmt> region_checks;
    InputReaders readers;
    body.accept(&readers);
    for (const Argument &a : args) {
        if (!a.is_buffer || a.is_output) continue;
        Access read = box_required(body, a.name);
        if (!read.used) continue;
        // The message names the Funcs that read the buffer.
        std::string described = a.name;
        const std::vector<std::string> &by = readers.readers[a.name];
        for (size_t i = 0; i < by.size(); i++) described += (i == 0 ? "\x1f" : ", ") + by[i];
        for (int d = 0; d < a.dimensions; d++) {
            const Interval &need = read.box[d];
            user_assert(need.is_bounded())
                << "AICF cannot bound the region of input " << a.name << " read in dimension "
                << d << ": an index into it is data-dependent or unbounded. Clamp the index to "
                << "the valid range, e.g. " << a.name << "(clamp(i, 0, n - 1), ...).";
            Expr mn = field(a.name, BufferField::Min, d);
            Expr mx = Sub::make(Add::make(mn, field(a.name, BufferField::Extent, d)), i32(1));
            Expr need_min = simplify(need.min), need_max = simplify(need.max);
            // An empty region needs nothing, nor does a read in loops that do not run (an
            // empty output's producers).
            Expr ok = make_or(LT::make(need_max, need_min),
                              make_and(LE::make(mn, need_min), GE::make(mx, need_max)));
            if (read.condition.defined()) ok = make_or(Not::make(read.condition), ok);
            region_checks.push_back(check(ok, RuntimeErrorKind::InputTooSmall, described,
                                          {i32(d), need_min, need_max, mn, mx}));
        }
    }
    // The elements of a Tuple-valued output share one shape.
    for (size_t i = 0; i < args.size(); i++) {
        const Argument &a = args[i];
        size_t dot = a.name.rfind('.');
        if (!a.is_output || dot == std::string::npos || a.name.substr(dot + 1) == "0") continue;
        std::string first = a.name.substr(0, dot) + ".0";
        for (int d = 0; d < a.dimensions; d++) {
            Expr mn = field(a.name, BufferField::Min, d), ex = field(a.name, BufferField::Extent, d);
            Expr mn0 = field(first, BufferField::Min, d), ex0 = field(first, BufferField::Extent, d);
            Expr same = make_and(EQ::make(mn, mn0), EQ::make(ex, ex0));
            region_checks.push_back(check(same, RuntimeErrorKind::BufferTooSmall, a.name,
                                          {i32(d), mn0, Sub::make(Add::make(mn0, ex0), i32(1)), mn,
                                           Sub::make(Add::make(mn, ex), i32(1))}));
        }
    }
    Stmt s = Block::make(Block::make(region_checks), body);

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
            shape_checks.push_back(
                check(GE::make(ex, i32(0)), RuntimeErrorKind::BufferExtentNegative, a.name,
                      {i32(d), ex}));
            Expr abs_stride = Call::make(Int(64), Intrinsic::abs, {i64(st)});
            span = Add::make(span, Mul::make(i64(Max::make(Sub::make(ex, i32(1)), i32(0))),
                                             abs_stride));
        }
        if (a.dimensions > 0) {
            Expr stride0 = Call::make(Int(32), Intrinsic::buffer_get_stride, {desc, i32(0)});
            shape_checks.insert(shape_checks.begin(),
                                check(EQ::make(stride0, i32(1)), RuntimeErrorKind::BufferStride,
                                      a.name, {stride0}));
        }
        Expr limit = make_const(Int(64), int64_t(0x7fffffff));
        shape_checks.push_back(check(LT::make(span, limit), RuntimeErrorKind::BufferTooLarge,
                                     a.name, {span}));
        s = Block::make(Block::make(shape_checks), s);
        for (int d = a.dimensions - 1; d >= 0; d--) {
            Expr dim = i32(d);
            // Dimension 0 is dense (checked above), so its stride is the constant 1 and
            // accesses along it become contiguous vector loads and stores.
            Expr stride = d == 0 ? i32(1) : Call::make(Int(32), Intrinsic::buffer_get_stride, {desc, dim});
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
        Stmt dims_check = check(EQ::make(dims, i32(a.dimensions)),
                                RuntimeErrorKind::BufferDimensions, a.name,
                                {dims, i32(a.dimensions)});
        s = Block::make({dims_check, type_check, s});
    }
    return s;
}

} // namespace lowering
} // namespace aicf
