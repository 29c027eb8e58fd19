// A launch on the simulator: the kernel body, compiled once (SimCompiler.h), runs for every
// block of the grid on one Machine, whose counters and sites then give the launch's profile.

#include "backends/sim/Simulator.h"

#include "backends/sim/SimCompiler.h"
#include "dsl/base/Error.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

namespace aicf {
namespace backends {
namespace sim {

namespace {

// The profile of a finished launch, from the machine's counters and sites.
KernelProfile make_profile(const Machine &m, const std::array<int, 3> &grid) {
    KernelProfile p;
    p.kernel = m.kernel.name;
    p.grid = grid;
    p.block = m.kernel.threads;
    for (const std::unique_ptr<Storage> &s : m.storages) {
        if (s->place != Storage::Global) continue;
        BufferTraffic b;
        b.name = s->name;
        b.bytes_loaded = s->traffic_bytes[0];
        b.bytes_stored = s->traffic_bytes[1];
        b.load_sectors = s->traffic_sectors[0];
        b.store_sectors = s->traffic_sectors[1];
        p.buffers.push_back(b);
    }
    std::map<std::string, int> seen; // labels given so far
    for (const std::unique_ptr<Site> &site : m.sites) {
        if (site->op != Site::Load && site->op != Site::Store) continue;
        if (site->storage->place == Storage::Private) continue;
        MemoryInstructionProfile i;
        i.label = m.label(*site);
        const int repeat = ++seen[i.label];
        if (repeat > 1) i.label += " #" + std::to_string(repeat);
        i.memory = site->memory.empty() ? site->storage->name : site->memory;
        i.shared = site->storage->place == Storage::Shared;
        i.store = site->op == Site::Store;
        i.requests = site->requests;
        i.bytes = site->bytes;
        (i.shared ? i.wavefronts : i.sectors) = site->transactions;
        p.memory_instructions.push_back(i);
    }
    auto count = [&](OpClass c) { return m.counters.instructions[size_t(c)]; };
    p.instructions.integer = count(OpClass::Integer);
    p.instructions.floating = count(OpClass::Float);
    p.instructions.global_load = count(OpClass::GlobalLoad);
    p.instructions.global_store = count(OpClass::GlobalStore);
    p.instructions.shared_load = count(OpClass::SharedLoad);
    p.instructions.shared_store = count(OpClass::SharedStore);
    p.instructions.tensor_core = count(OpClass::TensorCore);
    p.instructions.other = count(OpClass::Other);
    p.flops = m.counters.flops;
    p.tensor_flops = m.counters.tensor_flops;
    p.barriers = m.counters.barriers;
    return p;
}

} // namespace

bool LaunchOptions::checks_from_environment() {
    const char *env = std::getenv("AICF_SIM_CHECKS");
    return !(env && std::string(env) == "0");
}

KernelProfile launch(const lowering::LoweredKernel &kernel, const std::array<int, 3> &grid,
                     const std::vector<LaunchArgument> &args, const LaunchOptions &options) {
    internal_assert(args.size() == kernel.args.size())
        << "simulator: kernel " << kernel.name << " takes " << kernel.args.size()
        << " arguments, launched with " << args.size();
    for (int d = 0; d < 3; d++) {
        internal_assert(kernel.threads[d] >= 1 && grid[d] >= 0)
            << "simulator: kernel " << kernel.name << " launched with a bad shape";
    }
    internal_assert(kernel.shared_bytes >= 0) << "simulator: negative shared memory";

    Machine m(kernel, options.checks);
    LaunchCode code = compile(m, args);
    m.slots.assign(size_t(code.slots), Col{});
    if (m.checks) m.shadow.resize(kernel.shared_bytes, code.shared_granule);

    Mask all;
    all.resize(m.n);
    std::fill(all.on.begin(), all.on.end(), uint8_t(1));
    all.recount();
    for (int z = 0; z < grid[2]; z++) {
        for (int y = 0; y < grid[1]; y++) {
            for (int x = 0; x < grid[0]; x++) {
                m.start_block({x, y, z});
                m.mask = &all;
                code.body->exec(m);
            }
        }
    }
    KernelProfile profile = make_profile(m, grid);
    record_launch(profile);
    return profile;
}

} // namespace sim
} // namespace backends
} // namespace aicf
