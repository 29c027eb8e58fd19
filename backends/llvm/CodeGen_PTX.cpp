#include "backends/llvm/PTXModule.h"

#include "backends/llvm/CodeGen_LLVM.h"
#include "backends/runtime/CompiledKernel.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "lowering/AsyncCopy.h"
#include "lowering/TensorCores.h"
#include "lowering/WarpgroupMMA.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <array>

namespace aicf {
namespace backends {

using namespace ir;

const char *const ptx_triple = "nvptx64-nvidia-cuda";

std::string ptx_arch_name(const Target &t) {
    return "sm_" + std::to_string(t.cuda_capability()) + (t.is_arch_specific() ? "a" : "");
}

namespace {

class CodeGen_PTX : public CodeGen_LLVM {
public:
    CodeGen_PTX(llvm::LLVMContext &c, llvm::Module &m, const Target &t)
        : CodeGen_LLVM(c, m), target(t) {}

    // (A frozen divisor keeps values live that ptxas would otherwise fold away.)
    bool division_traps() const override { return false; }

    void compile(const lowering::LoweredKernel &k) {
        kernel_name = k.name;
        llvm::Type *global_ptr = llvm::PointerType::get(context, 1);
        std::vector<llvm::Type *> params;
        for (const lowering::KernelArgument &a : k.args) {
            params.push_back(a.is_buffer        ? global_ptr
                             : a.type.is_bool() ? builder.getInt8Ty()
                                                : llvm_type_of(a.type));
        }
        check_names = lowering::kernel_check_names(k.body);
        if (!check_names.empty()) params.push_back(global_ptr); // the check slot
        auto *type = llvm::FunctionType::get(builder.getVoidTy(), params, false);
        function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, k.name, module);
        function->setCallingConv(llvm::CallingConv::PTX_Kernel);
        builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));
        builder.setFastMathFlags(float_freedom(target));

        for (size_t i = 0; i < k.args.size(); i++) {
            const lowering::KernelArgument &a = k.args[i];
            llvm::Argument *arg = function->getArg(unsigned(i));
            arg->setName(a.name);
            if (a.is_buffer) {
                // Buffers never alias one another in a pipeline; one the kernel only reads
                // can go through the read-only data cache (ld.global.nc).
                arg->addAttr(llvm::Attribute::NoAlias);
                if (!a.written) arg->addAttr(llvm::Attribute::ReadOnly);
                symbols.push(a.name, arg);
            } else if (a.type.is_bool()) {
                symbols.push(a.name, builder.CreateICmpNE(arg, builder.getInt8(0)));
            } else {
                symbols.push(a.name, arg);
            }
        }
        if (!check_names.empty()) {
            llvm::Argument *slot = function->getArg(unsigned(k.args.size()));
            slot->setName("aicf_check_slot");
            slot->addAttr(llvm::Attribute::NoAlias);
            check_slot = slot;
        }
        if (k.shared_bytes > 0) symbols.push(lowering::kSharedMemoryName, shared_memory());

        find_strict_float_lets(k.body);
        codegen(k.body);
        builder.CreateRetVoid();

        // The kernel annotations: an entry point, and its block shape as the most threads
        // it will be launched with where ptxas needs it: a block of more than 256 threads
        // (which could not launch were ptxas to give each thread up to 255 registers, 65536
        // in all), or launch bounds that count blocks per multiprocessor. Smaller blocks
        // leave it out: ptxas then sizes the registers for the code alone, where with it, it
        // aims at more blocks per multiprocessor and spills (an MLP block's first product
        // in 64 threads: 56 registers and 12 bytes spilled with it, 63 and none without).
        llvm::NamedMDNode *annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
        auto annotate = [&](const char *key, int value) {
            llvm::Metadata *md[] = {llvm::ValueAsMetadata::get(function),
                                    llvm::MDString::get(context, key),
                                    llvm::ConstantAsMetadata::get(builder.getInt32(value))};
            annotations->addOperand(llvm::MDNode::get(context, md));
        };
        annotate("kernel", 1);
        const int64_t threads = int64_t(k.threads[0]) * k.threads[1] * k.threads[2];
        if (threads > 256 || k.launch_bounds.min_blocks_per_sm > 0) {
            annotate("maxntidx", k.threads[0]);
            annotate("maxntidy", k.threads[1]);
            annotate("maxntidz", k.threads[2]);
        }
        // Launch bounds from the schedule: .minnctapersm and .maxnreg.
        if (k.launch_bounds.min_blocks_per_sm > 0)
            annotate("minctasm", k.launch_bounds.min_blocks_per_sm);
        if (k.launch_bounds.max_registers > 0) annotate("maxnreg", k.launch_bounds.max_registers);
    }

private:
    const Target &target;
    std::string kernel_name;
    std::vector<std::string> check_names; // lowering::kernel_check_names of the body
    llvm::Value *check_slot = nullptr;    // the kernel's last parameter where it has checks

