#include "lowering/KernelSerialization.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IR.h"

#include <cstring>
#include <string>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

const char kMagic[4] = {'A', 'K', 'I', 'R'};
const uint32_t kVersion = 1;

class Writer {
public:
    std::vector<uint8_t> out;

    template <typename T> void raw(T v) {
        static_assert(std::is_trivially_copyable_v<T>);
        uint8_t bytes[sizeof(T)];
        std::memcpy(bytes, &v, sizeof(T));
        out.insert(out.end(), bytes, bytes + sizeof(T));
    }
    void str(const std::string &s) {
        raw(uint32_t(s.size()));
        out.insert(out.end(), s.begin(), s.end());
    }
    void type(Type t) {
        raw(uint8_t(t.code));
        raw(t.bits);
        raw(t.lanes);
    }
    void expr(const Expr &e) {
        if (!e.defined()) {
            raw(uint8_t(0xff));
            return;
        }
        raw(uint8_t(e->node_type));
        switch (e->node_type) {
        case IRNodeType::IntImm:
            type(e.type());
            raw(e.as<IntImm>()->value);
            return;
        case IRNodeType::UIntImm:
            type(e.type());
            raw(e.as<UIntImm>()->value);
            return;
        case IRNodeType::FloatImm:
            type(e.type());
            raw(e.as<FloatImm>()->value);
            return;
        case IRNodeType::StringImm:
            str(e.as<StringImm>()->value);
            return;
        case IRNodeType::Cast:
            type(e.type());
            expr(e.as<Cast>()->value);
            return;
        case IRNodeType::Reinterpret:
            type(e.type());
            expr(e.as<Reinterpret>()->value);
            return;
        case IRNodeType::Variable:
            type(e.type());
            str(e.as<Variable>()->name);
            return;
#define AICF_WRITE_BINARY(N)                                                                       \
    case IRNodeType::N:                                                                            \
        expr(e.as<N>()->a);                                                                        \
        expr(e.as<N>()->b);                                                                        \
        return;
            AICF_WRITE_BINARY(Add)
            AICF_WRITE_BINARY(Sub)
            AICF_WRITE_BINARY(Mul)
            AICF_WRITE_BINARY(Div)
            AICF_WRITE_BINARY(Mod)
            AICF_WRITE_BINARY(Min)
            AICF_WRITE_BINARY(Max)
            AICF_WRITE_BINARY(EQ)
            AICF_WRITE_BINARY(NE)
            AICF_WRITE_BINARY(LT)
            AICF_WRITE_BINARY(LE)
            AICF_WRITE_BINARY(GT)
            AICF_WRITE_BINARY(GE)
            AICF_WRITE_BINARY(And)
            AICF_WRITE_BINARY(Or)
#undef AICF_WRITE_BINARY
        case IRNodeType::Not:
            expr(e.as<Not>()->a);
            return;
        case IRNodeType::Select: {
            const Select *s = e.as<Select>();
            expr(s->condition);
            expr(s->true_value);
            expr(s->false_value);
            return;
        }
        case IRNodeType::Load: {
            const Load *l = e.as<Load>();
            type(l->type);
            str(l->name);
            expr(l->index);
            expr(l->predicate);
            return;
        }
        case IRNodeType::Ramp: {
            const Ramp *r = e.as<Ramp>();
            expr(r->base);
            expr(r->stride);
            raw(int32_t(r->lanes));
            return;
        }
        case IRNodeType::Broadcast:
            expr(e.as<Broadcast>()->value);
            raw(int32_t(e.as<Broadcast>()->lanes));
            return;
        case IRNodeType::Call: {
            const Call *c = e.as<Call>();
            internal_assert(c->intrinsic != Intrinsic::none)
                << "kernel serialization: a call to " << c->name << " in a kernel";
            type(c->type);
            raw(uint8_t(c->intrinsic));
            raw(uint8_t(c->call_type));
            raw(uint32_t(c->args.size()));
            for (const Expr &a : c->args)
                expr(a);
            return;
        }
        case IRNodeType::Let: {
            const Let *l = e.as<Let>();
            str(l->name);
            expr(l->value);
            expr(l->body);
            return;
        }
        default:
            internal_error << "kernel serialization: a statement where an expression belongs";
        }
    }
    void stmt(const Stmt &s) {
        if (!s.defined()) {
            raw(uint8_t(0xff));
            return;
        }
        raw(uint8_t(s->node_type));
        switch (s->node_type) {
        case IRNodeType::LetStmt: {
            const LetStmt *l = s.as<LetStmt>();
            str(l->name);
            expr(l->value);
            stmt(l->body);
            return;
        }
        case IRNodeType::AssertStmt:
            expr(s.as<AssertStmt>()->condition);
            expr(s.as<AssertStmt>()->message);
            return;
        case IRNodeType::ProducerConsumer: {
            const ProducerConsumer *p = s.as<ProducerConsumer>();
            str(p->name);
            raw(uint8_t(p->is_producer));
            stmt(p->body);
            return;
        }
        case IRNodeType::For: {
            const For *f = s.as<For>();
            str(f->name);
            expr(f->min);
            expr(f->extent);
            raw(uint8_t(f->for_type));
            raw(int8_t(f->gpu_dim));
            stmt(f->body);
            return;
        }
        case IRNodeType::Store: {
            const Store *st = s.as<Store>();
            str(st->name);
            expr(st->value);
            expr(st->index);
            expr(st->predicate);
            return;
        }
        case IRNodeType::Allocate: {
            const Allocate *a = s.as<Allocate>();
            str(a->name);
            type(a->type);
            raw(uint8_t(a->memory_type));
            raw(uint32_t(a->extents.size()));
            for (const Expr &x : a->extents)
                expr(x);
            stmt(a->body);
            return;
        }
        case IRNodeType::Free:
            str(s.as<Free>()->name);
            return;
        case IRNodeType::Block:
            stmt(s.as<Block>()->first);
            stmt(s.as<Block>()->rest);
            return;
        case IRNodeType::IfThenElse: {
            const IfThenElse *i = s.as<IfThenElse>();
            expr(i->condition);
            stmt(i->then_case);
            stmt(i->else_case);
            return;
        }
        case IRNodeType::Evaluate:
            expr(s.as<Evaluate>()->value);
            return;
        default:
            internal_error << "kernel serialization: a Provide or Realize in a kernel";
        }
    }
};

