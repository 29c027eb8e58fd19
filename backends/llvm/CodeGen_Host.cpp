#include "backends/llvm/CodeGen_Host.h"

#include "backends/llvm/CodeGen_LLVM.h"
#include "backends/llvm/InlineMath.h"
#include "backends/llvm/JIT.h"
#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/Substitute.h"
#include "lowering/JamRegisterBlocks.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <set>

namespace aicf {
namespace backends {

using namespace ir;

namespace {

class CodeGen_Host : public CodeGen_LLVM {
public:
    CodeGen_Host(llvm::LLVMContext &c, llvm::Module &m) : CodeGen_LLVM(c, m) {
        tag_accesses_by_storage = true;
        loads_by_shuffle = true;
    }

    // LLVM may unroll an innermost loop of scalars, or one of vectors with a constant trip
    // count whose iterations load no more than the vector registers hold; every other loop
    // stays rolled (the schedule's `unroll` is the way to unroll those).
    // - Unrolled level by level, nested loops of 2 to 8 iterations made a 3-Func pointwise
    //   pipeline take 6 s to compile (0.5 s without).
    // - A vector loop whose trip count is known only at run time was unrolled 8 times, with
    //   a remainder loop: Loop Strength Reduction over the copies then took 60% of a sliding
    //   window blur's compile time (which went from 95 to 170 ms), with no gain measured in
    //   run time. Each iteration already does a whole vector's work.
    // - Unrolled, a loop that loads more than the registers hold becomes one block of loads,
    //   and LLVM merges them with the same loads of the next loop over the data (a row's sum,
    //   then its squared deviations): the whole row is then kept as values and spilled to the
    //   stack, and the partial sums' chains are scheduled one after another. Rolled, each
    //   iteration adds into all of its accumulators side by side. A loop of more iterations
    //   than LLVM unrolls fully (its threshold at -O3 is 300 instructions) is only unrolled
    //   partially, by 8, 4 or 2, the largest that divides its trip count and keeps the
    //   copies' loads within the registers: a column sum's 2048 rows, a histogram's 2048
    //   pixels per row, which then spend fewer instructions per iteration on the loop itself.
    // - A vector loop that loads more than the registers hold but carries nothing from one
    //   iteration to the next (every store moves with the loop: a stencil's row, a map) is
    //   unrolled by 4 or 2, whichever divides its trip count and keeps the copies' loads
    //   within the registers: each copy's loads feed its own store. Rolled, a tiled 3x3
    //   blur's rows of 16 vectors spent three of every eight instructions on the loop and ran
    //   1.19x Halide's time on one core (which unrolls them fully); unrolled by 4 it runs at
    //   Halide's time, and compiles in the time it did rolled (fully unrolled: 20-30 ms more).
    LoopUnrolling loop_unrolling(const For *op) override {
        bool contains_loop = false;
        int64_t loaded_bytes = 0;
        visit_each<For>(op->body, [&](const For *) { contains_loop = true; });
        if (contains_loop) return {LoopUnrolling::Rolled};
        bool vector = false;
        visit_each<Load>(op->body, [&](const Load *l) {
            loaded_bytes += int64_t(l->type.bytes()) * l->type.lanes;
            vector = vector || l->type.lanes > 1;
        });
        visit_each<Store>(op->body,
                          [&](const Store *s) { vector = vector || s->value.type().lanes > 1; });
        const std::optional<int64_t> trips = as_const_int(op->extent);
        if (!trips) return vector ? LoopUnrolling{LoopUnrolling::Rolled} : LoopUnrolling{};
        const VectorRegisters regs = vector_registers();
        if (*trips > 300) {
            // Partial unrolling is not left to LLVM, whose choice depends on the CPU it tunes
            // for (it unrolled such loops for Intel's cores and not at all for AMD's).
            for (int count : {8, 4, 2})
                if (*trips % count == 0 && loaded_bytes * count <= int64_t(regs.count) * regs.bytes)
                    return {LoopUnrolling::ByCount, count};
            return {LoopUnrolling::Rolled};
        }
        if (loaded_bytes * *trips <= int64_t(regs.count) * regs.bytes) return {};
        if (vector && stores_move_with_loop(op)) {
            for (int count : {4, 2})
                if (*trips % count == 0 && loaded_bytes * count <= int64_t(regs.count) * regs.bytes)
                    return {LoopUnrolling::ByCount, count};
        }
        return {LoopUnrolling::Rolled};
    }

