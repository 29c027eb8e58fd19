#include "dsl/ir/IR.h"

#include "dsl/base/Changes.h"
#include "dsl/base/Error.h"
#include "dsl/base/Float16.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IRVisitor.h"

namespace aicf {
namespace ir {

template <typename T> void ExprNode<T>::accept(IRVisitor *v) const {
    v->visit(static_cast<const T *>(this));
}
template <typename T> Expr ExprNode<T>::mutate_expr(IRMutator *m) const {
    return m->visit(static_cast<const T *>(this));
}
template <typename T> void StmtNode<T>::accept(IRVisitor *v) const {
    v->visit(static_cast<const T *>(this));
}
template <typename T> Stmt StmtNode<T>::mutate_stmt(IRMutator *m) const {
    return m->visit(static_cast<const T *>(this));
}

#define AICF_INSTANTIATE_EXPR(N) template struct ExprNode<N>;
#define AICF_INSTANTIATE_STMT(N) template struct StmtNode<N>;
AICF_FOR_EACH_EXPR(AICF_INSTANTIATE_EXPR)
AICF_FOR_EACH_STMT(AICF_INSTANTIATE_STMT)
#undef AICF_INSTANTIATE_EXPR
#undef AICF_INSTANTIATE_STMT

Expr::Expr(int8_t v) : Expr(IntImm::make(Int(8), v)) {}
Expr::Expr(int16_t v) : Expr(IntImm::make(Int(16), v)) {}
Expr::Expr(int32_t v) : Expr(IntImm::make(Int(32), v)) {}
Expr::Expr(int64_t v) : Expr(IntImm::make(Int(64), v)) {}
Expr::Expr(uint8_t v) : Expr(UIntImm::make(UInt(8), v)) {}
Expr::Expr(uint16_t v) : Expr(UIntImm::make(UInt(16), v)) {}
Expr::Expr(uint32_t v) : Expr(UIntImm::make(UInt(32), v)) {}
Expr::Expr(uint64_t v) : Expr(UIntImm::make(UInt(64), v)) {}
Expr::Expr(float v) : Expr(FloatImm::make(Float(32), v)) {}
Expr::Expr(double v) : Expr(FloatImm::make(Float(64), v)) {}
Expr::Expr(bool v) : Expr(UIntImm::make(Bool(), v ? 1 : 0)) {}
Expr::Expr(const float16_t &v) : Expr(FloatImm::make(Float(16), static_cast<double>(v))) {}
Expr::Expr(const bfloat16_t &v) : Expr(FloatImm::make(BFloat(16), static_cast<double>(v))) {}
Expr::Expr(const std::string &s) : Expr(StringImm::make(s)) {}

const char *to_string(ForType t) {
    switch (t) {
    case ForType::Serial:
        return "serial";
    case ForType::Parallel:
        return "parallel";
    case ForType::Vectorized:
        return "vectorized";
    case ForType::Unrolled:
        return "unrolled";
    case ForType::GPUBlock:
        return "gpu_block";
    case ForType::GPUThread:
        return "gpu_thread";
    case ForType::GPULane:
        return "gpu_lane";
    }
    return "?";
}

const char *to_string(GPUDim d) {
    switch (d) {
    case GPUDim::None:
        return "";
    case GPUDim::X:
        return "x";
    case GPUDim::Y:
        return "y";
    case GPUDim::Z:
        return "z";
    }
    return "?";
}

const char *to_string(MemoryType t) {
    switch (t) {
    case MemoryType::Auto:
        return "auto";
    case MemoryType::Heap:
        return "heap";
    case MemoryType::Stack:
        return "stack";
    case MemoryType::Register:
        return "register";
    case MemoryType::GPUShared:
        return "gpu_shared";
    }
    return "?";
}

const char *to_string(Intrinsic i) {
    switch (i) {
    case Intrinsic::none:
        return "none";
#define AICF_INTRINSIC_NAME(N)                                                                     \
    case Intrinsic::N:                                                                             \
        return #N;
        AICF_FOR_EACH_INTRINSIC(AICF_INTRINSIC_NAME)
#undef AICF_INTRINSIC_NAME
    }
    return "?";
}

// Wraps an integer value into the range of an integer type (two's complement).
static int64_t wrap_to(Type t, int64_t v) {
    if (t.bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1))) u |= ~mask;
    return static_cast<int64_t>(u);
}

