#include "dsl/ir/CSE.h"

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "random_expr.h"

#include <gtest/gtest.h>

using namespace aicf;
using namespace aicf::ir;

namespace {

Expr var(const std::string &n) {
    return Variable::make(Int(32), n);
}

int count_lets(const Expr &e) {
    int n = 0;
    visit_each<Let>(e, [&](const Let *) { n++; });
    return n;
}

} // namespace

TEST(CSE, ARepeatedSubexpressionIsComputedOnce) {
    Expr a = var("a"), b = var("b");
    Expr ab = Mul::make(a, b);
    Expr e = Add::make(ab, Mul::make(a, b)); // two distinct nodes, equal structure
    Expr r = common_subexpression_elimination(e);
    const Let *let = r.as<Let>();
    ASSERT_NE(let, nullptr) << r;
    EXPECT_TRUE(equal(let->value, ab)) << r;
    Expr t = Variable::make(Int(32), let->name);
    EXPECT_TRUE(equal(let->body, Add::make(t, t))) << r;
}

TEST(CSE, InnerRepeatsAreBoundBeforeOuterOnes) {
    Expr a = var("a"), b = var("b"), c = var("c");
    Expr inner = Add::make(Mul::make(a, b), c);
    // (a*b + c) twice, and a*b once more on its own: both are computed once.
    Expr e = Add::make(Mul::make(inner, Add::make(Mul::make(a, b), c)), Mul::make(a, b));
    Expr r = common_subexpression_elimination(e);
    EXPECT_EQ(count_lets(r), 2) << r;
    const Let *outer = r.as<Let>();
    ASSERT_NE(outer, nullptr);
    EXPECT_TRUE(equal(outer->value, Mul::make(a, b))) << r; // the child first
    aicf::test::Evaluator eval;
    eval.vars = {{"a", 3}, {"b", -4}, {"c", 7}};
    EXPECT_EQ(eval(r), eval(e));
}

TEST(CSE, LeavesCheapAndPinnedExpressionsAlone) {
    Expr x = var("x");
    EXPECT_TRUE(equal(common_subexpression_elimination(Add::make(x, x)), Add::make(x, x)));
    Expr bx = Add::make(Broadcast::make(x, 4), Broadcast::make(x, 4));
    EXPECT_TRUE(equal(common_subexpression_elimination(bx), bx));
    // A call with a side effect is never moved, nor evaluated a different number of times.
    Expr side = Call::make(Int(32), Intrinsic::runtime_error, {Expr(1)}, Call::Intrinsic);
    Expr e = Add::make(Mul::make(side, x), Mul::make(side, x));
    EXPECT_TRUE(equal(common_subexpression_elimination(e), e));
}

TEST(CSE, StatementsGetTheirExpressionsEliminatedOneByOne) {
    Expr a = var("a"), b = var("b");
    Expr v = Add::make(Mul::make(a, b), Mul::make(a, b));
    Stmt s = Store::make("buf", v, Add::make(Mul::make(a, b), Mul::make(a, b)), const_true());
    Stmt r = common_subexpression_elimination(s);
    const Store *st = r.as<Store>();
    ASSERT_NE(st, nullptr);
    EXPECT_NE(st->value.as<Let>(), nullptr) << r;
    EXPECT_NE(st->index.as<Let>(), nullptr) << r;
}

TEST(CSE, RandomExpressionsEvaluateTheSame) {
    std::vector<std::string> names = {"x", "y", "z"};
    aicf::test::ExprGenerator gen(4321, names);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> value(-50, 50);
    int changed = 0, checked = 0;
    for (int i = 0; i < 4000; i++) {
        // Random parts used more than once, inside a random expression of their own.
        Expr p = gen.int_expr(3), q = gen.int_expr(3);
        Expr e = i % 2
                     ? Add::make(Mul::make(p, q), Sub::make(p, Mul::make(q, p)))
                     : Select::make(LT::make(p, gen.int_expr(2)), Add::make(p, q), Sub::make(q, p));
        Expr r = common_subexpression_elimination(e);
        changed += count_lets(r) > count_lets(e);
        for (int k = 0; k < 4; k++) {
            aicf::test::Evaluator eval;
            for (const std::string &n : names)
                eval.vars[n] = value(rng);
            int64_t expected = eval(e);
            if (eval.overflow) continue;
            ASSERT_EQ(eval(r), expected) << "\n  original " << e << "\n  after    " << r;
            checked++;
        }
    }
    EXPECT_GT(changed, 2000);
    EXPECT_GT(checked, 8000);
}

// A chain thousands of operations deep, with nothing repeated: comparing two of its
// subexpressions costs their depth, so the distinct ones are told apart by their hashes first.
// One subexpression repeated at the bottom is still found once. (Lowering runs on a large
// stack; this test calls CSE on the test's own, so its chain stays 2000 operations deep.)
TEST(CSE, DeepChainsWithoutRepeats) {
    Expr x = var("x");
    Expr shared = Mul::make(x, x);
    Expr e = Add::make(shared, shared);
    for (int i = 0; i < 1000; i++)
        e = Add::make(Mul::make(e, 3), i);
    Expr out = common_subexpression_elimination(e);
    EXPECT_EQ(count_lets(out), 1) << "only x * x repeats";
    const Let *let = out.as<Let>();
    ASSERT_NE(let, nullptr);
    EXPECT_TRUE(equal(let->value, shared));
}
