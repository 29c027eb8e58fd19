#include "dsl/ir/IRPrinter.h"

#include "dsl/ir/IRVisitor.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <map>
#include <sstream>

namespace aicf {
namespace ir {

namespace {

class IRPrinter : public IRVisitor {
public:
    explicit IRPrinter(std::ostream &os, bool shared = false) : os(os), shared(shared) {}

    void print(const Expr &e) {
        if (!e.defined()) {
            os << "(undefined)";
            return;
        }
        if (shared && !is_leaf(e)) {
            auto [it, first] = numbers.emplace(e.get(), numbers.size());
            os << "@" << it->second;
            if (!first) return;
            os << "=";
        }
        e.accept(this);
    }
    void print(const Stmt &s) {
        if (!s.defined()) {
            indent();
            os << "(no-op)\n";
            return;
        }
        s.accept(this);
    }

private:
    std::ostream &os;
    int depth = 0;
    // Shared mode: each node is written once, then referred to by its number.
    bool shared;
    std::map<const IRNode *, size_t> numbers;

    static bool is_leaf(const Expr &e) {
        return e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>() || e.as<StringImm>() ||
               e.as<Variable>();
    }

    void indent() {
        for (int i = 0; i < depth; i++)
            os << "  ";
    }
    void print_list(const std::vector<Expr> &es) {
        for (size_t i = 0; i < es.size(); i++) {
            if (i) os << ", ";
            print(es[i]);
        }
    }
    void binary(const Expr &a, const char *op, const Expr &b) {
        os << "(";
        print(a);
        os << " " << op << " ";
        print(b);
        os << ")";
    }
    void body(const Stmt &s) {
        depth++;
        print(s);
        depth--;
    }