    // Whether every store of the loop's body goes where its index moves with the loop variable
    // (through the lets that depend on it): the iterations then carry no accumulator.
    static bool stores_move_with_loop(const For *op) {
        std::set<std::string> moving = {op->name};
        visit_each<LetStmt>(op->body, [&](const LetStmt *l) {
            if (uses_vars(l->value, moving)) moving.insert(l->name);
        });
        visit_each<Let>(op->body, [&](const Let *l) {
            if (uses_vars(l->value, moving)) moving.insert(l->name);
        });
        bool moves = true, any = false;
        visit_each<Store>(op->body, [&](const Store *s) {
            any = true;
            moves = moves && uses_vars(s->index, moving);
        });
        return any && moves;
    }

    void compile(const lowering::LoweredPipeline &p, const std::string &name) {
        target = p.target;
        llvm::Type *ptr = llvm::PointerType::get(context, 0);
        llvm::Type *i32 = llvm::Type::getInt32Ty(context);
        auto *fn_type = llvm::FunctionType::get(i32, {ptr, ptr}, false);
        function = llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, name, module);
        ctx = function->getArg(0);
        llvm::Value *args = function->getArg(1);
        // Multiplies and adds may fuse (-fma) and float arithmetic may be regrouped
        // (-reassoc); nothing else about floats is relaxed.
        builder.setFastMathFlags(float_freedom(p.target));
        builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));

        for (size_t i = 0; i < p.args.size(); i++) {
            const Argument &a = p.args[i];
            llvm::Value *slot = builder.CreateConstInBoundsGEP1_64(ptr, args, i);
            llvm::Value *pointer = builder.CreateLoad(ptr, slot, a.name + ".ptr");
            if (a.is_buffer) {
                symbols.push(buffer_descriptor_name(a.name), pointer);
                continue;
            }
            llvm::Value *v;
            if (a.type.is_bool()) {
                v = builder.CreateICmpNE(builder.CreateLoad(builder.getInt8Ty(), pointer),
                                         builder.getInt8(0));
            } else {
                v = builder.CreateLoad(llvm_type_of(a.type), pointer, a.name);
            }
            symbols.push(a.name, v);
        }
        // Short loops around register blocks of too few chains run their blocks side by side:
        // at most 8 chains each (as many as two FMA units of 4 cycles' latency keep busy),
        // with half the vector registers for the accumulators of all copies.
        const Stmt body = lowering::jam_register_blocks(p.body, 8, vector_registers().count / 2);
        find_strict_float_lets(body);
        codegen(body);
        builder.CreateRet(llvm::ConstantInt::get(i32, 0));
    }

private:
    llvm::Value *ctx = nullptr;
    Target target;