class Reader {
public:
    Reader(const uint8_t *data, size_t size) : data(data), size(size) {}

    template <typename T> T raw() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, data + at, sizeof(T));
        at += sizeof(T);
        return v;
    }
    std::string str() {
        uint32_t n = raw<uint32_t>();
        need(n);
        std::string s(reinterpret_cast<const char *>(data + at), n);
        at += n;
        return s;
    }
    Type type() {
        uint8_t code = raw<uint8_t>();
        uint8_t bits = raw<uint8_t>();
        uint16_t lanes = raw<uint16_t>();
        check(code <= uint8_t(TypeCode::Handle) && lanes >= 1, "a type");
        return Type(static_cast<TypeCode>(code), bits, lanes);
    }
    Expr expr() {
        Depth depth(*this);
        uint8_t tag = raw<uint8_t>();
        if (tag == 0xff) return Expr();
        check(tag <= uint8_t(IRNodeType::Let), "an expression");
        switch (static_cast<IRNodeType>(tag)) {
        case IRNodeType::IntImm: {
            Type t = type();
            return IntImm::make(t, raw<int64_t>());
        }
        case IRNodeType::UIntImm: {
            Type t = type();
            return UIntImm::make(t, raw<uint64_t>());
        }
        case IRNodeType::FloatImm: {
            Type t = type();
            return FloatImm::make(t, raw<double>());
        }
        case IRNodeType::StringImm:
            return StringImm::make(str());
        case IRNodeType::Cast: {
            Type t = type();
            return Cast::make(t, defined(expr()));
        }
        case IRNodeType::Reinterpret: {
            Type t = type();
            return Reinterpret::make(t, defined(expr()));
        }
        case IRNodeType::Variable: {
            Type t = type();
            return Variable::make(t, str());
        }
#define AICF_READ_BINARY(N)                                                                        \
    case IRNodeType::N: {                                                                          \
        Expr a = defined(expr());                                                                  \
        Expr b = defined(expr());                                                                  \
        check(a.type() == b.type(), "operands of one type");                                       \
        return N::make(a, b);                                                                      \
    }
            AICF_READ_BINARY(Add)
            AICF_READ_BINARY(Sub)
            AICF_READ_BINARY(Mul)
            AICF_READ_BINARY(Div)
            AICF_READ_BINARY(Mod)
            AICF_READ_BINARY(Min)
            AICF_READ_BINARY(Max)
            AICF_READ_BINARY(EQ)
            AICF_READ_BINARY(NE)
            AICF_READ_BINARY(LT)
            AICF_READ_BINARY(LE)
            AICF_READ_BINARY(GT)
            AICF_READ_BINARY(GE)
            AICF_READ_BINARY(And)
            AICF_READ_BINARY(Or)
#undef AICF_READ_BINARY
        case IRNodeType::Not:
            return Not::make(defined(expr()));
        case IRNodeType::Select: {
            Expr c = defined(expr());
            Expr t = defined(expr());
            Expr f = defined(expr());
            check(t.type() == f.type(), "select operands of one type");
            return Select::make(c, t, f);
        }
        case IRNodeType::Load: {
            Type t = type();
            std::string name = str();
            Expr index = defined(expr());
            Expr predicate = defined(expr());
            return Load::make(t, name, index, predicate);
        }
        case IRNodeType::Ramp: {
            Expr base = defined(expr());
            Expr stride = defined(expr());
            int32_t lanes = raw<int32_t>();
            check(lanes >= 1 && lanes <= 1024, "a vector width");
            return Ramp::make(base, stride, lanes);
        }
        case IRNodeType::Broadcast: {
            Expr value = defined(expr());
            int32_t lanes = raw<int32_t>();
            check(lanes >= 1 && lanes <= 1024, "a vector width");
            return Broadcast::make(value, lanes);
        }
        case IRNodeType::Call: {
            Type t = type();
            uint8_t op = raw<uint8_t>();
            uint8_t call_type = raw<uint8_t>();
            check(op > 0 && op <= kIntrinsicCount &&
                      (call_type == Call::Intrinsic || call_type == Call::PureIntrinsic),
                  "an intrinsic");
            uint32_t n = raw<uint32_t>();
            check(n <= size - at, "a call's arguments");
            std::vector<Expr> args;
            for (uint32_t i = 0; i < n; i++)
                args.push_back(defined(expr()));
            return Call::make(t, static_cast<Intrinsic>(op), args,
                              static_cast<Call::CallType>(call_type));
        }
        case IRNodeType::Let: {
            std::string name = str();
            Expr value = defined(expr());
            return Let::make(name, value, defined(expr()));
        }
        default:
            check(false, "an expression");
            return Expr();
        }
    }
    Stmt stmt() {
        Depth depth(*this);
        uint8_t tag = raw<uint8_t>();
        if (tag == 0xff) return Stmt();
        switch (static_cast<IRNodeType>(tag)) {
        case IRNodeType::LetStmt: {
            std::string name = str();
            Expr value = defined(expr());
            return LetStmt::make(name, value, defined(stmt()));
        }
        case IRNodeType::AssertStmt: {
            Expr c = defined(expr());
            return AssertStmt::make(c, defined(expr()));
        }
        case IRNodeType::ProducerConsumer: {
            std::string name = str();
            bool producer = raw<uint8_t>() != 0;
            return ProducerConsumer::make(name, producer, defined(stmt()));
        }
        case IRNodeType::For: {
            std::string name = str();
            Expr min = defined(expr());
            Expr extent = defined(expr());
            uint8_t for_type = raw<uint8_t>();
            int8_t dim = raw<int8_t>();
            check(for_type <= uint8_t(ForType::GPULane) && dim >= -1 && dim <= 2, "a loop");
            return For::make(name, min, extent, static_cast<ForType>(for_type),
                             static_cast<GPUDim>(dim), defined(stmt()));
        }
        case IRNodeType::Store: {
            std::string name = str();
            Expr value = defined(expr());
            Expr index = defined(expr());
            return Store::make(name, value, index, defined(expr()));
        }
        case IRNodeType::Allocate: {
            std::string name = str();
            Type t = type();
            uint8_t memory = raw<uint8_t>();
            check(memory <= uint8_t(MemoryType::GPUShared), "a memory type");
            uint32_t n = raw<uint32_t>();
            check(n <= 16, "an allocation's extents");
            std::vector<Expr> extents;
            for (uint32_t i = 0; i < n; i++)
                extents.push_back(defined(expr()));
            return Allocate::make(name, t, static_cast<MemoryType>(memory), extents,
                                  defined(stmt()));
        }
        case IRNodeType::Free:
            return Free::make(str());
        case IRNodeType::Block: {
            Stmt first = defined(stmt());
            return Block::make(first, defined(stmt()));
        }
        case IRNodeType::IfThenElse: {
            Expr c = defined(expr());
            Stmt then_case = defined(stmt());
            return IfThenElse::make(c, then_case, stmt());
        }
        case IRNodeType::Evaluate:
            return Evaluate::make(defined(expr()));
        default:
            check(false, "a statement");
            return Stmt();
        }
    }

    void check(bool ok, const char *what) const {
        if (!ok) {
            runtime_error_report << "The kernel IR embedded in a compiled pipeline is damaged: "
                                 << "at byte " << at << ", expected " << what << ".";
        }
    }
    void need(size_t n) const {
        check(n <= size - at, "more bytes");
    }
    bool at_end() const {
        return at == size;
    }

