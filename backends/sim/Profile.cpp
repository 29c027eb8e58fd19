#include "backends/sim/Profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace aicf {
namespace backends {
namespace sim {

namespace {

// The live recorders of this thread, oldest first.
thread_local std::vector<ProfileRecorder *> recorders;

double ratio(int64_t a, int64_t b) {
    return b == 0 ? 0.0 : double(a) / double(b);
}

std::string percent(double x) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << 100.0 * x << "%";
    return os.str();
}

std::string fixed1(double x) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << x;
    return os.str();
}

bool profile_from_environment() {
    const char *env = std::getenv("AICF_SIM_PROFILE");
    return env && *env && std::string(env) != "0";
}

} // namespace

double MemoryInstructionProfile::sectors_per_request() const {
    return ratio(sectors, requests);
}

double MemoryInstructionProfile::wavefronts_per_request() const {
    return ratio(wavefronts, requests);
}

double MemoryInstructionProfile::conflict_ways() const {
    if (requests == 0) return 0;
    const double fewest = std::max(1.0, std::ceil(double(bytes) / double(requests) / 128.0));
    return wavefronts_per_request() / fewest;
}

double MemoryInstructionProfile::efficiency() const {
    return ratio(bytes, sectors * 32);
}

int64_t InstructionCounts::total() const {
    return integer + floating + global_load + global_store + shared_load + shared_store +
           tensor_core + other;
}

int64_t KernelProfile::blocks() const {
    return int64_t(grid[0]) * grid[1] * grid[2];
}

int64_t KernelProfile::global_bytes_loaded() const {
    int64_t total = 0;
    for (const BufferTraffic &b : buffers)
        total += b.bytes_loaded;
    return total;
}

int64_t KernelProfile::global_bytes_stored() const {
    int64_t total = 0;
    for (const BufferTraffic &b : buffers)
        total += b.bytes_stored;
    return total;
}

int64_t KernelProfile::global_sectors() const {
    int64_t total = 0;
    for (const BufferTraffic &b : buffers)
        total += b.load_sectors + b.store_sectors;
    return total;
}

double KernelProfile::global_efficiency() const {
    return ratio(global_bytes_loaded() + global_bytes_stored(), global_sectors() * 32);
}

int64_t KernelProfile::shared_requests() const {
    int64_t total = 0;
    for (const MemoryInstructionProfile &i : memory_instructions)
        total += i.shared ? i.requests : 0;
    return total;
}

int64_t KernelProfile::shared_wavefronts() const {
    int64_t total = 0;
    for (const MemoryInstructionProfile &i : memory_instructions)
        total += i.shared ? i.wavefronts : 0;
    return total;
}

const MemoryInstructionProfile *KernelProfile::worst_shared_instruction() const {
    const MemoryInstructionProfile *worst = nullptr;
    for (const MemoryInstructionProfile &i : memory_instructions) {
        if (!i.shared || i.requests == 0) continue;
        if (!worst || i.conflict_ways() > worst->conflict_ways()) worst = &i;
    }
    return worst;
}

const MemoryInstructionProfile *KernelProfile::find_instruction(const std::string &text) const {
    for (const MemoryInstructionProfile &i : memory_instructions) {
        if (i.label.find(text) != std::string::npos) return &i;
    }
    return nullptr;
}

const BufferTraffic *KernelProfile::find_buffer(const std::string &name) const {
    for (const BufferTraffic &b : buffers) {
        if (b.name == name) return &b;
    }
    return nullptr;
}