    // A parallel loop's body becomes a function of (ctx, index, closure); the closure holds
    // every value the body uses from outside, and the runtime calls it on its threads.
    void visit(const For *op) override {
        if (op->for_type != ForType::Parallel) {
            CodeGen_LLVM::visit(op);
            return;
        }
        llvm::Value *min = codegen(op->min), *extent = codegen(op->extent);
        llvm::Type *ptr = llvm::PointerType::get(context, 0);
        llvm::Type *i32 = builder.getInt32Ty();

        std::vector<std::string> names;
        std::vector<llvm::Value *> values;
        std::vector<llvm::Type *> types;
        for (const std::string &n : free_vars(op->body)) {
            if (n == op->name) continue;
            const llvm::Value *const *v = symbols.find(n);
            if (!v) continue;
            names.push_back(n);
            values.push_back(const_cast<llvm::Value *>(*v));
            types.push_back(values.back()->getType());
        }
        llvm::StructType *closure_type = llvm::StructType::get(context, types);
        llvm::Value *closure = create_alloca_at_entry(closure_type, nullptr, op->name + ".closure");
        for (size_t i = 0; i < values.size(); i++) {
            builder.CreateStore(values[i], builder.CreateStructGEP(closure_type, closure, i));
        }

        auto *body_type = llvm::FunctionType::get(i32, {ptr, i32, ptr}, false);
        llvm::Function *body_fn =
            llvm::Function::Create(body_type, llvm::Function::InternalLinkage,
                                   function->getName() + "." + op->name, module);
        {
            llvm::IRBuilderBase::InsertPointGuard guard(builder);
            llvm::Function *saved_function = function;
            llvm::Value *saved_ctx = ctx;
            Scope<llvm::Value *> saved_symbols;
            std::swap(saved_symbols, symbols);
            function = body_fn;
            ctx = body_fn->getArg(0);
            builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", body_fn));
            llvm::Value *fields = body_fn->getArg(2);
            for (size_t i = 0; i < names.size(); i++) {
                symbols.push(names[i],
                             builder.CreateLoad(types[i],
                                                builder.CreateStructGEP(closure_type, fields, i),
                                                names[i]));
            }
            symbols.push(op->name, body_fn->getArg(1));
            ScopedBinding<int> depth(definition_depth, op->name, ++loop_depth);
            codegen(op->body);
            loop_depth--;
            builder.CreateRet(builder.getInt32(0));
            std::swap(saved_symbols, symbols);
            function = saved_function;
            ctx = saved_ctx;
        }
        llvm::FunctionCallee par =
            runtime_function("aicf_parallel_for", i32, {ptr, ptr, i32, i32, ptr});
        llvm::Value *code = builder.CreateCall(par, {ctx, body_fn, min, extent, closure});
        llvm::BasicBlock *fail = llvm::BasicBlock::Create(context, "parallel_failed", function);
        llvm::BasicBlock *ok = llvm::BasicBlock::Create(context, "parallel_ok", function);
        builder.CreateCondBr(builder.CreateICmpEQ(code, builder.getInt32(0)), ok, fail);
        builder.SetInsertPoint(fail);
        builder.CreateRet(code);
        builder.SetInsertPoint(ok);
    }

    llvm::FunctionCallee runtime_function(const char *name, llvm::Type *ret,
                                          std::vector<llvm::Type *> args) {
        return module.getOrInsertFunction(name, llvm::FunctionType::get(ret, args, false));
    }

    void emit_runtime_error(RuntimeErrorKind kind, const std::string &name,
                            const std::vector<llvm::Value *> &values) override {
        llvm::Type *i32 = builder.getInt32Ty(), *i64 = builder.getInt64Ty();
        llvm::Type *ptr = llvm::PointerType::get(context, 0);
        llvm::FunctionCallee f = runtime_function("aicf_runtime_error", i32,
                                                  {ptr, i32, ptr, i64, i64, i64, i64, i64, i64});
        std::vector<llvm::Value *> args = {ctx, builder.getInt32(int32_t(kind)),
                                           builder.CreateGlobalStringPtr(name)};
        for (size_t i = 0; i < 6; i++)
            args.push_back(i < values.size() ? values[i] : builder.getInt64(0));
        llvm::Value *code = builder.CreateCall(f, args);
        builder.CreateRet(code);
    }

    // Leaves the function with the code if a runtime call returned a nonzero one.
    void return_if_failed(llvm::Value *code, const char *what) {
        llvm::BasicBlock *fail =
            llvm::BasicBlock::Create(context, std::string(what) + "_failed", function);
        llvm::BasicBlock *ok =
            llvm::BasicBlock::Create(context, std::string(what) + "_ok", function);
        builder.CreateCondBr(builder.CreateICmpEQ(code, builder.getInt32(0)), ok, fail);
        builder.SetInsertPoint(fail);
        builder.CreateRet(code);
        builder.SetInsertPoint(ok);
    }

