// The names AICF derives for stages and loops, and how messages show them to users.

#include "dsl/Names.h"

#include <gtest/gtest.h>

using namespace aicf;

namespace {

TEST(Names, LoopNamesTakeApartAsTheyWereBuilt) {
    LoopNameParts p = parse_loop_name(loop_name("blur", 1, "r.x"));
    EXPECT_EQ(p.func, "blur");
    EXPECT_EQ(p.stage, 1);
    EXPECT_EQ(p.var, "r.x");
    p = parse_loop_name(loop_name("f", 12, var_version_name("x", 3)));
    EXPECT_EQ(p.func, "f");
    EXPECT_EQ(p.stage, 12);
    EXPECT_EQ(p.var, "x.v3");
    // Names no loop_name built do not parse.
    EXPECT_EQ(parse_loop_name("in").func, "");
    EXPECT_EQ(parse_loop_name("in.stride.1").func, "");
    EXPECT_EQ(parse_loop_name("f.sx.y").func, "");
    EXPECT_EQ(func_of_loop(loop_name("g", 0, "xo")), "g");
    EXPECT_EQ(stage_of_loop(loop_name("g", 2, "xo")), stage_name("g", 2));
}

TEST(Names, UsersReadStagesAndLoopsAsTheyWroteThem) {
    EXPECT_EQ(stage_for_users("f", 0), "f");
    EXPECT_EQ(stage_for_users("f", 1), "f.update(0)");
    EXPECT_EQ(loop_for_users(loop_name("f", 0, "x")), "x of f");
    EXPECT_EQ(loop_for_users(loop_name("f", 2, var_version_name("yi", 4))), "yi of f.update(1)");
    EXPECT_EQ(loop_for_users(loop_name("f", 0, single_thread_var(false))),
              "gpu_single_thread() of f");
    EXPECT_EQ(loop_for_users("not_a_loop"), "not_a_loop");
    // Printed IR: loop variables become the user's names; bounds and buffers stay as they are.
    std::string text = "f((" + loop_name("g", 0, "x") + " + 1), " + loop_name("g", 1, "r.x") +
                       ", in.stride.1, " + loop_min_name("g", 0, "x") + ")";
    EXPECT_EQ(with_user_loop_names(text),
              "f((x + 1), r.x, in.stride.1, " + loop_min_name("g", 0, "x") + ")");
}

TEST(Names, BoundSymbolsExplained) {
    // Each symbol once, in the order it first appears; loop variables and other names are
    // not bound symbols.
    std::string text = "(in.extent.1 + f.x.extent_realized) - (in.extent.1 + " +
                       loop_extent_name("g", 1, "r.x") + " + " + loop_name("g", 0, "x") +
                       " + in.stride.0 + n)";
    EXPECT_EQ(symbols_for_users(text),
              "in.extent.1 is the extent of buffer in in dimension 1; f.x.extent_realized is the "
              "size of the region of f stored there in x; " +
                  loop_extent_name("g", 1, "r.x") +
                  " is the number of iterations of loop r.x of g.update(0); in.stride.0 is the "
                  "stride of buffer in in dimension 0");
    EXPECT_EQ(symbols_for_users("x + 1"), "");
    EXPECT_EQ(symbols_for_users("f.x.min_realized"),
              "f.x.min_realized is the first point of the region of f stored there in x");
}

TEST(Names, StorageNamesOfTupleElements) {
    EXPECT_EQ(storage_name("f", 0, 1), "f");
    StorageNameParts p = parse_storage_name(storage_name("f", 2, 3));
    EXPECT_EQ(p.func, "f");
    EXPECT_EQ(p.value_index, 2);
    EXPECT_TRUE(p.of_tuple);
    EXPECT_FALSE(parse_storage_name("f").of_tuple);
    std::string whose;
    EXPECT_TRUE(is_prefetch_loop(prefetch_loop_name("in", 0, "line"), &whose));
    EXPECT_EQ(whose, "in");
    EXPECT_FALSE(is_prefetch_loop(loop_name("in", 0, "x")));
}

} // namespace