Expr IntImm::make(Type t, int64_t value) {
    internal_assert(t.is_int() && t.is_scalar()) << "IntImm of type " << to_string(t);
    auto *n = new IntImm;
    n->type = t;
    n->value = wrap_to(t, value);
    return n;
}

Expr UIntImm::make(Type t, uint64_t value) {
    internal_assert(t.is_uint() && t.is_scalar()) << "UIntImm of type " << to_string(t);
    auto *n = new UIntImm;
    n->type = t;
    n->value = t.bits >= 64 ? value : (value & ((uint64_t(1) << t.bits) - 1));
    return n;
}

Expr FloatImm::make(Type t, double value) {
    internal_assert(t.is_float() && t.is_scalar()) << "FloatImm of type " << to_string(t);
    auto *n = new FloatImm;
    n->type = t;
    // Keep the value exactly as the type would hold it.
    if (t == Float(32)) {
        value = static_cast<float>(value);
    } else if (t == Float(16)) {
        value = static_cast<double>(float16_t(value));
    } else if (t.is_bfloat()) {
        value = static_cast<double>(bfloat16_t(value));
    }
    n->value = value;
    return n;
}

Expr StringImm::make(const std::string &value) {
    auto *n = new StringImm;
    n->type = Handle();
    n->value = value;
    return n;
}

Expr Cast::make(Type t, Expr value) {
    internal_assert(value.defined()) << "Cast of undefined Expr";
    internal_assert(t.lanes == value.type().lanes)
        << "Cast from " << to_string(value.type()) << " to " << to_string(t);
    auto *n = new Cast;
    n->type = t;
    n->value = std::move(value);
    return n;
}

Expr Reinterpret::make(Type t, Expr value) {
    internal_assert(value.defined()) << "Reinterpret of undefined Expr";
    internal_assert(t.bits * t.lanes == value.type().bits * value.type().lanes)
        << "Reinterpret from " << to_string(value.type()) << " to " << to_string(t);
    auto *n = new Reinterpret;
    n->type = t;
    n->value = std::move(value);
    return n;
}

Expr Variable::make(Type t, const std::string &name) {
    internal_assert(!name.empty()) << "Variable with no name";
    auto *n = new Variable;
    n->type = t;
    n->name = name;
    return n;
}

Expr Variable::make(Type t, const std::string &name, Parameter param) {
    auto *n = new Variable;
    n->type = t;
    n->name = name;
    n->param = std::move(param);
    return n;
}

Expr Variable::make(Type t, const std::string &name, ReductionDomain rdom) {
    auto *n = new Variable;
    n->type = t;
    n->name = name;
    n->rdom = std::move(rdom);
    return n;
}

static void check_binary(const char *op, const Expr &a, const Expr &b) {
    internal_assert(a.defined() && b.defined()) << op << " of undefined Expr";
    internal_assert(a.type() == b.type())
        << op << " of mismatched types " << to_string(a.type()) << " and " << to_string(b.type());
}