    llvm::Value *emit_target_intrinsic(const Call *op) override {
        llvm::Type *ptr = llvm::PointerType::get(context, 0);
        llvm::Type *i32 = builder.getInt32Ty(), *i64 = builder.getInt64Ty();
        switch (op->intrinsic) {
        case Intrinsic::gpu_launch: {
            // (kernel, gx, gy, gz, args...): each argument's address goes in an array.
            size_t n = op->args.size() - 4;
            llvm::Value *array = create_alloca_at_entry(
                ptr, builder.getInt32(uint32_t(std::max<size_t>(n, 1))), "launch.args");
            for (size_t i = 0; i < n; i++) {
                const Expr &a = op->args[4 + i];
                llvm::Value *v = codegen(a);
                llvm::Value *p = v;
                if (!a.type().is_handle()) {
                    llvm::Type *t = a.type().is_bool() ? builder.getInt8Ty() : v->getType();
                    p = create_alloca_at_entry(t, nullptr, "launch.arg");
                    builder.CreateStore(a.type().is_bool() ? builder.CreateZExt(v, t) : v, p);
                }
                builder.CreateStore(p, builder.CreateConstInBoundsGEP1_64(ptr, array, i));
            }
            llvm::FunctionCallee f =
                runtime_function("aicf_gpu_launch", i32, {ptr, i32, i32, i32, i32, ptr});
            llvm::Value *code =
                builder.CreateCall(f, {ctx, codegen(op->args[0]), codegen(op->args[1]),
                                       codegen(op->args[2]), codegen(op->args[3]), array});
            return_if_failed(code, "launch");
            return code;
        }
        case Intrinsic::device_malloc: {
            const StringImm *name = op->args[0].as<StringImm>();
            internal_assert(name) << "device_malloc without a name";
            llvm::Value *p;
            if (op->args.size() == 4) { // with the host storage and its element size
                llvm::FunctionCallee f =
                    runtime_function("aicf_device_malloc_for_host", ptr, {ptr, ptr, i64, ptr, i32});
                p = builder.CreateCall(f, {ctx, builder.CreateGlobalStringPtr(name->value),
                                           codegen(op->args[1]), codegen(op->args[2]),
                                           codegen(op->args[3])});
            } else {
                llvm::FunctionCallee f =
                    runtime_function("aicf_device_malloc", ptr, {ptr, ptr, i64});
                p = builder.CreateCall(
                    f, {ctx, builder.CreateGlobalStringPtr(name->value), codegen(op->args[1])});
            }
            llvm::Value *failed = builder.CreateSelect(
                builder.CreateIsNull(p), builder.getInt32(-int32_t(RuntimeErrorKind::DeviceError)),
                builder.getInt32(0));
            return_if_failed(failed, "device_malloc");
            return p;
        }
        case Intrinsic::device_free: {
            llvm::FunctionCallee f =
                runtime_function("aicf_device_free", builder.getVoidTy(), {ptr, ptr});
            builder.CreateCall(f, {ctx, codegen(op->args[0])});
            return builder.getInt32(0);
        }
        case Intrinsic::prefetch: {
            // The address of the element the argument would read, fetched for reading into
            // all cache levels (llvm.prefetch: read, locality 3, data cache).
            const Load *load = op->args[0].as<Load>();
            internal_assert(load) << "prefetch of something other than a stored element";
            Type t = load->type;
            llvm::Function *fn =
                llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::prefetch, {ptr});
            auto fetch = [&](llvm::Value *address) {
                builder.CreateCall(
                    fn, {address, builder.getInt32(0), builder.getInt32(3), builder.getInt32(1)});
            };
            if (t.lanes == 1) {
                fetch(address_of(load->name, load->index, t));
            } else {
                llvm::Value *indices = codegen(load->index);
                for (int i = 0; i < t.lanes; i++)
                    fetch(address_of(load->name, builder.CreateExtractElement(indices, uint64_t(i)),
                                     t));
            }
            return builder.getInt32(0);
        }
        case Intrinsic::buffer_copy_to_host: {
            llvm::FunctionCallee f =
                runtime_function("aicf_buffer_copy_to_host", i32, {ptr, ptr, i32});
            llvm::Value *code =
                builder.CreateCall(f, {ctx, codegen(op->args[0]), codegen(op->args[1])});
            return_if_failed(code, "copy_to_host");
            return code;
        }
        default:
            return nullptr;
        }
    }

    llvm::Value *emit_heap_allocation(const std::string &name, llvm::Value *bytes) override {
        llvm::Type *ptr = llvm::PointerType::get(context, 0);
        llvm::FunctionCallee f =
            runtime_function("aicf_malloc", ptr, {ptr, ptr, builder.getInt64Ty()});
        llvm::Value *p =
            builder.CreateCall(f, {ctx, builder.CreateGlobalStringPtr(name), bytes}, name);
        llvm::BasicBlock *fail = llvm::BasicBlock::Create(context, "malloc_failed", function);
        llvm::BasicBlock *ok = llvm::BasicBlock::Create(context, "malloc_ok", function);
        builder.CreateCondBr(builder.CreateIsNull(p), fail, ok);
        builder.SetInsertPoint(fail);
        builder.CreateRet(builder.getInt32(-int32_t(RuntimeErrorKind::OutOfMemory)));
        builder.SetInsertPoint(ok);
        return p;
    }

    void emit_heap_free(llvm::Value *p) override {
        llvm::Type *ptr = llvm::PointerType::get(context, 0);
        builder.CreateCall(runtime_function("aicf_free", builder.getVoidTy(), {ptr, ptr}),
                           {ctx, p});
    }

    // float32 exp, log, tanh and erf inline (InlineMath.h), unless the target asks for the library.
    llvm::Value *emit_inline_math(Intrinsic op, Type t, const std::vector<llvm::Value *> &args) {
        if (target.has_feature(Target::LibraryMath) || t.bits != 32 || t.code != TypeCode::Float)
            return nullptr;
        const bool avx512 = vector_registers().bytes == 64;
        // The polynomials are evaluated as written (their error bounds assume it), fused
        // where -fma allows, never regrouped.
        llvm::IRBuilderBase::FastMathFlagGuard keep(builder);
        llvm::FastMathFlags flags = builder.getFastMathFlags();
        flags.setAllowReassoc(false);
        builder.setFastMathFlags(flags);
        switch (op) {
        case Intrinsic::exp:
            return inline_exp_f32(builder, args[0], avx512);
        case Intrinsic::log:
            return inline_log_f32(builder, args[0]);
        case Intrinsic::tanh:
            return inline_tanh_f32(builder, args[0], avx512);
        case Intrinsic::erf:
            return inline_erf_f32(builder, args[0], avx512);
        case Intrinsic::pow:
            return inline_pow_f32(builder, args[0], args[1]);
        default:
            return nullptr;
        }
    }

    llvm::Value *emit_math_call(Intrinsic op, Type t,
                                const std::vector<llvm::Value *> &args) override {
        if (llvm::Value *v = emit_inline_math(op, t, args)) return v;
        if (llvm::Value *v = emit_vector_math_call(op, t, args)) return v;
        bool f32 = t.bits == 32;
        const char *name = nullptr;
        switch (op) {
        case Intrinsic::exp:
            name = f32 ? "expf" : "exp";
            break;
        case Intrinsic::log:
            name = f32 ? "logf" : "log";
            break;
        case Intrinsic::tanh:
            name = f32 ? "tanhf" : "tanh";
            break;
        case Intrinsic::erf:
            name = f32 ? "erff" : "erf";
            break;
        case Intrinsic::sin:
            name = f32 ? "sinf" : "sin";
            break;
        case Intrinsic::cos:
            name = f32 ? "cosf" : "cos";
            break;
        case Intrinsic::pow:
            name = f32 ? "powf" : "pow";
            break;
        default:
            return CodeGen_LLVM::emit_math_call(op, t, args);
        }
        llvm::Type *ft = args[0]->getType();
        std::vector<llvm::Type *> types(args.size(), ft);
        llvm::FunctionCallee f = runtime_function(name, ft, types);
        return builder.CreateCall(f, args);
    }

    // The vector registers of the target's CPU: 32 of 64 bytes with AVX-512, else 16 of 32
    // (AVX2) or 16 (SSE) bytes.
    struct VectorRegisters {
        int count, bytes;
    };
    VectorRegisters vector_registers() const {
        static const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
        const bool host_cpu = target.arch() == Target::Host;
        const bool avx512 = host_cpu ? host.lookup("avx512f") : target.arch() >= Target::X86_64_v4;
        const bool avx2 = host_cpu ? host.lookup("avx2") : target.arch() >= Target::X86_64_v3;
        return avx512 ? VectorRegisters{32, 64} : VectorRegisters{16, avx2 ? 32 : 16};
    }

    // glibc's libmvec, named by the x86-64 vector function ABI: _ZGV<isa>N<lanes><v per
    // argument>_<function>, with isa b (SSE, 128 bits), d (AVX2, 256) or e (AVX-512, 512).
    // One variant serves every call, the widest this CPU has, scalars and vectors of any
    // width alike (cut into pieces, the last padded with 1.0): each input then gets the
    // same result bits however the loop around it is vectorized.
    llvm::Value *emit_vector_math_call(Intrinsic op, Type t,
                                       const std::vector<llvm::Value *> &args) override {
        if (llvm::Value *v = emit_inline_math(op, t, args)) return v;
        const char *base = nullptr;
        switch (op) {
        case Intrinsic::exp:
            base = "exp";
            break;
        case Intrinsic::log:
            base = "log";
            break;
        case Intrinsic::tanh:
            base = "tanh";
            break;
        case Intrinsic::erf:
            base = "erf";
            break;
        case Intrinsic::sin:
            base = "sin";
            break;
        case Intrinsic::cos:
            base = "cos";
            break;
        case Intrinsic::pow:
            base = "pow";
            break;
        default:
            return nullptr;
        }
        if (!t.is_float() || (t.bits != 32 && t.bits != 64) || !vector_math_library_loaded())
            return nullptr;
        // The widest variant the target's CPU runs: SSE ('b'), AVX2 ('d') or AVX-512 ('e').
        const VectorRegisters regs = vector_registers();
        const int bytes = t.bits / 8;
        const char isa = regs.bytes == 64 ? 'e' : regs.bytes == 32 ? 'd' : 'b';
        const int width = regs.bytes / bytes;
        std::string name = std::string("_ZGV") + isa + "N" + std::to_string(width) +
                           std::string(args.size(), 'v') + "_" + base + (t.bits == 32 ? "f" : "");
        llvm::Type *elem = llvm_type_of(t.element_of());
        llvm::Type *piece = llvm::FixedVectorType::get(elem, width);
        llvm::FunctionCallee f =
            runtime_function(name.c_str(), piece, std::vector<llvm::Type *>(args.size(), piece));
        llvm::Value *ones = llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(width),
                                                           llvm::ConstantFP::get(elem, 1.0));
        llvm::Value *ones_like_a =
            t.lanes == 1 ? nullptr
                         : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(t.lanes),
                                                          llvm::ConstantFP::get(elem, 1.0));
        llvm::Value *result = nullptr;
        for (int start = 0; start < t.lanes; start += width) {
            std::vector<llvm::Value *> in;
            for (llvm::Value *a : args) {
                if (t.lanes == 1) {
                    in.push_back(builder.CreateInsertElement(ones, a, uint64_t(0)));
                    continue;
                }
                // Lanes start.. of `a`, then lane 0 of a vector of ones past its end.
                std::vector<int> lanes;
                for (int i = 0; i < width; i++)
                    lanes.push_back(start + i < t.lanes ? start + i : t.lanes);
                llvm::Value *chunk = builder.CreateShuffleVector(a, ones_like_a, lanes);
                in.push_back(chunk);
            }
            llvm::Value *out = builder.CreateCall(f, in);
            if (t.lanes == 1) return builder.CreateExtractElement(out, uint64_t(0));
            if (!result) result = llvm::UndefValue::get(llvm_type_of(t));
            for (int i = 0; i < width && start + i < t.lanes; i++)
                result = builder.CreateInsertElement(
                    result, builder.CreateExtractElement(out, uint64_t(i)), uint64_t(start + i));
        }
        return result;
    }
};

} // namespace

