// lowering/JamRegisterBlocks.h on loop nests written in IR: which loops it jams, and the shape
// of the result (the copies' blocks under their own names, one reduction loop with every
// copy's updates). Whether jammed code computes the same values is checked on pipelines
// (tests/correctness/test_schedules.cpp, Schedules.RegisterBlocksOfATileRunSideBySide).

#include "dsl/aicf.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "lowering/JamRegisterBlocks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace aicf;
using namespace aicf::ir;

namespace {

struct Nest {
    int extent = 2, chains = 4;
    bool out_read_after = false;    // the part after the reduction reads out
    bool out_stored_inside = false; // the reduction stores to out
    bool out_stored_before = false; // out is written before the reduction
    bool heap_block = false;        // the block lives on the heap
    bool reduction_depends_on_loop = false;
    bool plain_stores = false; // the reduction's stores do not read back the block
};

Expr var(const std::string &name) {
    return Variable::make(Int(32), name);
}

Expr ramp(const Expr &base) {
    return Ramp::make(base, 1, 16);
}

// for xb in [0, extent):
//   let base = xb * 16 * chains
//   allocate acc[16 * chains]
//     acc[c] = 0 (each chain c)
//     for r in [0, 10): acc[c] = acc[c] + x16(a[r]) * in[r * 256 + base + 16 c]
//     out[base + 16 c] = acc[c]
Stmt nest(const Nest &n) {
    const Type v = Float(32, 16);
    Expr xb = var("xb"), r = var("r"), base = var("base");
    std::vector<Stmt> init, update, after, before;
    for (int c = 0; c < n.chains; c++) {
        Expr at = ramp(Expr(16 * c));
        init.push_back(Store::make("acc", Broadcast::make(Expr(0.0f), 16), at, Expr()));
        Expr product = Broadcast::make(Load::make(Float(32), "a", r, Expr()), 16) *
                       Load::make(v, "in", ramp(r * 256 + base + 16 * c), Expr());
        Expr value = n.plain_stores ? product : Load::make(v, "acc", at, Expr()) + product;
        update.push_back(Store::make(n.out_stored_inside && c == 0 ? "out" : "acc", value,
                                     n.out_stored_inside && c == 0 ? ramp(base) : at, Expr()));
        Expr result = Load::make(v, "acc", at, Expr());
        if (n.out_read_after) result = result + Load::make(v, "out", ramp(base + 16 * c), Expr());
        after.push_back(Store::make("out", result, ramp(base + 16 * c), Expr()));
    }
    if (n.out_stored_before)
        before.push_back(Store::make("out", Broadcast::make(Expr(1.0f), 16), ramp(base), Expr()));
    Stmt reduction = For::make("r", n.reduction_depends_on_loop ? xb : Expr(0), Expr(10),
                               ForType::Serial, Block::make(update));
    std::vector<Stmt> parts = before;
    parts.push_back(Block::make(init));
    parts.push_back(reduction);
    parts.push_back(Block::make(after));
    Stmt block =
        Allocate::make("acc", Float(32), n.heap_block ? MemoryType::Heap : MemoryType::Stack,
                       {Expr(16 * n.chains)}, Block::make(parts));
    Stmt body = LetStmt::make("base", xb * (16 * n.chains), block);
    return For::make("xb", Expr(0), Expr(n.extent), ForType::Serial, body);
}

struct Census : IRVisitor {
    int loops = 0, stores_in_loop = 0, depth = 0;
    std::vector<std::string> allocations;
    using IRVisitor::visit;
    void visit(const For *op) override {
        loops++;
        depth++;
        IRVisitor::visit(op);
        depth--;
    }
    void visit(const Store *op) override {
        stores_in_loop += depth > 0;
        IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        allocations.push_back(op->name);
        IRVisitor::visit(op);
    }
};

Census census(const Stmt &s) {
    Census c;
    s.accept(&c);
    return c;
}

// 8 chains at most, 16 accumulators in all (AVX-512's half).
Stmt jam(const Stmt &s) {
    return lowering::jam_register_blocks(s, 8, 16);
}

} // namespace

TEST(JamRegisterBlocks, TwoBlocksOfFourChainsShareOneReduction) {
    const Stmt jammed = jam(nest({}));
    const Census c = census(jammed);
    EXPECT_EQ(c.loops, 1) << jammed;          // xb is gone, r remains
    EXPECT_EQ(c.stores_in_loop, 8) << jammed; // both copies' four updates
    EXPECT_EQ(c.allocations, (std::vector<std::string>{"acc.jam0", "acc.jam1"})) << jammed;
    const std::string text = to_string(jammed);
    // Each copy's block, offset and stores under its own names; the reduction's variable shared.
    EXPECT_NE(text.find("let base.jam1 = (1 * 64)"), std::string::npos) << text;
    EXPECT_NE(text.find("acc.jam1[ramp(48, 1, 16)] = (acc.jam1[ramp(48, 1, 16)] + "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("out[ramp((base.jam1 + 48), 1, 16)] = acc.jam1[ramp(48, 1, 16)]"),
              std::string::npos)
        << text;
    // Copy 0's results are stored before copy 1's, as the loop stored them.
    EXPECT_LT(text.find("out[ramp((base.jam0 + 48)"),
              text.find("out[ramp((base.jam1 + 0), 1, 16)]"))
        << text;
}

TEST(JamRegisterBlocks, FourBlocksOfFourChains) {
    Nest n;
    n.extent = 4;
    const Census c = census(jam(nest(n)));
    EXPECT_EQ(c.loops, 1);
    EXPECT_EQ(c.stores_in_loop, 16);
}

TEST(JamRegisterBlocks, LeavesLoopsThatDoNotQualify) {
    auto unchanged = [](const Nest &n, const char *why) {
        const Stmt s = nest(n);
        EXPECT_TRUE(equal(jam(s), s)) << why << ":\n" << jam(s);
    };
    Nest n;
    n.extent = 5;
    unchanged(n, "extent above 4");
    n = Nest{};
    n.extent = 1;
    unchanged(n, "extent 1");
    n = Nest{};
    n.chains = 9;
    unchanged(n, "more chains than in flight");
    n = Nest{};
    n.extent = 3;
    n.chains = 6;
    unchanged(n, "3 x 6 accumulators past the registers");
    n = Nest{};
    n.out_read_after = true;
    unchanged(n, "the output read back");
    n = Nest{};
    n.out_stored_inside = true;
    unchanged(n, "the reduction stores to the output");
    n = Nest{};
    n.out_stored_before = true;
    unchanged(n, "the output stored before the reduction");
    n = Nest{};
    n.heap_block = true;
    unchanged(n, "a block on the heap");
    n = Nest{};
    n.reduction_depends_on_loop = true;
    unchanged(n, "the reduction's bounds move with the loop");
    n = Nest{};
    n.plain_stores = true;
    unchanged(n, "stores that carry nothing");
}