private:
    const uint8_t *data;
    size_t size, at = 0;
    int depth = 0;

    // Nesting deeper than any kernel (a damaged tree must not exhaust the stack).
    struct Depth {
        Reader &r;
        explicit Depth(Reader &r) : r(r) {
            r.check(++r.depth < 20000, "a tree of reasonable depth");
        }
        ~Depth() { r.depth--; }
    };
    Expr defined(Expr e) const {
        check(e.defined(), "an expression");
        return e;
    }
    Stmt defined(Stmt s) const {
        check(s.defined(), "a statement");
        return s;
    }
};

} // namespace

std::vector<uint8_t> serialize_kernel(const LoweredKernel &k) {
    Writer w;
    for (char c : kMagic)
        w.raw(c);
    w.raw(kVersion);
    w.str(k.name);
    w.str(k.target.to_string());
    w.raw(uint32_t(k.funcs.size()));
    for (const std::string &f : k.funcs)
        w.str(f);
    w.raw(uint32_t(k.args.size()));
    for (const KernelArgument &a : k.args) {
        w.str(a.name);
        w.raw(uint8_t(a.is_buffer));
        w.type(a.type);
        w.raw(uint8_t(a.read));
        w.raw(uint8_t(a.written));
    }
    for (int i = 0; i < 3; i++) {
        w.raw(int32_t(k.threads[size_t(i)]));
        w.str(k.block_loops[size_t(i)]);
        w.str(k.thread_loops[size_t(i)]);
    }
    w.raw(uint32_t(k.loop_vars.size()));
    for (const std::string &v : k.loop_vars)
        w.str(v);
    w.raw(k.shared_bytes);
    w.raw(uint32_t(k.shared.size()));
    for (const SharedAllocation &s : k.shared) {
        w.str(s.func);
        w.raw(s.offset);
        w.raw(s.bytes);
    }
    w.stmt(k.body);
    return w.out;
}