#define AICF_ARITH_MAKE(N)                                                                         \
    Expr N::make(Expr a, Expr b) {                                                                 \
        check_binary(#N, a, b);                                                                    \
        auto *n = new N;                                                                           \
        n->type = a.type();                                                                        \
        n->a = std::move(a);                                                                       \
        n->b = std::move(b);                                                                       \
        return n;                                                                                  \
    }
AICF_ARITH_MAKE(Add)
AICF_ARITH_MAKE(Sub)
AICF_ARITH_MAKE(Mul)
AICF_ARITH_MAKE(Div)
AICF_ARITH_MAKE(Mod)
AICF_ARITH_MAKE(Min)
AICF_ARITH_MAKE(Max)
#undef AICF_ARITH_MAKE

#define AICF_CMP_MAKE(N)                                                                           \
    Expr N::make(Expr a, Expr b) {                                                                 \
        check_binary(#N, a, b);                                                                    \
        auto *n = new N;                                                                           \
        n->type = Bool(a.type().lanes);                                                            \
        n->a = std::move(a);                                                                       \
        n->b = std::move(b);                                                                       \
        return n;                                                                                  \
    }
AICF_CMP_MAKE(EQ)
AICF_CMP_MAKE(NE)
AICF_CMP_MAKE(LT)
AICF_CMP_MAKE(LE)
AICF_CMP_MAKE(GT)
AICF_CMP_MAKE(GE)
#undef AICF_CMP_MAKE

#define AICF_LOGIC_MAKE(N)                                                                         \
    Expr N::make(Expr a, Expr b) {                                                                 \
        check_binary(#N, a, b);                                                                    \
        internal_assert(a.type().is_bool()) << #N " of non-bool " << to_string(a.type());          \
        auto *n = new N;                                                                           \
        n->type = a.type();                                                                        \
        n->a = std::move(a);                                                                       \
        n->b = std::move(b);                                                                       \
        return n;                                                                                  \
    }
AICF_LOGIC_MAKE(And)
AICF_LOGIC_MAKE(Or)
#undef AICF_LOGIC_MAKE

Expr Not::make(Expr a) {
    internal_assert(a.defined() && a.type().is_bool()) << "Not of a non-bool";
    auto *n = new Not;
    n->type = a.type();
    n->a = std::move(a);
    return n;
}

Expr Select::make(Expr c, Expr t, Expr f) {
    internal_assert(c.defined() && t.defined() && f.defined()) << "Select of undefined Expr";
    internal_assert(c.type().is_bool()) << "Select condition is " << to_string(c.type());
    internal_assert(t.type() == f.type())
        << "Select of mismatched types " << to_string(t.type()) << " and " << to_string(f.type());
    internal_assert(c.type().lanes == 1 || c.type().lanes == t.type().lanes)
        << "Select condition lanes";
    auto *n = new Select;
    n->type = t.type();
    n->condition = std::move(c);
    n->true_value = std::move(t);
    n->false_value = std::move(f);
    return n;
}

Expr Load::make(Type t, const std::string &name, Expr index, Expr predicate, Parameter param) {
    internal_assert(index.defined() && index.type().is_int())
        << "Load of " << name << " with a non-integer index";
    internal_assert(index.type().lanes == t.lanes) << "Load of " << name << ": index lanes";
    if (!predicate.defined())
        predicate = t.lanes == 1 ? Expr(true) : Broadcast::make(true, t.lanes);
    auto *n = new Load;
    n->type = t;
    n->name = name;
    n->index = std::move(index);
    n->predicate = std::move(predicate);
    n->param = std::move(param);
    return n;
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
    internal_assert(base.defined() && stride.defined() && base.type() == stride.type())
        << "Ramp of mismatched base and stride";
    internal_assert(base.type().is_scalar() && lanes > 1) << "Ramp lanes";
    auto *n = new Ramp;
    n->type = base.type().with_lanes(lanes);
    n->base = std::move(base);
    n->stride = std::move(stride);
    n->lanes = lanes;
    return n;
}

Expr Broadcast::make(Expr value, int lanes) {
    internal_assert(value.defined() && value.type().is_scalar() && lanes > 1) << "Broadcast";
    auto *n = new Broadcast;
    n->type = value.type().with_lanes(lanes);
    n->value = std::move(value);
    n->lanes = lanes;
    return n;
}

Expr Call::make(Type t, ir::Intrinsic op, const std::vector<Expr> &args, CallType call_type) {
    for (const Expr &a : args)
        internal_assert(a.defined()) << "Call to " << to_string(op);
    auto *n = new Call;
    n->type = t;
    n->name = to_string(op);
    n->args = args;
    n->call_type = call_type;
    n->intrinsic = op;
    return n;
}

Expr Call::make_func(Type t, const std::string &name, const std::vector<Expr> &args,
                     FunctionPtr func, int value_index) {
    for (const Expr &a : args)
        internal_assert(a.defined()) << "Call to " << name;
    auto *n = new Call;
    n->type = t;
    n->name = name;
    n->args = args;
    n->call_type = Func;
    n->func = std::move(func);
    n->value_index = value_index;
    return n;
}

Expr Call::make_image(Type t, const std::string &name, const std::vector<Expr> &args,
                      Parameter param) {
    for (const Expr &a : args)
        internal_assert(a.defined()) << "Call to " << name;
    auto *n = new Call;
    n->type = t;
    n->name = name;
    n->args = args;
    n->call_type = Image;
    n->param = std::move(param);
    return n;
}

Expr Let::make(const std::string &name, Expr value, Expr body) {
    internal_assert(value.defined() && body.defined()) << "Let " << name;
    auto *n = new Let;
    n->type = body.type();
    n->name = name;
    n->value = std::move(value);
    n->body = std::move(body);
    return n;
}

Stmt LetStmt::make(const std::string &name, Expr value, Stmt body) {
    internal_assert(value.defined() && body.defined()) << "LetStmt " << name;
    auto *n = new LetStmt;
    n->name = name;
    n->value = std::move(value);
    n->body = std::move(body);
    return n;
}

Stmt AssertStmt::make(Expr condition, Expr message) {
    internal_assert(condition.defined() && condition.type().is_bool()) << "AssertStmt condition";
    internal_assert(message.defined()) << "AssertStmt message";
    auto *n = new AssertStmt;
    n->condition = std::move(condition);
    n->message = std::move(message);
    return n;
}

Stmt ProducerConsumer::make(const std::string &name, bool is_producer, Stmt body) {
    internal_assert(body.defined()) << "ProducerConsumer " << name;
    auto *n = new ProducerConsumer;
    n->name = name;
    n->is_producer = is_producer;
    n->body = std::move(body);
    return n;
}
Stmt ProducerConsumer::make_produce(const std::string &name, Stmt body) {
    return make(name, true, std::move(body));
}
Stmt ProducerConsumer::make_consume(const std::string &name, Stmt body) {
    return make(name, false, std::move(body));
}

Stmt For::make(const std::string &name, Expr min, Expr extent, ForType for_type, Stmt body) {
    return make(name, std::move(min), std::move(extent), for_type, GPUDim::None, std::move(body));
}

Stmt For::make(const std::string &name, Expr min, Expr extent, ForType for_type, GPUDim gpu_dim,
               Stmt body) {
    internal_assert(min.defined() && extent.defined() && body.defined()) << "For " << name;
    internal_assert(min.type().is_int() && min.type().is_scalar() && min.type() == extent.type())
        << "For " << name << " bounds of type " << to_string(min.type());
    internal_assert(is_gpu_loop(for_type) == (gpu_dim != GPUDim::None))
        << "For " << name << ": a " << to_string(for_type) << " loop with hardware dimension '"
        << to_string(gpu_dim) << "'; GPU loops have one, other loops none";
    internal_assert(for_type != ForType::GPULane)
        << "For " << name << ": lane loops become thread loops when loop nests are built";
    auto *n = new For;
    n->name = name;
    n->min = std::move(min);
    n->extent = std::move(extent);
    n->for_type = for_type;
    n->gpu_dim = gpu_dim;
    n->body = std::move(body);
    return n;
}

Stmt Store::make(const std::string &name, Expr value, Expr index, Expr predicate, Parameter param) {
    internal_assert(value.defined() && index.defined()) << "Store to " << name;
    internal_assert(index.type().is_int() && index.type().lanes == value.type().lanes)
        << "Store to " << name << ": index of type " << to_string(index.type());
    int lanes = value.type().lanes;
    if (!predicate.defined()) predicate = lanes == 1 ? Expr(true) : Broadcast::make(true, lanes);
    auto *n = new Store;
    n->name = name;
    n->value = std::move(value);
    n->index = std::move(index);
    n->predicate = std::move(predicate);
    n->param = std::move(param);
    return n;
}

Stmt Provide::make(const std::string &name, const std::vector<Expr> &values,
                   const std::vector<Expr> &args) {
    internal_assert(!values.empty()) << "Provide to " << name << " with no values";
    for (const Expr &v : values)
        internal_assert(v.defined()) << "Provide to " << name;
    for (const Expr &a : args)
        internal_assert(a.defined()) << "Provide to " << name;
    auto *n = new Provide;
    n->name = name;
    n->values = values;
    n->args = args;
    return n;
}

Stmt Allocate::make(const std::string &name, Type type, MemoryType memory_type,
                    const std::vector<Expr> &extents, Stmt body) {
    internal_assert(body.defined()) << "Allocate " << name;
    for (const Expr &e : extents)
        internal_assert(e.defined()) << "Allocate " << name << " extent";
    auto *n = new Allocate;
    n->name = name;
    n->type = type;
    n->memory_type = memory_type;
    n->extents = extents;
    n->body = std::move(body);
    return n;
}

Stmt Free::make(const std::string &name) {
    auto *n = new Free;
    n->name = name;
    return n;
}

Stmt Realize::make(const std::string &name, const std::vector<Type> &types, MemoryType memory_type,
                   const Region &bounds, Stmt body) {
    internal_assert(body.defined() && !types.empty()) << "Realize " << name;
    for (const Range &r : bounds)
        internal_assert(r.min.defined() && r.extent.defined()) << "Realize " << name << " bounds";
    auto *n = new Realize;
    n->name = name;
    n->types = types;
    n->memory_type = memory_type;
    n->bounds = bounds;
    n->body = std::move(body);
    return n;
}

Stmt Block::make(Stmt first, Stmt rest) {
    if (!first.defined()) return rest;
    if (!rest.defined()) return first;
    auto *n = new Block;
    n->first = std::move(first);
    n->rest = std::move(rest);
    return n;
}

Stmt Block::make(const std::vector<Stmt> &stmts) {
    Stmt result;
    for (auto it = stmts.rbegin(); it != stmts.rend(); ++it)
        result = make(*it, result);
    return result;
}

std::vector<Stmt> Block::parts(const Stmt &s) {
    std::vector<Stmt> out;
    std::vector<Stmt> pending{s}; // a stack: the later statements below the earlier ones
    while (!pending.empty()) {
        Stmt t = pending.back();
        pending.pop_back();
        if (const Block *b = t.as<Block>()) {
            pending.push_back(b->rest);
            pending.push_back(b->first);
        } else if (t.defined()) {
            out.push_back(t);
        }
    }
    return out;
}

Stmt IfThenElse::make(Expr condition, Stmt then_case, Stmt else_case) {
    internal_assert(condition.defined() && condition.type().is_bool() &&
                    condition.type().is_scalar())
        << "IfThenElse condition";
    internal_assert(then_case.defined()) << "IfThenElse with no then case";
    auto *n = new IfThenElse;
    n->condition = std::move(condition);
    n->then_case = std::move(then_case);
    n->else_case = std::move(else_case);
    return n;
}

Stmt Evaluate::make(Expr value) {
    internal_assert(value.defined()) << "Evaluate of undefined Expr";
    auto *n = new Evaluate;
    n->value = std::move(value);
    return n;
}

Parameter::Parameter(Type t, bool is_buffer, int dimensions, const std::string &name)
    : contents(new ParameterContents) {
    contents->type = t;
    contents->is_buffer = is_buffer;
    contents->dimensions = dimensions;
    contents->name = name;
}
const std::string &Parameter::name() const {
    return contents->name;
}
Type Parameter::type() const {
    return contents->type;
}
bool Parameter::is_buffer() const {
    return contents->is_buffer;
}
int Parameter::dimensions() const {
    return contents->dimensions;
}
void Parameter::set_scalar_bits(uint64_t bits) {
    contents->scalar_bits = bits;
    contents->scalar_set = true;
}
uint64_t Parameter::scalar_bits() const {
    return contents->scalar_bits;
}
bool Parameter::scalar_set() const {
    return contents->scalar_set;
}
void Parameter::set_buffer(std::shared_ptr<BufferStorage> b, bool concrete) {
    contents->buffer = std::move(b);
    contents->is_concrete_buffer = concrete;
}
const std::shared_ptr<BufferStorage> &Parameter::buffer() const {
    return contents->buffer;
}
bool Parameter::is_concrete_buffer() const {
    return contents->is_concrete_buffer;
}

std::string buffer_field_name(const std::string &buffer, BufferField field, int dim) {
    const char *f = field == BufferField::Min      ? "min"
                    : field == BufferField::Extent ? "extent"
                                                   : "stride";
    return buffer + "." + f + "." + std::to_string(dim);
}

Expr buffer_field(const Parameter &buffer, BufferField field, int dim) {
    return Variable::make(Int(32), buffer_field_name(buffer.name(), field, dim), buffer);
}

ReductionDomain::ReductionDomain(const std::vector<ReductionVariable> &domain)
    : contents(new ReductionDomainContents) {
    contents->domain = domain;
}
const std::vector<ReductionVariable> &ReductionDomain::domain() const {
    return contents->domain;
}
Expr ReductionDomain::predicate() const {
    return contents->predicate;
}
void ReductionDomain::where(Expr p) {
    detail::note_definition_change();
    // The predicate's reduction variables refer to this domain by name only: a reference
    // back to the domain from inside it would keep it alive forever.
    struct StripDomain : IRGraphMutator {
        const ReductionDomainContents *self;
        using IRMutator::visit;
        Expr visit(const Variable *op) override {
            if (op->rdom.get() != self) return op;
            return Variable::make(op->type, op->name);
        }
    } strip;
    strip.self = contents.get();
    p = strip.mutate(p);
    contents->predicate = contents->predicate.defined() ? And::make(contents->predicate, p) : p;
}

} // namespace ir
} // namespace aicf