    using CodeGen_LLVM::visit;

    // The dynamic shared memory array, shared by every kernel of the module.
    llvm::Value *shared_memory() {
        if (llvm::GlobalVariable *g = module.getGlobalVariable(lowering::kSharedMemoryName))
            return g;
        auto *type = llvm::ArrayType::get(builder.getInt8Ty(), 0);
        auto *g = new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::ExternalLinkage,
                                           nullptr, lowering::kSharedMemoryName, nullptr,
                                           llvm::GlobalValue::NotThreadLocal, 3);
        g->setAlignment(llvm::Align(16));
        return g;
    }

    // cvt.rzi converts towards zero and clamps to the destination's range; NaN, which it
    // need not take to zero, is selected to zero. Narrower types go through 32 bits and are
    // clamped there. One conversion per lane (PTX has no vector conversions).
    llvm::Value *float_to_int(llvm::Value *f, Type to) override {
        const bool wide_float = f->getType()->getScalarType()->isDoubleTy();
        const bool wide = to.bits == 64, is_signed = to.is_int();
        using ID = llvm::Intrinsic::ID;
        const ID id = wide_float ? (wide ? (is_signed ? llvm::Intrinsic::nvvm_d2ll_rz
                                                      : llvm::Intrinsic::nvvm_d2ull_rz)
                                         : (is_signed ? llvm::Intrinsic::nvvm_d2i_rz
                                                      : llvm::Intrinsic::nvvm_d2ui_rz))
                                 : (wide ? (is_signed ? llvm::Intrinsic::nvvm_f2ll_rz
                                                      : llvm::Intrinsic::nvvm_f2ull_rz)
                                         : (is_signed ? llvm::Intrinsic::nvvm_f2i_rz
                                                      : llvm::Intrinsic::nvvm_f2ui_rz));
        const Type lane = to.with_lanes(1);
        llvm::Value *result = llvm::UndefValue::get(llvm_type_of(to));
        for (int i = 0; i < to.lanes; i++) {
            llvm::Value *x = to.lanes == 1 ? f : builder.CreateExtractElement(f, uint64_t(i));
            llvm::Value *r = builder.CreateIntrinsic(id, {}, {x});
            if (to.bits < 32) {
                const int64_t hi =
                    is_signed ? (int64_t(1) << (to.bits - 1)) - 1 : (int64_t(1) << to.bits) - 1;
                Type i32 = is_signed ? Int(32) : UInt(32);
                r = builder.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smin
                                                            : llvm::Intrinsic::umin,
                                                  r, const_int(i32, hi));
                if (is_signed)
                    r = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, r,
                                                      const_int(i32, -hi - 1));
                r = builder.CreateTrunc(r, llvm_type_of(lane));
            }
            r = builder.CreateSelect(builder.CreateFCmpUNO(x, x),
                                     llvm::Constant::getNullValue(r->getType()), r);
            result = to.lanes == 1 ? r : builder.CreateInsertElement(result, r, uint64_t(i));
        }
        return result;
    }

    // Into bfloat16 (sm_80 and later) and float16: cvt.rn, which rounds to nearest even as
    // the generic form does (a NaN becomes the canonical NaN); two lanes to an instruction,
    // packed into one 32-bit register.
    llvm::Value *float_to_half(llvm::Value *f, bool is_bfloat) override {
        if (is_bfloat && target.cuda_capability() < 80) return CodeGen_LLVM::float_to_half(f, true);
        llvm::Type *i16 = builder.getInt16Ty();
        auto *v = llvm::dyn_cast<llvm::FixedVectorType>(f->getType());
        if (!v) {
            llvm::Type *h = is_bfloat ? builder.getBFloatTy() : builder.getHalfTy();
            return builder.CreateBitCast(builder.CreateFPTrunc(f, h), i16);
        }
        const unsigned n = v->getNumElements();
        const llvm::Intrinsic::ID pair =
            is_bfloat ? llvm::Intrinsic::nvvm_ff2bf16x2_rn : llvm::Intrinsic::nvvm_ff2f16x2_rn;
        llvm::Value *result = llvm::UndefValue::get(llvm::FixedVectorType::get(i16, n));
        for (unsigned i = 0; i < n; i += 2) {
            llvm::Value *lo = builder.CreateExtractElement(f, uint64_t(i));
            // An odd last lane is paired with itself.
            llvm::Value *hi = builder.CreateExtractElement(f, uint64_t(std::min(i + 1, n - 1)));
            // The first operand goes to the upper half.
            llvm::Value *two = builder.CreateBitCast(builder.CreateIntrinsic(pair, {}, {hi, lo}),
                                                     llvm::FixedVectorType::get(i16, 2));
            for (unsigned k = 0; k < 2 && i + k < n; k++)
                result = builder.CreateInsertElement(
                    result, builder.CreateExtractElement(two, uint64_t(k)), uint64_t(i + k));
        }
        return result;
    }

    llvm::Value *emit_target_intrinsic(const Call *op) override {
        using ID = llvm::Intrinsic::ID;
        auto special = [&](const std::array<ID, 3> &ids) -> llvm::Value * {
            auto d = as_const_int(op->args[0]);
            internal_assert(d && *d >= 0 && *d < 3) << "GPU index of a bad dimension";
            return builder.CreateIntrinsic(ids[size_t(*d)], {}, {});
        };
        switch (op->intrinsic) {
        case Intrinsic::gpu_thread_index:
            return special({llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                            llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                            llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z});
        case Intrinsic::gpu_block_index:
            return special({llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z});
        case Intrinsic::gpu_barrier:
            builder.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
            return builder.getInt32(0);
        case Intrinsic::gpu_lane_index:
            return builder.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid, {}, {});
        case Intrinsic::gpu_shuffle_xor:
            return shuffle_xor(op);
        case Intrinsic::gpu_mma:
            return mma(op);
        case Intrinsic::gpu_cp_async:
            return cp_async(op);
        case Intrinsic::gpu_cp_async_commit:
            builder.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
            return builder.getInt32(0);
        case Intrinsic::gpu_cp_async_wait:
            builder.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                                    {builder.getInt32(lowering::async_wait_groups(op))});
            return builder.getInt32(0);
        case Intrinsic::gpu_ldmatrix:
            return ldmatrix(op);
        case Intrinsic::gpu_wgmma:
            return wgmma(op);
        case Intrinsic::gpu_wgmma_fence:
            require_wgmma(op);
            return asm_on_floats("wgmma.fence.sync.aligned;", codegen(op->args[0]), {}, "");
        case Intrinsic::gpu_wgmma_wait:
            require_wgmma(op);
            return asm_on_floats("wgmma.wait_group.sync.aligned " +
                                     std::to_string(lowering::wgmma_wait_pending(op)) + ";",
                                 codegen(op->args[1]), {}, "");
        case Intrinsic::gpu_wgmma_commit:
            require_wgmma(op);
            return asm_statement("wgmma.commit_group.sync.aligned;");
        case Intrinsic::gpu_async_proxy_fence:
            require_wgmma(op);
            return asm_statement("fence.proxy.async.shared::cta;");
        case Intrinsic::gpu_launch:
        case Intrinsic::device_malloc:
        case Intrinsic::device_free:
        case Intrinsic::buffer_copy_to_host:
            internal_error << "kernel " << kernel_name << " contains the host operation "
                           << to_string(op->intrinsic);
            return nullptr;
        default:
            return nullptr;
        }
    }

    // The 32-bit registers a fragment travels in: pairs of 16-bit values (as i32, or <2 x half>
    // for f16), or float32 values rounded to TF32 (cvt.rna.tf32.f32).
    std::vector<llvm::Value *> fragment_registers(const Expr &e, bool tf32) {
        const Type t = e.type();
        llvm::Value *v = codegen(e);
        std::vector<llvm::Value *> regs;
        if (tf32) {
            for (int i = 0; i < t.lanes; i++) {
                llvm::Value *x = builder.CreateExtractElement(v, uint64_t(i));
                regs.push_back(builder.CreateIntrinsic(llvm::Intrinsic::nvvm_f2tf32_rna, {}, {x}));
            }
            return regs;
        }
        const int words = t.lanes / 2;
        llvm::Value *w =
            builder.CreateBitCast(v, llvm::FixedVectorType::get(builder.getInt32Ty(), words));
        llvm::Type *half2 = llvm::FixedVectorType::get(builder.getHalfTy(), 2);
        for (int i = 0; i < words; i++) {
            llvm::Value *r = builder.CreateExtractElement(w, uint64_t(i));
            regs.push_back(t.is_bfloat() ? r : builder.CreateBitCast(r, half2));
        }
        return regs;
    }

    // cp.async.{cg (16 bytes), ca (4, 8)}.shared.global [dst], [src], size, src-size: the
    // bytes past src-size are zeros.
    llvm::Value *cp_async(const Call *op) {
        const lowering::AsyncCopyCall c = lowering::async_copy_parts(op);
        internal_assert(c.dst == lowering::kSharedMemoryName)
            << "kernel " << kernel_name << ": cp.async into " << c.dst << ", not shared memory";
        internal_assert(target.cuda_capability() >= 80)
            << "kernel " << kernel_name << " uses cp.async, which needs sm_80";
        const Type elem = c.type.element_of();
        llvm::Value *dst = address_of(c.dst, c.dst_index, elem);
        llvm::Value *src = address_of(c.src, c.src_index, elem);
        // The intrinsics take the source in the global address space.
        src = builder.CreateAddrSpaceCast(src, llvm::PointerType::get(context, 1));
        llvm::Value *src_bytes =
            builder.CreateMul(codegen(c.valid), builder.getInt32(elem.bytes()));
        const llvm::Intrinsic::ID id =
            c.bytes() == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
            : c.bytes() == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                             : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
        builder.CreateIntrinsic(id, {}, {dst, src, src_bytes});
        return builder.getInt32(0);
    }

    // mma.sync.aligned: A's registers, B's, then C's four floats; D comes back as a struct.
    llvm::Value *mma(const Call *op) {
        std::optional<lowering::MMAShape> shape =
            lowering::mma_shape(op->args[0].type(), op->args[1].type(), op->args[2].type());
        internal_assert(shape) << "gpu_mma of unsupported operand types";
        internal_assert(target.cuda_capability() >= 80)
            << "kernel " << kernel_name << " uses " << shape->ptx_name() << ", which needs sm_80";
        const llvm::Intrinsic::ID id = shape->tf32 ? llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32
                                       : shape->a.is_bfloat()
                                           ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                           : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
        std::vector<llvm::Value *> args = fragment_registers(op->args[0], shape->tf32);
        for (llvm::Value *r : fragment_registers(op->args[1], shape->tf32))
            args.push_back(r);
        llvm::Value *c = codegen(op->args[2]);
        for (int i = 0; i < 4; i++)
            args.push_back(builder.CreateExtractElement(c, uint64_t(i)));
        llvm::Value *d = builder.CreateIntrinsic(id, {}, args);
        llvm::Value *result = llvm::UndefValue::get(llvm_type_of(op->type));
        for (unsigned i = 0; i < 4; i++)
            result = builder.CreateInsertElement(result, builder.CreateExtractValue(d, {i}),
                                                 uint64_t(i));
        return result;
    }

    void require_wgmma(const Call *op) {
        internal_assert(target.is_arch_specific() && target.cuda_capability() >= 90)
            << "kernel " << kernel_name << " uses " << to_string(op->intrinsic)
            << ", which needs sm_90a, not " << ptx_arch_name(target);
    }

    // An inline PTX statement that touches memory (LLVM does not move memory accesses across
    // it).
    llvm::Value *asm_statement(const std::string &text) {
        auto *type = llvm::FunctionType::get(builder.getVoidTy(), false);
        builder.CreateCall(llvm::InlineAsm::get(type, text, "~{memory}", true));
        return builder.getInt32(0);
    }

    // Inline PTX whose operands $0 .. $(n-1) are the n floats of `values` (read and written, so
    // that nothing reads them before the instruction, nor writes them after it unseen), then
    // `inputs` ($2n on, with `constraints`, one letter each); returns the floats as a vector.
    llvm::Value *asm_on_floats(const std::string &text, llvm::Value *values,
                               const std::vector<llvm::Value *> &inputs,
                               const std::string &constraints) {
        const unsigned n = llvm::cast<llvm::FixedVectorType>(values->getType())->getNumElements();
        std::vector<llvm::Type *> outs(n, builder.getFloatTy());
        std::vector<llvm::Type *> in_types(n, builder.getFloatTy());
        std::vector<llvm::Value *> args;
        std::string c;
        for (unsigned i = 0; i < n; i++)
            c += (c.empty() ? "" : ",") + std::string("=f");
        for (unsigned i = 0; i < n; i++) {
            c += "," + std::to_string(i);
            args.push_back(builder.CreateExtractElement(values, uint64_t(i)));
        }
        for (size_t i = 0; i < inputs.size(); i++) {
            c += "," + constraints.substr(i, 1);
            in_types.push_back(inputs[i]->getType());
            args.push_back(inputs[i]);
        }
        c += ",~{memory}";
        auto *type = llvm::FunctionType::get(llvm::StructType::get(context, outs), in_types, false);
        llvm::Value *r = builder.CreateCall(llvm::InlineAsm::get(type, text, c, true), args);
        llvm::Value *result = llvm::UndefValue::get(values->getType());
        for (unsigned i = 0; i < n; i++)
            result = builder.CreateInsertElement(result, builder.CreateExtractValue(r, {i}),
                                                 uint64_t(i));
        return result;
    }

    // The 64-bit matrix descriptor of a wgmma operand: its shared-space address and byte
    // offsets, each over 16, without swizzling (lowering/WarpgroupMMA.h).
    llvm::Value *wgmma_descriptor(const lowering::WgmmaOperand &o) {
        llvm::Value *base = builder.CreatePtrToInt(shared_memory(), builder.getInt32Ty());
        llvm::Value *address = builder.CreateAdd(base, codegen(o.byte));
        llvm::Value *start = builder.CreateLShr(
            builder.CreateAnd(address, builder.getInt32(0x3ffff)), builder.getInt32(4));
        const uint64_t offsets = (uint64_t(o.lbo >> 4) << 16) | (uint64_t(o.sbo >> 4) << 32);
        return builder.CreateOr(builder.CreateZExt(start, builder.getInt64Ty()),
                                builder.getInt64(offsets));
    }

    // wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T: D's N / 2 floats, the descriptors of A
    // and B, then scale-d (a predicate: 1 adds D), A and B unscaled, then each one's transpose
    // bit (1: MN-major).
    llvm::Value *wgmma(const Call *op) {
        require_wgmma(op);
        const lowering::WgmmaCall call = lowering::wgmma_parts(op);
        const std::string type = call.element.is_bfloat() ? "bf16" : "f16";
        const int n = call.n, floats = n / 2;
        std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(2 * floats + 2) +
                           ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
                           "k16.f32." + type + "." + type + " {";
        for (int i = 0; i < floats; i++)
            text += (i ? ", $" : "$") + std::to_string(i);
        text += "}, $" + std::to_string(2 * floats) + ", $" + std::to_string(2 * floats + 1) +
                ", p, 1, 1, " + std::to_string(int(call.a.mn_major)) + ", " +
                std::to_string(int(call.b.mn_major)) + ";\n}";
        return asm_on_floats(
            text, codegen(call.d),
            {wgmma_descriptor(call.a), wgmma_descriptor(call.b), builder.getInt32(1)}, "llr");
    }

    // ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: each lane's row address; the
    // registers come back as a struct of i32, two 16-bit elements each.
    llvm::Value *ldmatrix(const Call *op) {
        const lowering::LdmatrixCall call = lowering::ldmatrix_parts(op);
        internal_assert(call.buffer == lowering::kSharedMemoryName)
            << "kernel " << kernel_name << ": ldmatrix from " << call.buffer
            << ", not shared memory";
        using ID = llvm::Intrinsic::ID;
        static const ID plain[] = {llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16,
                                   llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16,
                                   llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16};
        static const ID trans[] = {llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_trans_b16,
                                   llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16,
                                   llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16};
        const int which = call.matrices == 1 ? 0 : call.matrices == 2 ? 1 : 2;
        llvm::Value *address =
            address_of(call.buffer, call.index, op->type.element_of(), /*inbounds=*/true);
        llvm::Value *loaded = builder.CreateIntrinsic((call.transpose ? trans : plain)[which],
                                                      {address->getType()}, {address});
        llvm::Value *words = llvm::UndefValue::get(
            llvm::FixedVectorType::get(builder.getInt32Ty(), unsigned(call.matrices)));
        for (unsigned i = 0; i < unsigned(call.matrices); i++) {
            llvm::Value *w = call.matrices == 1 && loaded->getType()->isIntegerTy()
                                 ? loaded
                                 : builder.CreateExtractValue(loaded, {i});
            words = builder.CreateInsertElement(words, w, uint64_t(i));
        }
        return builder.CreateBitCast(words, llvm_type_of(op->type));
    }

    // shfl.sync.bfly moves 32 bits: narrower values travel zero-extended in one word, 64-bit
    // ones as two words.
    llvm::Value *shuffle_xor(const Call *op) {
        const Type t = op->type;
        internal_assert(t.is_scalar() && t.bits <= 64) << "shuffle of " << to_string(t);
        llvm::Value *value = codegen(op->args[0]);
        llvm::Value *offset = codegen(op->args[1]);
        llvm::Value *mask = codegen(op->args[2]);
        llvm::Type *i32 = builder.getInt32Ty();
        auto word = [&](llvm::Value *w) {
            return builder.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                                           {mask, w, offset, builder.getInt32(31)});
        };
        const int bits = t.bits;
        llvm::Type *as_int = builder.getIntNTy(unsigned(bits));
        llvm::Value *x = t.is_bool() ? value : builder.CreateBitCast(value, as_int);
        llvm::Value *r;
        if (bits <= 32) {
            r = builder.CreateTrunc(word(builder.CreateZExt(x, i32)), as_int);
        } else {
            llvm::Value *lo = word(builder.CreateTrunc(x, i32));
            llvm::Value *hi = word(builder.CreateTrunc(builder.CreateLShr(x, 32), i32));
            r = builder.CreateOr(builder.CreateZExt(lo, as_int),
                                 builder.CreateShl(builder.CreateZExt(hi, as_int), 32));
        }
        return t.is_bool() ? r : builder.CreateBitCast(r, llvm_type_of(t));
    }

    // Dense vector loads and stores become one wide access (up to 16 bytes: ld.v4.f32) when
    // the address is aligned for it, which is checked when the kernel runs (an alignment
    // depends on buffer mins and strides known only then); otherwise one access a lane.
    static int wide_alignment(Type t) {
        int64_t bytes = int64_t(t.bytes()) * t.lanes;
        int64_t align = 1;
        while (align < 16 && bytes % (align * 2) == 0)
            align *= 2;
        return int(align);
    }
    bool is_dense(const Expr &index, const Expr &predicate, Type t) const {
        const Ramp *ramp = index.as<Ramp>();
        return t.lanes > 1 && ramp && is_const_one(ramp->stride) && is_true(predicate) &&
               wide_alignment(t) > t.bytes();
    }
    // Whether ptr points into an array of the kernel's own (a register or stack array): one
    // vector access at the element's alignment, which LLVM keeps in registers where the
    // indices are constant. A run-time check of its address would take that address and
    // force the array into local memory.
    static bool in_kernel_array(llvm::Value *ptr) {
        return llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(ptr));
    }
    // `then_part()` where `condition` holds, else `else_part()`, each in a block of its own;
    // their values joined (null where the parts give none: stores).
    template <typename Then, typename Else>
    llvm::Value *branch(llvm::Value *condition, const char *then_name, const char *else_name,
                        Then &&then_part, Else &&else_part) {
        llvm::BasicBlock *yes = llvm::BasicBlock::Create(context, then_name, function);
        llvm::BasicBlock *no = llvm::BasicBlock::Create(context, else_name, function);
        llvm::BasicBlock *after = llvm::BasicBlock::Create(context, "joined", function);
        builder.CreateCondBr(condition, yes, no);
        builder.SetInsertPoint(yes);
        llvm::Value *a = then_part();
        yes = builder.GetInsertBlock();
        builder.CreateBr(after);
        builder.SetInsertPoint(no);
        llvm::Value *b = else_part();
        no = builder.GetInsertBlock();
        builder.CreateBr(after);
        builder.SetInsertPoint(after);
        if (!a || a->getType()->isVoidTy()) return nullptr;
        llvm::PHINode *phi = builder.CreatePHI(a->getType(), 2);
        phi->addIncoming(a, yes);
        phi->addIncoming(b, no);
        return phi;
    }
    template <typename F> void if_aligned(llvm::Value *ptr, int align, F &&access) {
        llvm::Value *address = builder.CreatePtrToInt(ptr, builder.getInt64Ty());
        llvm::Value *aligned = builder.CreateICmpEQ(
            builder.CreateAnd(address, builder.getInt64(align - 1)), builder.getInt64(0));
        llvm::Value *v = branch(
            aligned, "aligned", "unaligned", [&] { return access(llvm::Align(align)); },
            [&] { return access(llvm::Align(1)); });
        if (v) value = v;
    }

    // The alignment version_wide_accesses decided for a dense access (in bytes; 1: lane by
    // lane), or 0 where it is to be checked here.
    static int hinted_alignment(const Expr &index, Type t, Expr &base) {
        const Ramp *r = index.as<Ramp>();
        base = r->base;
        const Call *hint = r->base.as<Call>();
        if (!hint || !hint->is_intrinsic(Intrinsic::alignment_hint)) return 0;
        base = hint->args[0];
        auto n = as_const_int(hint->args[1]);
        internal_assert(n) << "alignment_hint without a constant";
        return *n > 0 ? int(*n) * t.bytes() : 1;
    }
    template <typename F> void with_alignment(llvm::Value *ptr, int hinted, int wide, F &&access) {
        if (hinted == 0) {
            if_aligned(ptr, wide, access);
        } else {
            value = access(llvm::Align(hinted));
        }
    }

    // A dense vector access with a predicate (a guarded tail's vectors): a GPU has no masked
    // access, so each lane would be loaded or stored alone, behind a branch. Where every
    // lane is on (all the vectors but the last), the access is made as an unpredicated one.
    bool is_dense_predicated(const Expr &index, const Expr &predicate, Type t) const {
        return !is_true(predicate) && !t.is_bool() && is_dense(index, const_true(t.lanes), t);
    }
    void visit(const Load *op) override {
        Type t = op->type;
        if (is_dense_predicated(op->index, op->predicate, t)) {
            value = branch(
                builder.CreateAndReduce(codegen(op->predicate)), "all_lanes", "some_lanes",
                [&] {
                    return codegen(
                        Load::make(t, op->name, op->index, const_true(t.lanes), op->param));
                },
                [&] {
                    CodeGen_LLVM::visit(op);
                    return value;
                });
            return;
        }
        if (!is_dense(op->index, op->predicate, t)) {
            CodeGen_LLVM::visit(op);
            return;
        }
        Expr base;
        const int hinted = hinted_alignment(op->index, t, base);
        llvm::Value *ptr = address_of(op->name, base, t);
        llvm::Type *elem = llvm_type_of(t.element_of());
        if (in_kernel_array(ptr)) {
            value = builder.CreateAlignedLoad(llvm_type_of(t), ptr, llvm::Align(t.bytes()));
            return;
        }
        with_alignment(ptr, hinted, wide_alignment(t), [&](llvm::Align a) -> llvm::Value * {
            if (a.value() > 1) return builder.CreateAlignedLoad(llvm_type_of(t), ptr, a);
            // Lane by lane (a different instruction, so LLVM does not merge the two paths).
            llvm::Value *v = llvm::UndefValue::get(llvm_type_of(t));
            for (int i = 0; i < t.lanes; i++) {
                llvm::Value *lane = builder.CreateConstInBoundsGEP1_64(elem, ptr, uint64_t(i));
                v = builder.CreateInsertElement(
                    v, builder.CreateAlignedLoad(elem, lane, llvm::Align(t.bytes())), uint64_t(i));
            }
            return v;
        });
    }

    void visit(const Store *op) override {
        Type t = op->value.type();
        if (is_dense_predicated(op->index, op->predicate, t)) {
            llvm::Value *v = codegen(op->value);
            llvm::Value *mask = codegen(op->predicate);
            branch(
                builder.CreateAndReduce(mask), "all_lanes", "some_lanes",
                [&]() -> llvm::Value * {
                    store_dense(op, v);
                    return nullptr;
                },
                [&]() -> llvm::Value * {
                    llvm::Value *ptr =
                        address_of(op->name, op->index.as<Ramp>()->base, t, /*inbounds=*/false);
                    builder.CreateMaskedStore(v, ptr, llvm::Align(t.bytes()), mask);
                    return nullptr;
                });
            return;
        }
        if (!is_dense(op->index, op->predicate, t)) {
            CodeGen_LLVM::visit(op);
            return;
        }
        store_dense(op, codegen(op->value));
    }
    // A dense vector store of v, unpredicated (see is_dense).
    void store_dense(const Store *op, llvm::Value *v) {
        Type t = op->value.type();
        Expr base;
        const int hinted = hinted_alignment(op->index, t, base);
        llvm::Value *ptr = address_of(op->name, base, t);
        llvm::Type *elem = llvm_type_of(t.element_of());
        if (in_kernel_array(ptr)) {
            builder.CreateAlignedStore(v, ptr, llvm::Align(t.bytes()));
            return;
        }
        with_alignment(ptr, hinted, wide_alignment(t), [&](llvm::Align a) -> llvm::Value * {
            if (a.value() > 1) {
                builder.CreateAlignedStore(v, ptr, a);
                return nullptr;
            }
            for (int i = 0; i < t.lanes; i++) {
                llvm::Value *lane = builder.CreateConstInBoundsGEP1_64(elem, ptr, uint64_t(i));
                builder.CreateAlignedStore(builder.CreateExtractElement(v, uint64_t(i)), lane,
                                           llvm::Align(t.bytes()));
            }
            return nullptr;
        });
    }

    // A failed check inside a kernel: the first thread to fail writes what the message needs
    // to the check slot (runtime::CheckSlotWord), and every failing thread leaves the kernel;
    // the host raises the message after the launch. (A trap would leave the CUDA context
    // unusable for the rest of the process.) Where only some threads of a block fail (a check
    // per thread), the others go on: since Volta a barrier waits only for the threads that
    // have not exited (CUDA C++ Programming Guide, on __syncthreads).
    void emit_runtime_error(RuntimeErrorKind kind, const std::string &name,
                            const std::vector<llvm::Value *> &values) override {
        auto it = std::find(check_names.begin(), check_names.end(), name);
        internal_assert(check_slot && it != check_names.end())
            << "kernel " << kernel_name << ": a check of " << name << " without a check slot";
        llvm::Type *i64 = builder.getInt64Ty();
        auto word = [&](int i) { return builder.CreateConstInBoundsGEP1_64(i64, check_slot, i); };
        llvm::Value *claimed = builder.CreateAtomicCmpXchg(
            word(runtime::kCheckSlotFailed), builder.getInt64(0), builder.getInt64(1),
            llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
        llvm::Value *first = builder.CreateExtractValue(claimed, {1});
        llvm::BasicBlock *record = llvm::BasicBlock::Create(context, "check_record", function);
        llvm::BasicBlock *leave = llvm::BasicBlock::Create(context, "check_leave", function);
        builder.CreateCondBr(first, record, leave);
        builder.SetInsertPoint(record);
        auto store = [&](int i, llvm::Value *v) {
            builder.CreateAlignedStore(builder.CreateZExtOrTrunc(v, i64), word(i), llvm::Align(8));
        };
        store(runtime::kCheckSlotKind, builder.getInt64(uint64_t(kind)));
        store(runtime::kCheckSlotName, builder.getInt64(uint64_t(it - check_names.begin())));
        for (size_t i = 0; i < 6; i++)
            store(runtime::kCheckSlotDetails + int(i),
                  i < values.size() ? values[i] : builder.getInt64(0));
        const llvm::Intrinsic::ID block[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                             llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                             llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
        const llvm::Intrinsic::ID thread[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                              llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                              llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
        for (int d = 0; d < 3; d++) {
            store(runtime::kCheckSlotBlock + d, builder.CreateIntrinsic(block[d], {}, {}));
            store(runtime::kCheckSlotThread + d, builder.CreateIntrinsic(thread[d], {}, {}));
        }
        builder.CreateBr(leave);
        builder.SetInsertPoint(leave);
        builder.CreateRetVoid();
    }

    llvm::Value *emit_heap_allocation(const std::string &name, llvm::Value *) override {
        internal_error << "kernel " << kernel_name << " allocates " << name << " on the heap";
        return nullptr;
    }
    void emit_heap_free(llvm::Value *) override {}

    llvm::Value *emit_math_call(Intrinsic op, Type t,
                                const std::vector<llvm::Value *> &args) override {
        bool f32 = t.bits == 32;
        const char *name = nullptr;
        switch (op) {
        case Intrinsic::exp:
            name = f32 ? "__nv_expf" : "__nv_exp";
            break;
        case Intrinsic::log:
            name = f32 ? "__nv_logf" : "__nv_log";
            break;
        case Intrinsic::tanh:
            name = f32 ? "__nv_tanhf" : "__nv_tanh";
            break;
        case Intrinsic::erf:
            name = f32 ? "__nv_erff" : "__nv_erf";
            break;
        case Intrinsic::sin:
            name = f32 ? "__nv_sinf" : "__nv_sin";
            break;
        case Intrinsic::cos:
            name = f32 ? "__nv_cosf" : "__nv_cos";
            break;
        case Intrinsic::pow:
            name = f32 ? "__nv_powf" : "__nv_pow";
            break;
        default:
            return CodeGen_LLVM::emit_math_call(op, t, args);
        }
        llvm::Type *ft = args[0]->getType();
        std::vector<llvm::Type *> types(args.size(), ft);
        llvm::FunctionCallee f =
            module.getOrInsertFunction(name, llvm::FunctionType::get(ft, types, false));
        return builder.CreateCall(f, args);
    }
};

} // namespace

void emit_ptx_kernel(llvm::LLVMContext &context, llvm::Module &module, const Target &target,
                     const lowering::LoweredKernel &kernel) {
    CodeGen_PTX cg(context, module, target);
    cg.compile(kernel);
}

} // namespace backends
} // namespace aicf
