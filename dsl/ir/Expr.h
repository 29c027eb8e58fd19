#ifndef AICF_IR_EXPR_H
#define AICF_IR_EXPR_H

// The IR's handles (Expr, Stmt), its node kinds and the enums loops and allocations carry.
// Every node kind is listed once, in AICF_FOR_EACH_EXPR / AICF_FOR_EACH_STMT; the node enum,
// the visitor and the mutator are generated from these lists.

#include "dsl/ir/IntrusivePtr.h"
#include "dsl/ir/Type.h"

#include <cstdint>
#include <string>
#include <type_traits>

namespace aicf {
namespace ir {

#define AICF_FOR_EACH_EXPR(X)                                                                      \
    X(IntImm)                                                                                      \
    X(UIntImm)                                                                                     \
    X(FloatImm)                                                                                    \
    X(StringImm)                                                                                   \
    X(Cast)                                                                                        \
    X(Reinterpret)                                                                                 \
    X(Variable)                                                                                    \
    X(Add)                                                                                         \
    X(Sub)                                                                                         \
    X(Mul)                                                                                         \
    X(Div)                                                                                         \
    X(Mod)                                                                                         \
    X(Min)                                                                                         \
    X(Max)                                                                                         \
    X(EQ)                                                                                          \
    X(NE)                                                                                          \
    X(LT)                                                                                          \
    X(LE)                                                                                          \
    X(GT)                                                                                          \
    X(GE)                                                                                          \
    X(And)                                                                                         \
    X(Or)                                                                                          \
    X(Not)                                                                                         \
    X(Select)                                                                                      \
    X(Load)                                                                                        \
    X(Ramp)                                                                                        \
    X(Broadcast)                                                                                   \
    X(Call)                                                                                        \
    X(Let)

#define AICF_FOR_EACH_STMT(X)                                                                      \
    X(LetStmt)                                                                                     \
    X(AssertStmt)                                                                                  \
    X(ProducerConsumer)                                                                            \
    X(For)                                                                                         \
    X(Store)                                                                                       \
    X(Provide)                                                                                     \
    X(Allocate)                                                                                    \
    X(Free)                                                                                        \
    X(Realize)                                                                                     \
    X(Block)                                                                                       \
    X(IfThenElse)                                                                                  \
    X(Evaluate)

enum class IRNodeType : uint8_t {
#define AICF_ENUM_ENTRY(N) N,
    AICF_FOR_EACH_EXPR(AICF_ENUM_ENTRY) AICF_FOR_EACH_STMT(AICF_ENUM_ENTRY)
#undef AICF_ENUM_ENTRY
};

#define AICF_DECLARE_NODE(N) struct N;
AICF_FOR_EACH_EXPR(AICF_DECLARE_NODE)
AICF_FOR_EACH_STMT(AICF_DECLARE_NODE)
#undef AICF_DECLARE_NODE

class IRVisitor;
class IRMutator;
struct Expr;
struct Stmt;

struct IRNode : RefCounted {
    IRNodeType node_type;
    explicit IRNode(IRNodeType t) : node_type(t) {}
    virtual void accept(IRVisitor *v) const = 0;
};

struct BaseExprNode : IRNode {
    Type type;
    explicit BaseExprNode(IRNodeType t) : IRNode(t) {}
    virtual Expr mutate_expr(IRMutator *m) const = 0;
};

struct BaseStmtNode : IRNode {
    explicit BaseStmtNode(IRNodeType t) : IRNode(t) {}
    virtual Stmt mutate_stmt(IRMutator *m) const = 0;
};

template <typename T> struct ExprNode : BaseExprNode {
    ExprNode() : BaseExprNode(T::static_node_type) {}
    void accept(IRVisitor *v) const override;
    Expr mutate_expr(IRMutator *m) const override;
};

template <typename T> struct StmtNode : BaseStmtNode {
    StmtNode() : BaseStmtNode(T::static_node_type) {}
    void accept(IRVisitor *v) const override;
    Stmt mutate_stmt(IRMutator *m) const override;
};

struct Expr : IntrusivePtr<const BaseExprNode> {
    Expr() = default;
    Expr(const BaseExprNode *n) : IntrusivePtr<const BaseExprNode>(n) {}

    // Immediates from C++ scalars: int32, int64, float32, float64.
    Expr(int8_t v);
    Expr(int16_t v);
    Expr(int32_t v);
    Expr(int64_t v);
    Expr(uint8_t v);
    Expr(uint16_t v);
    Expr(uint32_t v);
    Expr(uint64_t v);
    // long long and unsigned long long, where they are other types than int64_t and uint64_t
    // (on Linux, long is 64 bits): 5LL is an int64, 5ULL a uint64.
    template <typename T, std::enable_if_t<std::is_integral<T>::value && sizeof(T) == 8 &&
                                               !std::is_same<T, int64_t>::value &&
                                               !std::is_same<T, uint64_t>::value,
                                           int> = 0>
    Expr(T v)
        : Expr(std::is_signed<T>::value ? Expr(static_cast<int64_t>(v))
                                        : Expr(static_cast<uint64_t>(v))) {}
    Expr(float v);
    Expr(double v);
    Expr(bool v);
    Expr(const float16_t &v);
    Expr(const bfloat16_t &v);
    explicit Expr(const std::string &s);

    Type type() const { return get()->type; }
    IRNodeType node_type() const { return get()->node_type; }
    void accept(IRVisitor *v) const { get()->accept(v); }

    template <typename T> const T *as() const {
        if (ptr && ptr->node_type == T::static_node_type) return static_cast<const T *>(ptr);
        return nullptr;
    }
};

struct Stmt : IntrusivePtr<const BaseStmtNode> {
    Stmt() = default;
    Stmt(const BaseStmtNode *n) : IntrusivePtr<const BaseStmtNode>(n) {}

    IRNodeType node_type() const { return get()->node_type; }
    void accept(IRVisitor *v) const { get()->accept(v); }

    template <typename T> const T *as() const {
        if (ptr && ptr->node_type == T::static_node_type) return static_cast<const T *>(ptr);
        return nullptr;
    }
};

// How a loop runs. A GPU loop also names the hardware dimension it maps onto (GPUDim).
enum class ForType : uint8_t {
    Serial,
    Parallel,
    Vectorized,
    Unrolled,
    GPUBlock,
    GPUThread,
    // The lanes of one warp (at most 32, a constant), in a schedule: lowering makes such a
    // loop the x thread loop of its warp, so no IR For has this type.
    GPULane,
};

// The hardware dimension of a GPU loop: x, y or z of the grid (GPUBlock) or of the block
// (GPUThread). Every other loop has None.
enum class GPUDim : int8_t {
    None = -1,
    X = 0,
    Y = 1,
    Z = 2,
};

// Where an allocation lives.
enum class MemoryType : uint8_t {
    Auto,
    Heap,
    Stack,
    Register,
    GPUShared,
};

// Whether a loop runs across GPU blocks or threads (it defines a launch's shape).
inline bool is_gpu_loop(ForType t) {
    return t == ForType::GPUBlock || t == ForType::GPUThread || t == ForType::GPULane;
}

const char *to_string(ForType t);
// "x", "y", "z", or "" for None.
const char *to_string(GPUDim d);
const char *to_string(MemoryType t);

} // namespace ir
} // namespace aicf

#endif
