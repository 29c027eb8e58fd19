#include "lowering/Lower.h"

#include "dsl/Debug.h"
#include "dsl/Names.h"
#include "dsl/ir/CSE.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Simplify.h"
#include "lowering/AddImageChecks.h"
#include "lowering/BoundsInference.h"
#include "lowering/CrossThreadReductions.h"
#include "lowering/ExtractKernels.h"
#include "lowering/FuncValueRanges.h"
#include "lowering/FuseGPUThreadLoops.h"
#include "lowering/FusedThreadLoops.h"
#include "lowering/GPUPlacement.h"
#include "lowering/GroupSharedLoads.h"
#include "lowering/HoistAllocations.h"
#include "lowering/HoistKernelChecks.h"
#include "lowering/InjectEarlyFrees.h"
#include "lowering/InjectGPUBarriers.h"
#include "lowering/InjectPrefetches.h"
#include "lowering/KeepValuesInRegisters.h"
#include "lowering/KernelClosure.h"
#include "lowering/LaunchKernels.h"
#include "lowering/MapGPULoops.h"
#include "lowering/MultiStageStaging.h"
#include "lowering/PackSharedMemory.h"
#include "lowering/PartitionLoops.h"
#include "lowering/PipelineStaging.h"
#include "lowering/PrintLoopNest.h"
#include "lowering/RealizationOrder.h"
#include "lowering/RegisterTiles.h"
#include "lowering/ScheduleFunctions.h"
#include "lowering/SizeRegisterAllocations.h"
#include "lowering/SlidingWindow.h"
#include "lowering/StorageFlattening.h"
#include "lowering/StripedRegisters.h"
#include "lowering/UnrollLoops.h"
#include "lowering/VectorizeLoops.h"
#include "lowering/VersionWideAccesses.h"
#include "lowering/WarpMatrixUpdates.h"
#include "lowering/WarpgroupUpdates.h"
#include "lowering/Wrappers.h"

#include <iostream>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

void log_pass(const char *pass, const Stmt &s) {
    if (debug_level() < 2) return;
    std::cerr << "---- after " << pass << " ----\n" << s << "\n";
}

// Each kernel takes the launch bounds of the Func whose block loops make it; bounds on a Func
// that makes no kernel are a mistake in the schedule.
void apply_launch_bounds(std::vector<LoweredKernel> &kernels,
                         const std::map<std::string, Function> &env) {
    std::set<std::string> kernel_funcs;
    for (LoweredKernel &k : kernels) {
        const For *outer = k.body.as<For>();
        internal_assert(outer) << "kernel " << k.name << " does not start with its block loop";
        const std::string func = func_of_loop(outer->name);
        auto it = env.find(func);
        if (it == env.end()) continue;
        k.launch_bounds = it->second.schedule().launch_bounds;
        kernel_funcs.insert(func);
    }
    for (const auto &[name, f] : env) {
        const GPULaunchBounds &b = f.schedule().launch_bounds;
        user_assert((b.min_blocks_per_sm == 0 && b.max_registers == 0) || kernel_funcs.count(name))
            << "Func " << name << " sets " << (b.min_blocks_per_sm ? "gpu_launch_bounds" : "")
            << (b.min_blocks_per_sm && b.max_registers ? " and " : "")
            << (b.max_registers ? "gpu_max_registers" : "")
            << ", but none of its loops is a GPU block loop. Launch bounds belong to the Func "
            << "whose gpu_blocks loops make the kernel.";
    }
}

// The loops never_partition() and never_partition_all() name, and those of a staging
// pipelined through registers: they are unrolled whole (pipeline_staged_loads), so a
// partition (a zero padding's select, a guarded tail) would only leave them without a
// constant extent.
std::set<std::string> loops_never_partitioned(const std::map<std::string, Function> &env) {
    std::set<std::string> never;
    for (const auto &[name, f] : env) {
        const GPUPipeline &pipeline = f.schedule().gpu_pipeline;
        const bool unrolled = pipeline.stages > 1 && pipeline.copy == PipelineCopy::Registers;
        for (int stage = 0; stage < f.stages(); stage++) {
            const StageSchedule &s = f.stage(stage).schedule;
            for (const Dim &d : s.dims)
                if (d.never_partition || s.never_partition_all || unrolled)
                    never.insert(loop_name(name, stage, d.var));
        }
    }
    return never;
}

} // namespace