std::shared_ptr<const LoweredKernel> deserialize_kernel(const uint8_t *data, size_t size) {
    Reader r(data, size);
    for (char c : kMagic)
        r.check(r.raw<char>() == c, "the kernel IR marker");
    r.check(r.raw<uint32_t>() == kVersion, "kernel IR of this version of AICF");
    auto k = std::make_shared<LoweredKernel>();
    k->name = r.str();
    k->target = Target(r.str());
    uint32_t n = r.raw<uint32_t>();
    r.need(n);
    for (uint32_t i = 0; i < n; i++)
        k->funcs.push_back(r.str());
    n = r.raw<uint32_t>();
    r.need(n);
    for (uint32_t i = 0; i < n; i++) {
        KernelArgument a;
        a.name = r.str();
        a.is_buffer = r.raw<uint8_t>() != 0;
        a.type = r.type();
        a.read = r.raw<uint8_t>() != 0;
        a.written = r.raw<uint8_t>() != 0;
        k->args.push_back(a);
    }
    for (int i = 0; i < 3; i++) {
        k->threads[size_t(i)] = r.raw<int32_t>();
        r.check(k->threads[size_t(i)] >= 1 && k->threads[size_t(i)] <= 1024, "a block shape");
        k->block_loops[size_t(i)] = r.str();
        k->thread_loops[size_t(i)] = r.str();
    }
    n = r.raw<uint32_t>();
    r.need(n);
    for (uint32_t i = 0; i < n; i++)
        k->loop_vars.push_back(r.str());
    k->shared_bytes = r.raw<int64_t>();
    r.check(k->shared_bytes >= 0, "a shared memory size");
    n = r.raw<uint32_t>();
    r.need(n);
    for (uint32_t i = 0; i < n; i++) {
        SharedAllocation s;
        s.func = r.str();
        s.offset = r.raw<int64_t>();
        s.bytes = r.raw<int64_t>();
        k->shared.push_back(s);
    }
    k->body = r.stmt();
    r.check(k->body.defined() && r.at_end(), "the end of the kernel");
    return k;
}

} // namespace lowering
} // namespace aicf