    void visit(const IntImm *op) override {
        if (op->type == Int(32)) {
            os << op->value;
        } else {
            os << "(" << to_string(op->type) << ")" << op->value;
        }
    }
    void visit(const UIntImm *op) override {
        if (op->type.is_bool()) {
            os << (op->value ? "true" : "false");
        } else {
            os << "(" << to_string(op->type) << ")" << op->value;
        }
    }
    void visit(const FloatImm *op) override {
        std::ostringstream s;
        s << std::setprecision(op->type.bits == 64 ? 17 : 9) << op->value;
        std::string text = s.str();
        if (std::isnan(op->value)) {
            // A NaN other than the default quiet one shows its bits (as a double): NaNs that
            // tag values differ only there, and compiled code is found by this text.
            uint64_t bits;
            std::memcpy(&bits, &op->value, sizeof bits);
            const uint64_t quiet = 0x7ff8000000000000ull, sign = uint64_t(1) << 63;
            if ((bits & ~sign) != quiet) {
                std::ostringstream payload;
                payload << "nan(0x" << std::hex << bits << ")";
                text = payload.str();
            }
        }
        if (text.find_first_of(".einf") == std::string::npos) text += ".0";
        os << text;
        if (op->type == Float(32)) os << "f";
        if (op->type == Float(16)) os << "h";
        if (op->type.is_bfloat()) os << "bf";
    }
    void visit(const StringImm *op) override { os << '"' << op->value << '"'; }
    void visit(const Cast *op) override {
        os << to_string(op->type) << "(";
        print(op->value);
        os << ")";
    }
    void visit(const Reinterpret *op) override {
        os << "reinterpret<" << to_string(op->type) << ">(";
        print(op->value);
        os << ")";
    }
    void visit(const Variable *op) override { os << op->name; }
    void visit(const Add *op) override { binary(op->a, "+", op->b); }
    void visit(const Sub *op) override { binary(op->a, "-", op->b); }
    void visit(const Mul *op) override { binary(op->a, "*", op->b); }
    void visit(const Div *op) override { binary(op->a, "/", op->b); }
    void visit(const Mod *op) override { binary(op->a, "%", op->b); }
    void visit(const Min *op) override {
        os << "min(";
        print(op->a);
        os << ", ";
        print(op->b);
        os << ")";
    }
    void visit(const Max *op) override {
        os << "max(";
        print(op->a);
        os << ", ";
        print(op->b);
        os << ")";
    }
    void visit(const EQ *op) override { binary(op->a, "==", op->b); }
    void visit(const NE *op) override { binary(op->a, "!=", op->b); }
    void visit(const LT *op) override { binary(op->a, "<", op->b); }
    void visit(const LE *op) override { binary(op->a, "<=", op->b); }
    void visit(const GT *op) override { binary(op->a, ">", op->b); }
    void visit(const GE *op) override { binary(op->a, ">=", op->b); }
    void visit(const And *op) override { binary(op->a, "&&", op->b); }
    void visit(const Or *op) override { binary(op->a, "||", op->b); }
    void visit(const Not *op) override {
        os << "!";
        print(op->a);
    }
    void visit(const Select *op) override {
        os << "select(";
        print(op->condition);
        os << ", ";
        print(op->true_value);
        os << ", ";
        print(op->false_value);
        os << ")";
    }
    void visit(const Load *op) override {
        os << op->name << "[";
        print(op->index);
        os << "]";
        if (!is_true(op->predicate)) {
            os << " if ";
            print(op->predicate);
        }
    }
    void visit(const Ramp *op) override {
        os << "ramp(";
        print(op->base);
        os << ", ";
        print(op->stride);
        os << ", " << op->lanes << ")";
    }
    void visit(const Broadcast *op) override {
        os << "x" << op->lanes << "(";
        print(op->value);
        os << ")";
    }
    void visit(const Call *op) override {
        os << op->name;
        if (op->call_type == Call::Func && op->value_index > 0) os << "." << op->value_index;
        os << "(";
        print_list(op->args);
        os << ")";
    }
    void visit(const Let *op) override {
        os << "(let " << op->name << " = ";
        print(op->value);
        os << " in ";
        print(op->body);
        os << ")";
    }
    void visit(const LetStmt *op) override {
        indent();
        os << "let " << op->name << " = ";
        print(op->value);
        os << "\n";
        print(op->body);
    }
    void visit(const AssertStmt *op) override {
        indent();
        os << "assert(";
        print(op->condition);
        os << ", ";
        print(op->message);
        os << ")\n";
    }
    void visit(const ProducerConsumer *op) override {
        indent();
        os << (op->is_producer ? "produce " : "consume ") << op->name << " {\n";
        body(op->body);
        indent();
        os << "}\n";
    }
    void visit(const For *op) override {
        indent();
        os << to_string(op->for_type);
        if (op->gpu_dim != GPUDim::None) os << "." << to_string(op->gpu_dim);
        os << " for (" << op->name << ", ";
        print(op->min);
        os << ", ";
        print(op->extent);
        os << ") {\n";
        body(op->body);
        indent();
        os << "}\n";
    }
    void visit(const Store *op) override {
        indent();
        os << op->name << "[";
        print(op->index);
        os << "] = ";
        print(op->value);
        if (!is_true(op->predicate)) {
            os << " if ";
            print(op->predicate);
        }
        os << "\n";
    }
    void visit(const Provide *op) override {
        indent();
        os << op->name << "(";
        print_list(op->args);
        os << ") = ";
        if (op->values.size() > 1) os << "{";
        print_list(op->values);
        if (op->values.size() > 1) os << "}";
        os << "\n";
    }
    void visit(const Allocate *op) override {
        indent();
        os << "allocate " << op->name << "[" << to_string(op->type);
        for (const Expr &e : op->extents) {
            os << " * ";
            print(e);
        }
        os << "] in " << to_string(op->memory_type) << "\n";
        print(op->body);
    }
    void visit(const Free *op) override {
        indent();
        os << "free " << op->name << "\n";
    }
    void visit(const Realize *op) override {
        indent();
        os << "realize " << op->name << "(";
        for (size_t i = 0; i < op->bounds.size(); i++) {
            if (i) os << ", ";
            os << "[";
            print(op->bounds[i].min);
            os << ", ";
            print(op->bounds[i].extent);
            os << "]";
        }
        os << ")";
        if (op->memory_type != MemoryType::Auto) os << " in " << to_string(op->memory_type);
        os << " {\n";
        body(op->body);
        indent();
        os << "}\n";
    }
    void visit(const Block *op) override {
        print(op->first);
        print(op->rest);
    }
    void visit(const IfThenElse *op) override {
        indent();
        os << "if (";
        print(op->condition);
        os << ") {\n";
        body(op->then_case);
        if (op->else_case.defined()) {
            indent();
            os << "} else {\n";
            body(op->else_case);
        }
        indent();
        os << "}\n";
    }
    void visit(const Evaluate *op) override {
        indent();
        print(op->value);
        os << "\n";
    }

    static bool is_true(const Expr &e) {
        if (const UIntImm *u = e.as<UIntImm>()) return u->value == 1;
        if (const Broadcast *b = e.as<Broadcast>()) return is_true(b->value);
        return false;
    }
};

} // namespace

std::ostream &operator<<(std::ostream &os, const Expr &e) {
    IRPrinter(os).print(e);
    return os;
}

std::ostream &operator<<(std::ostream &os, const Stmt &s) {
    IRPrinter(os).print(s);
    return os;
}

std::ostream &operator<<(std::ostream &os, const Type &t) {
    return os << to_string(t);
}

std::string to_string(const Expr &e) {
    std::ostringstream s;
    s << e;
    return s.str();
}

std::string to_shared_string(const Expr &e) {
    std::ostringstream s;
    IRPrinter(s, true).print(e);
    return s.str();
}

std::string to_string(const Stmt &s) {
    std::ostringstream o;
    o << s;
    return o.str();
}

std::string statement_text(const Stmt &s) {
    std::string text = to_string(s);
    while (!text.empty() && text.back() == '\n')
        text.pop_back();
    return text;
}

} // namespace ir
} // namespace aicf