LoweredPipeline lower(const std::vector<Function> &user_outputs, const std::vector<Argument> &args,
                      const Target &target) {
    PhaseTimer timer("lowering " + (user_outputs.empty() ? std::string() : user_outputs[0].name()));
    auto after = [&](const char *pass, const Stmt &s) {
        timer.phase(pass);
        log_pass(pass, s);
        timer.skip();
    };
    std::map<std::string, Function> env = detail::find_transitive_calls(user_outputs);
    std::vector<Function> outputs = redirect_to_wrappers(user_outputs, env);
    std::vector<std::string> order = realization_order(outputs, env);
    timer.phase("realization_order");
    // Calls to Funcs bounded by the ranges of their values, in every pass from here on: a
    // gather indexed by a Func computed as a clamp reads the clamp's range.
    const FuncValueRanges value_ranges(func_value_ranges(env));
    timer.phase("func_value_ranges");

    Stmt s = schedule_functions(outputs, order, env);
    after("schedule_functions", s);
    s = bounds_inference(s, outputs, env);
    after("bounds_inference", s);
    s = sliding_window(s, env);
    after("sliding_window", s);
    s = inject_prefetches(s, env);
    after("inject_prefetches", s);
    s = bound_fused_thread_loops(s);
    after("bound_fused_thread_loops", s);
    s = simplify(s);
    after("simplify", s);
    // With each GPU loop on the hardware dimension it runs along: lanes take x, the thread
    // loops of the same kernel move up (make_room_for_lanes, applied here for the text only).
    std::string loop_nest = print_loop_nest(make_room_for_lanes(s));
    timer.phase("print_loop_nest");
    s = lower_warp_matrix_updates(s, env, target);
    after("lower_warp_matrix_updates", s);
    s = make_room_for_lanes(s);
    after("make_room_for_lanes", s);
    s = place_gpu_storage(s, target);
    after("place_gpu_storage", s);
    // A concrete Buffer's strides become constants of host code only: for a GPU target they
    // stay arguments of the kernels, whose code (and registers, as ptxas allocates them) was
    // tuned with strides known at run time.
    std::vector<Argument> checked = args;
    if (target.has_cuda()) {
        for (Argument &a : checked)
            a.known_strides.clear();
    }
    s = add_image_checks(s, checked);
    after("add_image_checks", s);
    // (After the image checks: the threads it adds past a reduction loop read nothing. Before
    // striping: a striped Func's accesses no longer name the thread that holds the element.)
    s = lower_cross_thread_reductions(s, env);
    after("lower_cross_thread_reductions", s);
    s = stripe_register_funcs(s);
    after("stripe_register_funcs", s);
    s = register_tiles(s);
    after("register_tiles", s);
    s = storage_flattening(s, args, env);
    after("storage_flattening", s);
    s = simplify(s);
    after("simplify", s);
    s = partition_loops(s, loops_never_partitioned(env));
    after("partition_loops", s);
    s = unroll_loops(s, env);
    after("unroll_loops", s);
    s = vectorize_loops(s);
    after("vectorize_loops", s);
    s = simplify_for_codegen(s);
    after("simplify_for_codegen", s);
    s = hoist_allocations(s);
    after("hoist_allocations", s);
    s = hoist_kernel_checks(s);
    after("hoist_kernel_checks", s);
    // GPU kernels: taken out of the host code, then lowered one pass at a time.
    ExtractedKernels gpu = extract_kernels(s, target, outputs[0].name());
    apply_launch_bounds(gpu.kernels, env);
    auto log_kernels = [&](const char *pass) {
        if (debug_level() < 2) return;
        for (const LoweredKernel &k : gpu.kernels)
            std::cerr << "---- after " << pass << ": " << k.name << " ----\n"
                      << describe_kernel(k) << "\n";
    };
    after("extract_kernels (host)", gpu.host);
    log_kernels("extract_kernels");
    auto after_kernel_pass = [&](const char *pass, void (*run)(LoweredKernel &)) {
        for (LoweredKernel &k : gpu.kernels)
            run(k);
        timer.phase(pass);
        log_kernels(pass);
        timer.skip();
    };
    after_kernel_pass("map_gpu_loops", map_gpu_loops);
    after_kernel_pass("inject_gpu_barriers", inject_gpu_barriers);
    multi_buffer_async_stages(gpu.kernels, env);
    timer.phase("multi_buffer_async_stages");
    log_kernels("multi_buffer_async_stages");
    timer.skip();
    check_pipelined_reads(gpu.kernels, env);
    timer.phase("check_pipelined_reads");
    after_kernel_pass("pack_shared_memory", pack_shared_memory);
    after_kernel_pass("load_mma_operands_with_ldmatrix", load_mma_operands_with_ldmatrix);
    after_kernel_pass("resolve_wgmma_operands", resolve_wgmma_operands);
    after_kernel_pass("fuse_gpu_thread_loops", fuse_gpu_thread_loops);
    pipeline_staged_loads(gpu.kernels, env);
    timer.phase("pipeline_staged_loads");
    log_kernels("pipeline_staged_loads");
    timer.skip();
    after_kernel_pass("size_register_allocations", size_register_allocations);
    after_kernel_pass("simplify", [](LoweredKernel &k) { k.body = simplify(k.body); });
    version_wide_accesses(gpu.kernels);
    timer.phase("version_wide_accesses");
    log_kernels("version_wide_accesses");
    timer.skip();
    copy_stages_asynchronously(gpu.kernels, env);
    timer.phase("copy_stages_asynchronously");
    log_kernels("copy_stages_asynchronously");
    timer.skip();
    after_kernel_pass("fence_wgmma_operands", fence_wgmma_operands);
    after_kernel_pass("keep_values_in_registers", keep_values_in_registers);
    after_kernel_pass("group_shared_loads", group_shared_loads);
    after_kernel_pass("kernel_closure", kernel_closure);
    after_kernel_pass("common_subexpression_elimination",
                      [](LoweredKernel &k) { k.body = common_subexpression_elimination(k.body); });
    s = launch_kernels(gpu.host, gpu.kernels, args);
    after("launch_kernels", s);
    s = inject_early_frees(s);
    after("inject_early_frees", s);
    s = common_subexpression_elimination(s);
    after("common_subexpression_elimination", s);

    LoweredPipeline result;
    result.name = outputs[0].name();
    result.args = args;
    result.body = s;
    result.kernels = std::move(gpu.kernels);
    result.loop_nest = loop_nest;
    result.target = target;
    return result;
}

} // namespace lowering
} // namespace aicf