std::string KernelProfile::to_string() const {
    std::ostringstream os;
    os << "kernel " << kernel << ": grid " << grid[0] << " x " << grid[1] << " x " << grid[2]
       << ", blocks of " << block[0] << " x " << block[1] << " x " << block[2] << " threads\n";
    const InstructionCounts &c = instructions;
    os << "  warp instructions: " << c.total() << " (" << c.integer << " integer, " << c.floating
       << " float, " << c.global_load << " global load, " << c.global_store << " global store, "
       << c.shared_load << " shared load, " << c.shared_store << " shared store, ";
    if (c.tensor_core > 0) os << c.tensor_core << " tensor core, ";
    os << c.other << " other)\n";
    os << "  flops: " << flops;
    if (tensor_flops > 0) os << ", on tensor cores: " << tensor_flops;
    os << ", barriers: " << barriers;
    if (blocks() > 0) os << " (" << fixed1(ratio(barriers, blocks())) << " per block)";
    os << "\n";

    size_t width = 24;
    for (const BufferTraffic &b : buffers)
        width = std::max(width, b.name.size() + 4);
    for (const MemoryInstructionProfile &i : memory_instructions)
        width = std::max(width, i.label.size() + 4);

    os << "  " << std::left << std::setw(int(width)) << "global memory" << std::right
       << std::setw(12) << "loaded B" << std::setw(12) << "stored B" << std::setw(10) << "sectors"
       << std::setw(14) << "asked/moved"
       << "\n";
    for (const BufferTraffic &b : buffers) {
        const int64_t sectors = b.load_sectors + b.store_sectors;
        os << "    " << std::left << std::setw(int(width) - 2) << b.name << std::right
           << std::setw(12) << b.bytes_loaded << std::setw(12) << b.bytes_stored << std::setw(10)
           << sectors << std::setw(14)
           << (sectors ? percent(ratio(b.bytes_loaded + b.bytes_stored, sectors * 32)) : "-")
           << "\n";
    }

    os << "  " << std::left << std::setw(int(width)) << "memory instructions" << std::right
       << std::setw(12) << "requests" << std::setw(12) << "bytes" << std::setw(22) << "per request"
       << std::setw(14) << "asked/moved"
       << "\n";
    for (const MemoryInstructionProfile &i : memory_instructions) {
        os << "    " << std::left << std::setw(int(width) - 2) << i.label << std::right
           << std::setw(12) << i.requests << std::setw(12) << i.bytes;
        if (i.shared) {
            os << std::setw(22) << fixed1(i.wavefronts_per_request()) + " wavefronts"
               << std::setw(14) << "-";
        } else {
            os << std::setw(22) << fixed1(i.sectors_per_request()) + " sectors" << std::setw(14)
               << (i.sectors ? percent(i.efficiency()) : "-");
        }
        os << "\n";
    }

    // (Over 100%: lanes ask for the same bytes, a broadcast, and the sectors move them once.)
    const double asked = global_efficiency();
    os << "  global: " << global_bytes_loaded() << " B loaded, " << global_bytes_stored()
       << " B stored, " << global_sectors() << " sectors ("
       << (asked <= 1.0 ? percent(asked) + " of the bytes moved were asked for"
                        : "the lanes asked for " + fixed1(asked) +
                              " times the bytes moved: several read the same bytes")
       << ")\n";
    os << "  shared: " << shared_requests() << " requests, " << shared_wavefronts()
       << " wavefronts";
    if (const MemoryInstructionProfile *worst = worst_shared_instruction()) {
        os << " (" << fixed1(ratio(shared_wavefronts(), shared_requests()))
           << " per request; worst: " << worst->label << ", "
           << fixed1(worst->wavefronts_per_request()) << " per request, "
           << fixed1(worst->conflict_ways()) << "-way conflicts)";
    }
    os << "\n";
    return os.str();
}

ProfileRecorder::ProfileRecorder() {
    recorders.push_back(this);
}

ProfileRecorder::~ProfileRecorder() {
    recorders.erase(std::remove(recorders.begin(), recorders.end(), this), recorders.end());
}

void record_launch(const KernelProfile &profile) {
    for (ProfileRecorder *r : recorders)
        r->recorded.push_back(profile);
    if (profile_from_environment()) std::cerr << profile.to_string() << std::flush;
}

} // namespace sim
} // namespace backends
} // namespace aicf
