#ifndef AICF_IR_IR_H
#define AICF_IR_IR_H

// The IR nodes. Each node is immutable; `Node::make(...)` builds one and checks its arguments.
//
// Two levels share these nodes. Before storage flattening, Funcs are multi-dimensional:
// Realize allocates a Func over a region, Provide writes a point, Call (CallType::Func) reads
// one. After it, storage is flat: Allocate, Store and Load with a MemoryType.

#include "dsl/ir/Expr.h"
#include "dsl/ir/FunctionPtr.h"
#include "dsl/ir/Parameter.h"
#include "dsl/ir/Reduction.h"

#include <string>
#include <vector>

namespace aicf {
namespace ir {

// A closed range of a dimension, as min and extent.
struct Range {
    Expr min, extent;
    Range() = default;
    Range(Expr m, Expr e) : min(std::move(m)), extent(std::move(e)) {}
};
using Region = std::vector<Range>;

struct IntImm : ExprNode<IntImm> {
    int64_t value;
    static Expr make(Type t, int64_t value);
    static const IRNodeType static_node_type = IRNodeType::IntImm;
};

struct UIntImm : ExprNode<UIntImm> {
    uint64_t value;
    static Expr make(Type t, uint64_t value);
    static const IRNodeType static_node_type = IRNodeType::UIntImm;
};

struct FloatImm : ExprNode<FloatImm> {
    double value;
    static Expr make(Type t, double value);
    static const IRNodeType static_node_type = IRNodeType::FloatImm;
};

struct StringImm : ExprNode<StringImm> {
    std::string value;
    static Expr make(const std::string &value);
    static const IRNodeType static_node_type = IRNodeType::StringImm;
};

// A value converted to another type: integer narrowing wraps; float to int truncates toward
// zero and saturates at the type's limits, NaN to 0 (as CUDA's cvt.rzi.sat).
struct Cast : ExprNode<Cast> {
    Expr value;
    static Expr make(Type t, Expr value);
    static const IRNodeType static_node_type = IRNodeType::Cast;
};

// The same bits seen as another type of the same total width.
struct Reinterpret : ExprNode<Reinterpret> {
    Expr value;
    static Expr make(Type t, Expr value);
    static const IRNodeType static_node_type = IRNodeType::Reinterpret;
};

struct Variable : ExprNode<Variable> {
    std::string name;
    Parameter param;      // set when the variable is a scalar pipeline input
    ReductionDomain rdom; // set when the variable is a reduction variable
    static Expr make(Type t, const std::string &name);
    static Expr make(Type t, const std::string &name, Parameter param);
    static Expr make(Type t, const std::string &name, ReductionDomain rdom);
    static const IRNodeType static_node_type = IRNodeType::Variable;
};

#define AICF_BINARY_NODE(N)                                                                        \
    struct N : ExprNode<N> {                                                                       \
        Expr a, b;                                                                                 \
        static Expr make(Expr a, Expr b);                                                          \
        static const IRNodeType static_node_type = IRNodeType::N;                                  \
    };

// Integer division and modulo are Euclidean: the remainder is never negative
// (0 <= a % b < |b|), a == (a / b) * b + a % b, and x / 0 == 0, x % 0 == 0. So for a positive
// divisor, division rounds toward negative infinity. Float division follows IEEE, and float
// modulo is x - y * floor(x / y).
AICF_BINARY_NODE(Add)
AICF_BINARY_NODE(Sub)
AICF_BINARY_NODE(Mul)
AICF_BINARY_NODE(Div)
AICF_BINARY_NODE(Mod)
AICF_BINARY_NODE(Min)
AICF_BINARY_NODE(Max)
AICF_BINARY_NODE(EQ)
AICF_BINARY_NODE(NE)
AICF_BINARY_NODE(LT)
AICF_BINARY_NODE(LE)
AICF_BINARY_NODE(GT)
AICF_BINARY_NODE(GE)
AICF_BINARY_NODE(And)
AICF_BINARY_NODE(Or)
#undef AICF_BINARY_NODE

struct Not : ExprNode<Not> {
    Expr a;
    static Expr make(Expr a);
    static const IRNodeType static_node_type = IRNodeType::Not;
};

struct Select : ExprNode<Select> {
    Expr condition, true_value, false_value;
    static Expr make(Expr condition, Expr true_value, Expr false_value);
    static const IRNodeType static_node_type = IRNodeType::Select;
};

// A read of a flat allocation or buffer. `predicate` masks lanes (all true for plain loads).
struct Load : ExprNode<Load> {
    std::string name;
    Expr index, predicate;
    Parameter param; // set when reading a pipeline input buffer
    static Expr make(Type t, const std::string &name, Expr index, Expr predicate,
                     Parameter param = Parameter());
    static const IRNodeType static_node_type = IRNodeType::Load;
};

// The vector base, base + stride, ..., base + (lanes - 1) * stride.
struct Ramp : ExprNode<Ramp> {
    Expr base, stride;
    int lanes;
    static Expr make(Expr base, Expr stride, int lanes);
    static const IRNodeType static_node_type = IRNodeType::Ramp;
};

struct Broadcast : ExprNode<Broadcast> {
    Expr value;
    int lanes;
    static Expr make(Expr value, int lanes);
    static const IRNodeType static_node_type = IRNodeType::Broadcast;
};

// Operations that have no node of their own. Pure ones may be reordered or removed.
// Warp operations, in kernels: gpu_lane_index() is the thread's lane in its warp (PTX
// %laneid); gpu_shuffle_xor(value, offset, member_mask) is `value` as the lane (own lane xor
// offset) holds it, executed together by every lane of member_mask (shfl.sync.bfly).
// atomic_update(op, x, current) is the value op(current, x) a Provide or Store writes, with
// `current` the read of the point it writes: the read, the combination and the write are one
// atomic operation (op: an AtomicOp).
enum class AtomicOp : int { Add, Mul, Min, Max, And, Or, Xor }; // And, Or, Xor: bitwise
// alignment_hint(base, n), as the base of a dense vector access's Ramp: base is a multiple of
// n elements, so the access is one aligned wide access; n = 0: access it lane by lane.
// Tensor cores, in kernels (lowering/TensorCores.h has the fragment layouts), each executed
// together by all 32 lanes of a warp:
// gpu_mma(a, b, c) is d = a * b + c on one warp's fragments (mma.sync.aligned ... .row.col),
// the shape and types given by the operands' types: a bfloat16x8 or float16x8, b of the same
// type x4, c float32x4 (m16n8k16); or a float32x4, b float32x2, c float32x4 (m16n8k8, inputs
// rounded to TF32). The result is float32x4.
// gpu_ldmatrix(buffer, index, matrices, transpose) loads 1, 2 or 4 8x8 matrices of 16-bit
// elements from shared memory (ldmatrix.sync.aligned.m8n8): `buffer` (a StringImm) names it,
// `index` is the element where the row this lane supplies starts (lanes 8j..8j+7 give the rows
// of matrix j), `transpose` (a constant bool) selects .trans. The result (a 16-bit type with
// 2 * matrices lanes) holds, in lanes 2j and 2j + 1, this lane's two elements of matrix j.
// Asynchronous copies (cp.async, lowering/AsyncCopy.h), statements in kernels:
// gpu_cp_async(dst, dst_index, src, src_index, valid), of a type T x L of 4, 8 or 16 bytes,
// starts copying L elements of T from the device buffer `src` (a StringImm) at src_index to
// shared memory `dst` at dst_index: the first `valid` (0 to L) come from src, the rest are
// zeros. The thread may read the destination only once gpu_cp_async_wait(n) (a constant)
// finds at most n of its groups pending; gpu_cp_async_commit() closes its group of copies.
// Vectors from scalars and back (pure): make_vector(x0, ..., xn-1) is the vector of the n
// scalars (one type); extract_element(v, i) is lane i (a constant) of v.
// Warpgroup tensor cores (sm_90a, lowering/WarpgroupMMA.h has the layouts and makes the
// calls), each executed together by the 128 threads of a warpgroup:
// gpu_wgmma(zero, a_byte, a_lbo, a_sbo, b_byte, b_lbo, b_sbo, d, a_mn, b_mn) is
// wgmma.mma_async m64nNk16: d (float32 x N/2) plus A * B, A and B of zero's 16-bit float type
// read from shared memory at the byte offsets a_byte and b_byte, laid out as the constant lbo
// and sbo say, K-major or (a_mn, b_mn: 1) MN-major;
// gpu_wgmma_fence(d) and gpu_wgmma_wait(n, d) are d, ordered after wgmma.fence and after
// wgmma.wait_group n; gpu_wgmma_commit() closes a group; gpu_async_proxy_fence() makes the
// block's earlier shared-memory stores visible to wgmma (after the next barrier).
// fused_extent_bound(n) (pure, Int(32)), only between build_stage and
// bound_fused_thread_loops: the constant bound of the extent n (a let's value then known),
// where a loop fused onto GPU threads divides its index by it; n itself if it has none.
#define AICF_FOR_EACH_INTRINSIC(X)                                                                 \
    X(abs)                                                                                         \
    X(bitwise_and)                                                                                 \
    X(bitwise_or)                                                                                  \
    X(bitwise_xor)                                                                                 \
    X(bitwise_not)                                                                                 \
    X(shift_left)                                                                                  \
    X(shift_right)                                                                                 \
    X(sqrt)                                                                                        \
    X(rsqrt)                                                                                       \
    X(exp)                                                                                         \
    X(log)                                                                                         \
    X(tanh)                                                                                        \
    X(erf)                                                                                         \
    X(sin)                                                                                         \
    X(cos)                                                                                         \
    X(pow)                                                                                         \
    X(fma)                                                                                         \
    X(floor)                                                                                       \
    X(ceil)                                                                                        \
    X(round)                                                                                       \
    X(trunc)                                                                                       \
    X(is_nan)                                                                                      \
    X(is_inf)                                                                                      \
    X(likely)                                                                                      \
    X(buffer_get_host)                                                                             \
    X(buffer_get_min)                                                                              \
    X(buffer_get_extent)                                                                           \
    X(buffer_get_stride)                                                                           \
    X(buffer_get_dimensions)                                                                       \
    X(buffer_get_type_code)                                                                        \
    X(buffer_get_type_bits)                                                                        \
    X(runtime_error)                                                                               \
    X(heap_malloc)                                                                                 \
    X(heap_free)                                                                                   \
    X(gpu_thread_index)                                                                            \
    X(gpu_block_index)                                                                             \
    X(gpu_barrier)                                                                                 \
    X(gpu_lane_index)                                                                              \
    X(gpu_shuffle_xor)                                                                             \
    X(atomic_update)                                                                               \
    X(alignment_hint)                                                                              \
    X(gpu_launch)                                                                                  \
    X(device_malloc)                                                                               \
    X(device_free)                                                                                 \
    X(buffer_copy_to_host)                                                                         \
    X(prefetch_request)                                                                            \
    X(prefetch)                                                                                    \
    X(gpu_mma)                                                                                     \
    X(gpu_ldmatrix)                                                                                \
    X(gpu_cp_async)                                                                                \
    X(gpu_cp_async_commit)                                                                         \
    X(gpu_cp_async_wait)                                                                           \
    X(make_vector)                                                                                 \
    X(extract_element)                                                                             \
    X(gpu_wgmma)                                                                                   \
    X(gpu_wgmma_fence)                                                                             \
    X(gpu_wgmma_commit)                                                                            \
    X(gpu_wgmma_wait)                                                                              \
    X(gpu_async_proxy_fence)                                                                       \
    X(fused_extent_bound)

enum class Intrinsic : uint8_t {
    none,
#define AICF_INTRINSIC_ENTRY(N) N,
    AICF_FOR_EACH_INTRINSIC(AICF_INTRINSIC_ENTRY)
#undef AICF_INTRINSIC_ENTRY
};
const char *to_string(Intrinsic i);
#define AICF_COUNT_INTRINSIC(N) +1
// The number of intrinsics (the last one's value).
constexpr int kIntrinsicCount = 0 AICF_FOR_EACH_INTRINSIC(AICF_COUNT_INTRINSIC);
#undef AICF_COUNT_INTRINSIC

// The runtime errors generated code can raise. Each is reported with the Call's arguments.
enum class RuntimeErrorKind : int32_t {
    BufferNull = 1,
    BufferType,
    BufferDimensions,
    BufferTooSmall,
    BufferExtentNegative,
    BufferTooLarge,
    OutOfMemory,
    ParamOutOfRange,
    BufferStride,
    FuncBoundTooSmall,
    SplitFactorNotPositive,
    DeviceError, // a GPU device failed; the runtime records its own message
    // An input smaller than what the pipeline reads; the name is the buffer's, then '\x1f'
    // and the Funcs that read it, comma-separated.
    InputTooSmall,
    // An output smaller than the region its schedule writes (whole tiles of a split, a
    // bound(), updates at other points).
    OutputTooSmall,
    // A region rounded out by align_bounds past what 32-bit indices address.
    FuncRegionTooLarge,
    // A dimension padded by align_storage past what 32-bit indices address.
    StoragePaddingTooLarge,
    // An RDom extent known only at run time (a Param, a buffer size) that is negative.
    RDomExtentNegative,
    // A buffer whose min + extent passes 2^31 - 1.
    BufferEndTooLarge,
    // The storage of a Func (its name) past 2^31 - 1 elements.
    FuncStorageTooLarge,
    // A Func region spanning more than 2^31 - 1 points in one dimension.
    FuncRegionSpan,
    // Arguments of pipelines compiled ahead of time (AOTABI.h), checked by the runtime with
    // their own messages: memory of a device the pipeline does not take, and data or an
    // offset not aligned to the elements.
    BufferDevice,
    BufferMisaligned,
    // A pipeline compiled ahead of time for a CPU whose features this machine lacks, or a
    // library none of whose builds runs here.
    TargetUnsupported,
    // A concrete Buffer whose stride (in a dimension past the first) differs from the one
    // the JIT compiled the pipeline for.
    BufferStrideChanged,
    // An output of a pipeline compiled ahead of time that shares memory with an input,
    // another output, or itself (checked by the runtime, with its own message).
    BufferOverlap,
    // A Func region reaching past the coordinates 32-bit loops count ([-2^31, 2^31 - 2]).
    FuncRegionOutOfRange,
    // An RDom known only at run time whose last point passes 2^31 - 2.
    RDomEndTooLarge,
    // Two buffers of a Tuple-valued output with different regions; the name is the first's,
    // then '\x1f' and the other's.
    TupleShapesDiffer,
    // A loop fused from two whose extents, known only at run time, multiply past 2^31 - 1.
    FusedLoopTooLong,
    // An RDom bound known only at run time that passes the int32 range where it is computed
    // (p * q); the name is the variable's, then '\x1f' and the bound.
    RDomBoundWraps,
    // A value of a schedule known only at run time (a Param) that must be positive: the
    // name says which (the modulus of align_bounds(x) of f), the detail is the value.
    ScheduleValueNotPositive,
};

struct Call : ExprNode<Call> {
    enum CallType : uint8_t {
        Func,          // a point of a Func (before storage flattening)
        Image,         // a point of an input buffer (before storage flattening)
        Intrinsic,     // an operation with side effects or an ordering
        PureIntrinsic, // a pure operation
    };
    std::string name;
    std::vector<Expr> args;
    CallType call_type;
    ir::Intrinsic intrinsic = ir::Intrinsic::none;
    FunctionPtr func;    // for Func calls
    int value_index = 0; // for Func calls: which element of a Tuple-valued Func
    Parameter param;     // for Image calls

