#ifndef AICF_BACKENDS_SIM_SIMCHECKS_H
#define AICF_BACKENDS_SIM_SIMCHECKS_H

// The shadow of a block's shared memory that the simulator's expensive checks keep (on by
// default; AICF_SIM_CHECKS=0 turns them off):
// - data races: two different threads touch the same granule between two barriers and at
//   least one of them writes it. Threads run in lockstep, so the order of the accesses
//   inside one barrier interval does not matter: what matters is who touched the granule
//   in that interval.
// - reads of shared memory no thread of the block has written since the kernel started.
//
// A granule is the smallest element any shared access of the kernel uses, at most 4 bytes
// (a word of a bank): threads writing neighbouring bytes of one word do not race on a GPU.
// Each cell remembers, for the current barrier interval, its writer and up to two readers;
// a barrier starts a new interval by bumping a counter, so no cell is touched then.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

struct Site;

enum class Hazard : uint8_t {
    None,
    ReadAfterWrite,
    WriteAfterRead,
    WriteAfterWrite,
    Uninitialized
};

// A hazard found when recording an access: what kind, and the other thread involved.
struct Conflict {
    Hazard hazard = Hazard::None;
    int32_t other = -1;
    const Site *other_site = nullptr;
};

class SharedShadow {
public:
    struct Cell {
        uint32_t interval = 0;   // the barrier interval the thread fields below belong to
        uint32_t written_in = 0; // the block that last wrote it (blocks count from 1)
        int32_t writer = -1, reader = -1, other_reader = -1;
        int32_t owner = -1; // the shared allocation last stored here (LoweredKernel::shared)
        const Site *write_site = nullptr, *read_site = nullptr, *other_read_site = nullptr;
    };

    void resize(int64_t shared_bytes, int granule_bytes) {
        granule = granule_bytes;
        cells.assign(size_t((shared_bytes + granule - 1) / granule), Cell{});
        interval = block = 0;
    }

    int granule_bytes() const { return granule; }

    // A new block: nothing of its shared memory is written, and a first barrier interval.
    void start_block() {
        if (block == UINT32_MAX) {
            for (Cell &c : cells)
                c = Cell{};
            block = 0;
        }
        block++;
        barrier();
    }

    void barrier() {
        if (interval == UINT32_MAX) {
            // The counter would wrap: the cells' thread fields are stale after a barrier
            // anyway, so they only need an interval that no longer matches.
            for (Cell &c : cells)
                c.interval = 0;
            interval = 0;
        }
        interval++;
    }

    const Cell &cell(int64_t g) const { return cells[size_t(g)]; }

    Conflict read(int64_t g, int32_t thread, const Site *site) {
        Cell &c = current(g);
        if (c.written_in != block) return {Hazard::Uninitialized, -1, nullptr};
        if (c.writer >= 0 && c.writer != thread) {
            return {Hazard::ReadAfterWrite, c.writer, c.write_site};
        }
        if (c.reader < 0) {
            c.reader = thread;
            c.read_site = site;
        } else if (c.reader != thread && c.other_reader < 0) {
            c.other_reader = thread;
            c.other_read_site = site;
        }
        return {};
    }

    Conflict write(int64_t g, int32_t thread, const Site *site, int32_t owner) {
        Cell &c = current(g);
        if (c.writer >= 0 && c.writer != thread) {
            return {Hazard::WriteAfterWrite, c.writer, c.write_site};
        }
        if (c.reader >= 0 && c.reader != thread) {
            return {Hazard::WriteAfterRead, c.reader, c.read_site};
        }
        if (c.other_reader >= 0 && c.other_reader != thread) {
            return {Hazard::WriteAfterRead, c.other_reader, c.other_read_site};
        }
        c.writer = thread;
        c.write_site = site;
        c.written_in = block;
        c.owner = owner;
        return {};
    }

private:
    Cell &current(int64_t g) {
        Cell &c = cells[size_t(g)];
        if (c.interval != interval) {
            c.interval = interval;
            c.writer = c.reader = c.other_reader = -1;
        }
        return c;
    }

    std::vector<Cell> cells;
    int granule = 4;
    uint32_t interval = 0, block = 0;
};

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