void compile_host_function(const lowering::LoweredPipeline &p, const std::string &function_name,
                           llvm::Module &module) {
    std::vector<llvm::Function *> before;
    for (llvm::Function &f : module)
        before.push_back(&f);
    CodeGen_Host cg(module.getContext(), module);
    cg.compile(p, function_name);
    // An x86-64 level: what this call defined is compiled for that CPU (tuned for the one
    // compiling), whatever machine compiles it.
    if (p.target.arch() != Target::Host) {
        for (llvm::Function &f : module) {
            if (f.isDeclaration() || std::find(before.begin(), before.end(), &f) != before.end())
                continue;
            f.addFnAttr("target-cpu", p.target.cpu_name());
            f.addFnAttr("target-features", "");
            f.addFnAttr("tune-cpu", llvm::sys::getHostCPUName());
        }
    }
    std::string errors;
    llvm::raw_string_ostream os(errors);
    if (llvm::verifyModule(module, &os)) {
        internal_error << "generated host code does not verify:\n" << os.str();
    }
}

std::unique_ptr<llvm::Module> compile_host_module(const lowering::LoweredPipeline &p,
                                                  const std::string &function_name,
                                                  llvm::LLVMContext &context) {
    auto module = std::make_unique<llvm::Module>(function_name, context);
    compile_host_function(p, function_name, *module);
    return module;
}

} // namespace backends
} // namespace aicf