    static Expr make(Type t, ir::Intrinsic op, const std::vector<Expr> &args,
                     CallType call_type = PureIntrinsic);
    static Expr make_func(Type t, const std::string &name, const std::vector<Expr> &args,
                          FunctionPtr func, int value_index);
    static Expr make_image(Type t, const std::string &name, const std::vector<Expr> &args,
                           Parameter param);
    bool is_intrinsic(ir::Intrinsic op) const { return intrinsic == op; }
    bool is_pure() const { return call_type != Intrinsic; }
    static const IRNodeType static_node_type = IRNodeType::Call;
};

struct Let : ExprNode<Let> {
    std::string name;
    Expr value, body;
    static Expr make(const std::string &name, Expr value, Expr body);
    static const IRNodeType static_node_type = IRNodeType::Let;
};

struct LetStmt : StmtNode<LetStmt> {
    std::string name;
    Expr value;
    Stmt body;
    static Stmt make(const std::string &name, Expr value, Stmt body);
    static const IRNodeType static_node_type = IRNodeType::LetStmt;
};

// Stops the pipeline with a runtime error when `condition` is false. `message` is a
// runtime_error intrinsic call that describes the failure.
struct AssertStmt : StmtNode<AssertStmt> {
    Expr condition, message;
    static Stmt make(Expr condition, Expr message);
    static const IRNodeType static_node_type = IRNodeType::AssertStmt;
};

// Marks the part of the program that computes a Func (producer) and the part that uses it.
struct ProducerConsumer : StmtNode<ProducerConsumer> {
    std::string name;
    bool is_producer;
    Stmt body;
    static Stmt make(const std::string &name, bool is_producer, Stmt body);
    static Stmt make_produce(const std::string &name, Stmt body);
    static Stmt make_consume(const std::string &name, Stmt body);
    static const IRNodeType static_node_type = IRNodeType::ProducerConsumer;
};

// A loop over [min, min + extent). A GPU loop (GPUBlock, GPUThread) states the hardware
// dimension it runs along; lowering sets it where the schedule becomes loops.
struct For : StmtNode<For> {
    std::string name;
    Expr min, extent;
    ForType for_type;
    GPUDim gpu_dim = GPUDim::None;
    Stmt body;
    static Stmt make(const std::string &name, Expr min, Expr extent, ForType for_type, Stmt body);
    static Stmt make(const std::string &name, Expr min, Expr extent, ForType for_type,
                     GPUDim gpu_dim, Stmt body);
    static const IRNodeType static_node_type = IRNodeType::For;
};

struct Store : StmtNode<Store> {
    std::string name;
    Expr value, index, predicate;
    Parameter param; // set when writing an output buffer
    static Stmt make(const std::string &name, Expr value, Expr index, Expr predicate,
                     Parameter param = Parameter());
    static const IRNodeType static_node_type = IRNodeType::Store;
};

// Writes one point of a (possibly Tuple-valued) Func.
struct Provide : StmtNode<Provide> {
    std::string name;
    std::vector<Expr> values;
    std::vector<Expr> args;
    static Stmt make(const std::string &name, const std::vector<Expr> &values,
                     const std::vector<Expr> &args);
    static const IRNodeType static_node_type = IRNodeType::Provide;
};

// A flat allocation of extents[0] * extents[1] * ... elements of `type`, live in `body`.
struct Allocate : StmtNode<Allocate> {
    std::string name;
    Type type;
    MemoryType memory_type;
    std::vector<Expr> extents;
    Stmt body;
    static Stmt make(const std::string &name, Type type, MemoryType memory_type,
                     const std::vector<Expr> &extents, Stmt body);
    static const IRNodeType static_node_type = IRNodeType::Allocate;
};

struct Free : StmtNode<Free> {
    std::string name;
    static Stmt make(const std::string &name);
    static const IRNodeType static_node_type = IRNodeType::Free;
};

// Storage for a Func over a region, live in `body`.
struct Realize : StmtNode<Realize> {
    std::string name;
    std::vector<Type> types;
    MemoryType memory_type;
    Region bounds;
    Stmt body;
    static Stmt make(const std::string &name, const std::vector<Type> &types,
                     MemoryType memory_type, const Region &bounds, Stmt body);
    static const IRNodeType static_node_type = IRNodeType::Realize;
};

struct Block : StmtNode<Block> {
    Stmt first, rest;
    static Stmt make(Stmt first, Stmt rest);
    // Joins statements in order, skipping undefined ones; undefined if all are.
    static Stmt make(const std::vector<Stmt> &stmts);
    // The statements of nested Blocks in order, none of them a Block (the inverse of make).
    static std::vector<Stmt> parts(const Stmt &s);
    static const IRNodeType static_node_type = IRNodeType::Block;
};

struct IfThenElse : StmtNode<IfThenElse> {
    Expr condition;
    Stmt then_case, else_case;
    static Stmt make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
    static const IRNodeType static_node_type = IRNodeType::IfThenElse;
};

struct Evaluate : StmtNode<Evaluate> {
    Expr value;
    static Stmt make(Expr value);
    static const IRNodeType static_node_type = IRNodeType::Evaluate;
};

} // namespace ir
} // namespace aicf

#endif
