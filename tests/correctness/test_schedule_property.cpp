// Property test: random valid schedules compute exactly what the default schedule computes,
// and the default schedule computes what the algorithm says (the reference interpreter of
// tests/common/Interpreter.h evaluates it point by point, with no AICF code path).
//
// For each pipeline below, a generator draws schedules that are valid by construction: it
// keeps its own model of every stage's loops (names, pure or reduction, extents it knows,
// loop types) and of where every Func is computed, and only applies a directive the model
// accepts. So a CompileError from a drawn schedule is a bug in the generator or in AICF,
// and fails the test with the schedule that caused it.
//
// Each schedule is printed as the calls that make it, for example
//   g.split(x, x0, x1, 7, GuardWithIf); f.compute_at(g, x0)
// Loops of an RDom print as the library names them, k.x. Funcs that inline reductions
// (sum, maximum, argmax) create are named by the name given to them (msum, vsum, ...).
//
// Results are compared bit for bit with the default schedule's, floats too: none of these
// directives reassociates arithmetic (reduction loops keep their order), so none may change a
// value. (rfactor would; it is not drawn here.)
//
// Environment:
//   AICF_SCHEDULE_SEED        the seed (default kDefaultSeed); printed with the schedule count
//   AICF_SCHEDULE_COUNT       schedules per pipeline (default: each TEST's own count)
//   AICF_SCHEDULE_CASE        run only this schedule index (to reproduce a failure)
//   AICF_SCHEDULE_VERBOSE=1   print every schedule and its time
// Schedule i of a pipeline depends only on the seed, the pipeline and i.
//
// The reproducers of bugs this test found are at the end of the file.

#include "Interpreter.h"
#include "Reference.h"
#include "ScopedEnv.h"

#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace aicf;
using aicf_test::env_int;
using aicf_test::fill_random;

namespace {

constexpr uint64_t kDefaultSeed = 20241129;
// A schedule may make an intermediate compute a little more than its consumers need
// (ShiftInwards, RoundUp); the generator keeps that extra reach below kOvercomputeBudget points
// per dimension and Func. Inputs are larger than the region the default schedule reads by
// exactly what such schedules may read: kOvercomputeBudget for each intermediate between the
// output and the input, plus the stencil's reach. Nothing more, so that a schedule that makes
// AICF read (or think it reads) further fails the input's bounds check.
constexpr int kOvercomputeBudget = 8;
constexpr int kB = kOvercomputeBudget; // for the margins below

uint64_t schedule_seed() {
    const char *s = std::getenv("AICF_SCHEDULE_SEED");
    if (!s || !*s) return kDefaultSeed;
    return std::strtoull(s, nullptr, 0);
}

uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t h = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

uint64_t hash_name(const std::string &s) {
    uint64_t h = 1469598103934665603ull;
    for (char c : s)
        h = (h ^ uint8_t(c)) * 1099511628211ull;
    return h;
}

// An input of the given extents with margin[d] more on each side of dimension d (mins at
// -margin[d]), filled with random non-zero values. Dimensions that only an RDom or the output
// reads get no margin: no valid schedule reads past them.
template <typename T>
Buffer<T> margin_input(const std::string &name, const std::vector<int> &extents,
                       const std::vector<int> &margin, double lo, double hi, unsigned seed) {
    std::vector<int> padded, mins;
    for (size_t d = 0; d < extents.size(); d++) {
        padded.push_back(extents[d] + 2 * margin[d]);
        mins.push_back(-margin[d]);
    }
    Buffer<T> b(padded, name);
    fill_random(b, lo, hi, seed);
    b.set_min(mins);
    return b;
}

// ---------------------------------------------------------------------------------------
// The pipelines. Each call builds fresh Funcs (so a schedule applies to new Funcs); the
// inputs are built once.

struct Instance {
    Func output;
    std::vector<int> sizes;
};

// (a) A pointwise chain of three Funcs over 2-D int32 data.
struct PointwiseChain {
    Var x{"x"}, y{"y"};
    Func a{"a"}, b{"b"}, c{"c"};
    explicit PointwiseChain(const Buffer<int> &in) {
        a(x, y) = in(x, y) * 3 + 7;
        b(x, y) = a(x, y) - in(x, y) / 2 + y;
        c(x, y) = b(x, y) * a(x, y) + (x - y);
    }
};

Instance pointwise() {
    static Buffer<int> in = margin_input<int>("in", {37, 29}, {2 * kB, 2 * kB}, -100, 100, 101);
    return {PointwiseChain(in).c, {37, 29}};
}

// (b) A two-stage int32 stencil over an input with a margin.
Instance stencil() {
    static Buffer<int> in = margin_input<int>("in", {53, 19}, {kB + 2, kB + 2}, -100, 100, 102);
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = in(x - 1, y) * 3 + in(x + 1, y + 1) - in(x, y - 1);
    g(x, y) = f(x, y - 1) + f(x, y + 1) * 2 + f(x + 1, y);
    return {g, {53, 19}};
}

// (c) Matrix multiply: a pure initialization and an update over an RDom.
Instance matmul() {
    const int Rows = 19, N = 23, K = 31;
    static Buffer<float> A = margin_input<float>("A", {K, Rows}, {0, 0}, -1.0, 1.0, 103);
    static Buffer<float> B = margin_input<float>("B", {N, K}, {0, 0}, -1.0, 1.0, 104);
    Var i("i"), j("j");
    RDom k(0, K, "k");
    Func C("C");
    C(j, i) = 0.0f;
    C(j, i) += A(k, i) * B(j, k);
    return {C, {N, Rows}};
}

// (c') The same product as an intermediate that starts from another Func (read only by its
// pure definition, so compute_at must name the stage), read by an epilogue.
// Its Funcs, made anew (a schedule applies to them) over inputs that may be shared.
struct Epilogue {
    static constexpr int Rows = 17, N = 29, K = 37;
    Func init{"init"}, C{"C"}, out{"out"};
    Var i{"i"}, j{"j"};
    Epilogue(const Buffer<float> &A, const Buffer<float> &B, const Buffer<float> &bias) {
        RDom k(0, K, "k");
        init(j, i) = bias(j) * 0.25f - cast<float>(i);
        C(j, i) = init(j, i);
        C(j, i) += A(k, i) * B(j, k);
        out(j, i) = C(j, i) * 0.5f + bias(j);
    }
    static Buffer<float> A_input(unsigned seed) {
        return margin_input<float>("A", {K, Rows}, {0, kB}, -1.0, 1.0, seed);
    }
    static Buffer<float> B_input(unsigned seed) {
        return margin_input<float>("B", {N, K}, {kB, 0}, -1.0, 1.0, seed);
    }
    static Buffer<float> bias_input(unsigned seed) {
        return margin_input<float>("bias", {N}, {2 * kB}, -1.0, 1.0, seed);
    }
};

Instance matmul_epilogue() {
    static Buffer<float> A = Epilogue::A_input(105), B = Epilogue::B_input(106),
                         bias = Epilogue::bias_input(107);
    return {Epilogue(A, B, bias).out, {Epilogue::N, Epilogue::Rows}};
}

// (d) Row-wise layernorm: mean and variance by inline sums, then normalize.
Instance layernorm() {
    const int D = 53, R = 19;
    static Buffer<float> in = margin_input<float>("in", {D, R}, {0, 4 * kB}, -3.0, 3.0, 108);
    static Buffer<float> gamma = margin_input<float>("gamma", {D}, {0}, 0.5, 1.5, 109);
    static Buffer<float> beta = margin_input<float>("beta", {D}, {0}, -0.5, 0.5, 110);
    Var c("c"), r("r");
    RDom k(0, D, "k");
    Func mean("mean"), var("var"), norm("norm");
    mean(r) = sum(in(k, r), "msum") / float(D);
    Expr d = in(k, r) - mean(r);
    var(r) = sum(d * d, "vsum") / float(D);
    norm(c, r) = (in(c, r) - mean(r)) * rsqrt(var(r) + 1e-5f) * gamma(c) + beta(c);
    return {norm, {D, R}};
}

// (e) Row-wise softmax: maximum, exp, sum.
Instance softmax() {
    const int D = 47, R = 13;
    static Buffer<float> in = margin_input<float>("in", {D, R}, {kB, 5 * kB}, -8.0, 8.0, 111);
    Var c("c"), r("r");
    RDom k(0, D, "k");
    Func mx("mx"), e("e"), den("den"), sm("sm");
    mx(r) = maximum(in(k, r), "rmax");
    e(c, r) = exp(in(c, r) - mx(r));
    den(r) = sum(e(k, r), "dsum");
    sm(c, r) = e(c, r) / den(r);
    return {sm, {D, R}};
}

// (f) A histogram of a uint8 image over a 2-D RDom, read by a consumer.
Instance histogram() {
    const int W = 37, H = 29, Bins = 61;
    static Buffer<uint8_t> in = margin_input<uint8_t>("in", {W, H}, {kB, kB}, 1, 250, 112);
    Var x("x"), y("y");
    RDom r(0, W, 0, H, "r");
    Func v("v"), hist("hist"), out("out");
    v(x, y) = cast<int>(in(x, y)) * 7 % Bins;
    hist(x) = 0;
    hist(clamp(v(r.x, r.y), 0, Bins - 1)) += 1;
    out(x) = hist(x) * 3 + hist(Bins - 1 - x);
    return {out, {Bins}};
}

// (g) A Tuple reduction: argmax per row (with a tie), read by a Tuple-valued output.
Instance tuple_argmax() {
    const int D = 41, R = 17;
    static Buffer<float> in = [] {
        Buffer<float> b = margin_input<float>("in", {D, R}, {0, 2 * kB}, -5.0, 5.0, 113);
        b(30, 2) = 100.0f; // a tie: the first occurrence wins
        b(35, 2) = 100.0f;
        return b;
    }();
    Var c("c"), r("r");
    RDom k(0, D, "k");
    Func best("best"), out("out");
    best(r) = argmax(in(k, r), "amax");
    out(c, r) = Tuple(in(c, r) - best(r)[1], select(c == best(r)[0], 1, 0) + c);
    return {out, {D, R}};
}

// (g') An explicit Tuple update: the running (max, sum of exp) of a streaming softmax.
Instance tuple_online_softmax() {
    const int D = 43, R = 11;
    static Buffer<float> in = margin_input<float>("in", {D, R}, {0, kB}, -4.0, 4.0, 114);
    Var c("c"), r("r");
    RDom k(0, D, "k");
    Func stats("stats"), out("out");
    stats(r) = Tuple(-1e30f, 0.0f);
    Expr m = stats(r)[0], s = stats(r)[1];
    Expr nm = max(m, in(k, r));
    stats(r) = Tuple(nm, s * exp(m - nm) + exp(in(k, r) - nm));
    out(c, r) = exp(in(c, r) - stats(r)[0]) / stats(r)[1];
    return {out, {D, R}};
}

// ---------------------------------------------------------------------------------------
// The Funcs of a pipeline and which stages call which.

struct Use {
    int consumer;
    int stage;
};

struct FuncInfo {
    Func f;
    std::string label; // the name without the counter inline reductions append
    bool is_output = false;
    std::vector<Use> uses;
};

// Every Func the output depends on, producers first, the output last.
std::vector<FuncInfo> discover(const Func &output) {
    std::vector<FuncInfo> infos;
    std::map<const ir::FunctionContents *, int> index;
    std::vector<std::vector<std::pair<const ir::FunctionContents *, int>>> callees;
    std::function<void(const ir::Function &)> visit = [&](const ir::Function &f) {
        if (index.count(f.get())) return;
        std::vector<std::pair<const ir::FunctionContents *, int>> calls;
        std::vector<ir::Function> to_visit;
        for (int s = 0; s < f.stages(); s++) {
            const ir::Definition &d = f.stage(s);
            std::vector<ir::Expr> exprs = d.values;
            exprs.insert(exprs.end(), d.args.begin(), d.args.end());
            for (const ir::Expr &e : exprs) {
                ir::visit_each<ir::Call>(e, [&](const ir::Call *c) {
                    if (c->call_type != ir::Call::Func || c->func.get() == f.get()) return;
                    std::pair<const ir::FunctionContents *, int> key{c->func.get(), s};
                    if (std::find(calls.begin(), calls.end(), key) == calls.end()) {
                        calls.push_back(key);
                        to_visit.push_back(ir::Function(c->func.get()));
                    }
                });
            }
        }
        for (const ir::Function &g : to_visit)
            visit(g);
        index[f.get()] = static_cast<int>(infos.size());
        FuncInfo info;
        info.f = Func(f);
        info.label = f.name();
        if (f.name() != output.name()) {
            while (!info.label.empty() &&
                   std::isdigit(static_cast<unsigned char>(info.label.back())))
                info.label.pop_back();
        }
        infos.push_back(info);
        callees.push_back(calls);
    };
    visit(output.function());
    for (size_t c = 0; c < infos.size(); c++) {
        for (const auto &[callee, stage] : callees[c])
            infos[index.at(callee)].uses.push_back({int(c), stage});
    }
    infos.back().is_output = true;
    return infos;
}

// ---------------------------------------------------------------------------------------
// The generator's model of a schedule.

using ir::ForType;

struct Loop {
    std::string name;
    bool rvar = false;
    int64_t extent = -1;   // exact extent, when the generator knows it
    bool constant = false; // the extent is a constant in the IR (not just known here)
    int orig = -1;         // the pure dimension this loop walks by splits alone, or -1
    int64_t stride = 1;    // the step in that dimension from one iteration to the next
    bool outermost = true; // no loop outside it walks the same variable
    bool derived = false;  // made by a split, fuse or rename
    ForType type = ForType::Serial;
};

// One stage: its loops, innermost first as the library keeps them.
struct StageModel {
    std::vector<Loop> dims;
};

// A loop of some stage of some Func.
struct LoopRef {
    int func;
    int stage;
    std::string name;
    bool operator==(const LoopRef &o) const {
        return func == o.func && stage == o.stage && name == o.name;
    }
};

struct FuncModel {
    bool inlined = false;
    std::vector<StageModel> stages;
    std::vector<int64_t> budget;             // extra reach left per pure dimension
    std::vector<LoopRef> path;               // the loops around its computation, outermost first
    std::vector<std::vector<LoopRef>> sites; // inlined: the loop paths of the places it lands
    int64_t enclosing_unroll = 1;            // product of the unrolled extents around it
    int counter = 0;                         // for fresh loop names
};

const char *tail_name(TailStrategy t) {
    switch (t) {
    case TailStrategy::Auto:
        return "Auto";
    case TailStrategy::RoundUp:
        return "RoundUp";
    case TailStrategy::GuardWithIf:
        return "GuardWithIf";
    case TailStrategy::ShiftInwards:
        return "ShiftInwards";
    }
    return "?";
}

std::string shown(const std::string &loop) {
    std::string s = loop;
    std::replace(s.begin(), s.end(), '$', '.');
    return s;
}

class ScheduleGenerator {
public:
    ScheduleGenerator(uint64_t seed, std::vector<FuncInfo> &infos, const std::vector<int> &sizes)
        : rng(seed), prefetch_rng(seed ^ 0x9e3779b97f4a7c15ull),
          storage_rng(seed ^ 0xc2b2ae3d27d4eb4full), infos(infos), sizes(sizes), m(infos.size()) {}

    // Draws a schedule and applies it to the Funcs. Returns false (with `error`) if the
    // library refused a directive the model accepted.
    bool run(std::string &error) {
        try {
            for (int p = static_cast<int>(infos.size()) - 1; p >= 0; p--) {
                init_model(p);
                if (!infos[p].is_output) place(p);
                if (m[p].inlined) continue;
                for (int s = 0; s < static_cast<int>(m[p].stages.size()); s++)
                    schedule_stage(p, s);
                for (int s = 0; s < static_cast<int>(m[p].stages.size()); s++)
                    add_prefetch(p, s);
                add_storage(p);
            }
        } catch (const CompileError &e) {
            error = std::string("CompileError while applying the schedule: ") + e.what();
            return false;
        }
        return true;
    }

    std::string text() const {
        std::string s;
        for (const std::string &l : log)
            s += (s.empty() ? "" : "; ") + l;
        return s.empty() ? "(default schedule)" : s;
    }

private:
    std::mt19937_64 rng;
    // Prefetches and storage are drawn from their own streams, so they leave the rest of each
    // schedule as the seed has always drawn it.
    std::mt19937_64 prefetch_rng, storage_rng;
    std::vector<FuncInfo> &infos;
    const std::vector<int> &sizes;
    std::vector<FuncModel> m;
    std::vector<std::string> log;

    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    // Sometimes, once a stage's loops are final, a prefetch of an input the stage reads: at a
    // loop that is not vectorized, looking ahead in it or in a loop around it.
    void add_prefetch(int p, int stage) {
        auto draw = [&](int lo, int hi) {
            return std::uniform_int_distribution<int>(lo, hi)(prefetch_rng);
        };
        if (draw(0, 3) != 0) return;
        const ir::Definition &d = infos[p].f.function().stage(stage);
        std::vector<std::shared_ptr<BufferStorage>> inputs;
        for (const ir::Expr &e : d.values) {
            ir::visit_each<ir::Call>(e, [&](const ir::Call *c) {
                if (c->call_type == ir::Call::Image && c->param.buffer())
                    inputs.push_back(c->param.buffer());
            });
        }
        const std::vector<Loop> &dims = m[p].stages[size_t(stage)].dims;
        std::vector<size_t> at_choices;
        for (size_t i = 0; i < dims.size(); i++)
            if (dims[i].type != ForType::Vectorized) at_choices.push_back(i);
        if (inputs.empty() || at_choices.empty()) return;
        struct Handle : BufferBase {
            explicit Handle(std::shared_ptr<BufferStorage> s) : BufferBase(std::move(s)) {}
        };
        Handle input(inputs[size_t(draw(0, int(inputs.size()) - 1))]);
        size_t at = at_choices[size_t(draw(0, int(at_choices.size()) - 1))];
        size_t from = size_t(draw(int(at), int(dims.size()) - 1));
        static const int offsets[] = {0, 1, 2, 5};
        int offset = offsets[draw(0, 3)];
        bool clamp = draw(0, 1) == 1;
        Stage target = stage == 0 ? Stage(infos[p].f.function(), 0) : infos[p].f.update(stage - 1);
        target.prefetch(input, VarOrRVar(dims[at].name, dims[at].rvar),
                        VarOrRVar(dims[from].name, dims[from].rvar), offset,
                        clamp ? PrefetchBoundStrategy::Clamp : PrefetchBoundStrategy::GuardWithIf);
        log.push_back(
            label(p) + (stage == 0 ? "." : ".update(" + std::to_string(stage - 1) + ").") +
            "prefetch(" + input.name() + ", " + shown(dims[at].name) + ", " +
            shown(dims[from].name) + ", " + std::to_string(offset) + (clamp ? ", Clamp)" : ")"));
    }
    // Sometimes, for a Func with storage of its own (not inlined, not an output), where it is
    // stored: the heap, or the stack (where its size is only known at run time, the heap
    // again). Auto, the default, chooses the stack for small constant sizes.
    void add_storage(int p) {
        if (infos[p].is_output || m[p].inlined) return;
        const int draw = std::uniform_int_distribution<int>(0, 3)(storage_rng);
        if (draw >= 2) return;
        const MemoryType t = draw == 0 ? MemoryType::Heap : MemoryType::Stack;
        infos[p].f.store_in(t);
        log.push_back(label(p) + ".store_in(MemoryType::" + (draw == 0 ? "Heap" : "Stack") + ")");
    }
    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    template <typename T> const T &pick(const std::vector<T> &v) {
        return v[size_t(uniform(0, int(v.size()) - 1))];
    }

    const std::string &label(int f) const { return infos[f].label; }

    void init_model(int p) {
        FuncModel &fm = m[p];
        const ir::Function &fn = infos[p].f.function();
        fm.budget.assign(fn.args().size(), infos[p].is_output ? 0 : kOvercomputeBudget);
        for (int s = 0; s < fn.stages(); s++) {
            const ir::Definition &d = fn.stage(s);
            StageModel st;
            for (const ir::Dim &dim : d.schedule.dims) {
                Loop l;
                l.name = dim.var;
                l.rvar = dim.is_rvar;
                if (dim.is_rvar) {
                    for (const ir::ReductionVariable &rv : d.rdom.domain()) {
                        if (rv.var != dim.var) continue;
                        if (auto c = ir::as_const_int(rv.extent)) {
                            l.extent = *c;
                            l.constant = true;
                        }
                    }
                } else {
                    const auto &args = fn.args();
                    l.orig = int(std::find(args.begin(), args.end(), dim.var) - args.begin());
                    if (infos[p].is_output) l.extent = sizes[size_t(l.orig)];
                }
                st.dims.push_back(l);
            }
            fm.stages.push_back(st);
        }
    }

    const Loop &loop_of(const LoopRef &r) const {
        for (const Loop &l : m[r.func].stages[r.stage].dims)
            if (l.name == r.name) return l;
        ADD_FAILURE() << "generator: no loop " << r.name;
        return m[r.func].stages[r.stage].dims[0];
    }

    // The loops around the calls that stage `stage` of Func c makes, outermost first.
    std::vector<LoopRef> use_path(int c, int stage) const {
        std::vector<LoopRef> path = m[c].path;
        const auto &dims = m[c].stages[stage].dims;
        for (auto it = dims.rbegin(); it != dims.rend(); ++it)
            path.push_back({c, stage, it->name});
        return path;
    }

    // The loop paths of every place that calls Func p, through inlined Funcs.
    std::vector<std::vector<LoopRef>> use_sites(int p) const {
        std::vector<std::vector<LoopRef>> sites;
        for (const Use &u : infos[p].uses) {
            if (m[u.consumer].inlined) {
                sites.insert(sites.end(), m[u.consumer].sites.begin(), m[u.consumer].sites.end());
            } else {
                sites.push_back(use_path(u.consumer, u.stage));
            }
        }
        return sites;
    }

    // How to name a loop in compute_at / store_at: by Func and loop name, unless a later
    // stage of that Func has a loop of the same name (the library picks the last stage).
    std::string level_text(const LoopRef &r, LoopLevel &level) const {
        bool ambiguous = false;
        for (size_t s = size_t(r.stage) + 1; s < m[r.func].stages.size(); s++)
            for (const Loop &l : m[r.func].stages[s].dims)
                ambiguous = ambiguous || l.name == r.name;
        const std::string &fname = infos[r.func].f.name();
        if (ambiguous) {
            level = LoopLevel(fname, r.name, r.stage);
            return "LoopLevel(\"" + label(r.func) + "\", \"" + shown(r.name) + "\", " +
                   std::to_string(r.stage) + ")";
        }
        level = LoopLevel(fname, r.name);
        return label(r.func) + ", " + shown(r.name);
    }

    // Where Func p is computed and stored. Its consumers are placed and scheduled already.
    void place(int p) {
        FuncModel &fm = m[p];
        Func &f = infos[p].f;
        bool has_updates = f.num_update_definitions() > 0;
        std::vector<std::vector<LoopRef>> sites = use_sites(p);
        // The loops that enclose every use: the common prefix of the paths. Of those, the
        // ones p may be computed at: not inside too much unrolling.
        std::vector<LoopRef> common = sites.at(0);
        for (const auto &s : sites) {
            size_t n = 0;
            while (n < common.size() && n < s.size() && common[n] == s[n])
                n++;
            common.resize(n);
        }
        std::vector<int64_t> unroll_at;
        int64_t unroll = 1;
        for (size_t i = 0; i < common.size(); i++) {
            const Loop &l = loop_of(common[i]);
            if (l.type == ForType::Unrolled) unroll *= l.extent;
            if (unroll > 16) {
                common.resize(i);
                break;
            }
            unroll_at.push_back(unroll);
        }
        enum { Default, Inline, Root, At } choice;
        for (;;) {
            int r = uniform(0, 9);
            choice = r < 2 ? Default : r < 3 ? Inline : r < 5 ? Root : At;
            if (choice == Inline && has_updates) continue;
            if (choice == At && common.empty()) continue;
            break;
        }
        if (choice == Default) {
            fm.inlined = !has_updates;
        } else if (choice == Inline) {
            fm.inlined = true;
            log.push_back(label(p) + ".compute_inline()");
            f.compute_inline();
        } else if (choice == Root) {
            log.push_back(label(p) + ".compute_root()");
            f.compute_root();
        } else {
            size_t k = size_t(uniform(0, int(common.size()) - 1));
            fm.enclosing_unroll = unroll_at[k];
            fm.path.assign(common.begin(), common.begin() + long(k) + 1);
            LoopLevel compute_level;
            std::string compute_text =
                label(p) + ".compute_at(" + level_text(common[k], compute_level) + ")";
            // Storage at an outer level: only across serial (or unrolled) loops, so that no two
            // threads compute into one allocation.
            std::string store_text;
            LoopLevel store_level;
            int store = -2; // -2: with the computation, -1: root, else the index in `common`
            if (chance(0.35)) {
                int s = uniform(-1, int(k) - 1);
                bool ok = true;
                for (size_t i = size_t(s + 1); i <= k; i++) {
                    ForType t = loop_of(common[i]).type;
                    ok = ok && (t == ForType::Serial || t == ForType::Unrolled);
                }
                if (ok) store = s;
            }
            if (store == -1) {
                store_text = label(p) + ".store_root()";
            } else if (store >= 0) {
                store_text =
                    label(p) + ".store_at(" + level_text(common[size_t(store)], store_level) + ")";
            }
            bool store_first = chance(0.5);
            auto apply_store = [&] {
                if (store == -2) return;
                log.push_back(store_text);
                if (store == -1) {
                    f.store_root();
                } else {
                    f.store_at(store_level);
                }
            };
            if (store_first) apply_store();
            log.push_back(compute_text);
            f.compute_at(compute_level);
            if (!store_first) apply_store();
        }
        if (fm.inlined) fm.sites = sites;
    }

    // ---- loop directives ----

    std::string fresh(int p, int stage, const std::string &base) {
        FuncModel &fm = m[p];
        const auto &args = infos[p].f.function().args();
        // Update stages may reuse the name of a pure variable that is no longer a loop.
        if (stage > 0 && chance(0.08)) {
            const std::string &a = pick(args);
            if (find(fm.stages[size_t(stage)].dims, a) < 0) return a;
        }
        for (;;) {
            std::string n = base + std::to_string(fm.counter++);
            bool used = std::find(args.begin(), args.end(), n) != args.end();
            for (const auto &st : fm.stages)
                for (const Loop &l : st.dims)
                    used = used || l.name == n;
            if (!used) return n;
        }
    }

    static std::string stem(const std::string &loop) {
        std::string s = loop.substr(0, loop.find('.'));
        while (s.size() > 1 && std::isdigit(static_cast<unsigned char>(s.back())))
            s.pop_back();
        return s;
    }

    static int find(const std::vector<Loop> &dims, const std::string &name) {
        for (size_t i = 0; i < dims.size(); i++)
            if (dims[i].name == name) return int(i);
        return -1;
    }

    // Can `name` be given to a new loop of this stage (the library's check_fresh)?
    bool can_create(int p, int stage, const std::vector<Loop> &dims,
                    const std::string &name) const {
        if (find(dims, name) >= 0) return false;
        const auto &args = infos[p].f.function().args();
        return stage > 0 || std::find(args.begin(), args.end(), name) == args.end();
    }

    // Splits a loop in the model. False if the split is not valid.
    bool model_split(int p, int stage, StageModel &st, std::vector<int64_t> &budget,
                     const std::string &old, const std::string &outer, const std::string &inner,
                     int factor, TailStrategy tail) const {
        std::vector<Loop> &dims = st.dims;
        int i = find(dims, old);
        if (i < 0 || outer == inner) return false;
        if (outer != old && !can_create(p, stage, dims, outer)) return false;
        if (inner != old && !can_create(p, stage, dims, inner)) return false;
        Loop l = dims[size_t(i)];
        if (l.rvar && tail != TailStrategy::Auto && tail != TailStrategy::GuardWithIf) return false;
        if (stage > 0 && tail == TailStrategy::ShiftInwards) return false;
        // An update may run past the end of its variable, but not into the next iteration of
        // an outer loop over the same variable: that would apply it twice to some points. The
        // library refuses RoundUp on such loops even where the factor divides the extent.
        if (stage > 0 && tail == TailStrategy::RoundUp && !l.outermost) return false;
        TailStrategy eff = tail;
        if (eff == TailStrategy::Auto)
            eff = (l.rvar || stage > 0) ? TailStrategy::GuardWithIf : TailStrategy::ShiftInwards;
        // How far past the loop's range the split computes, in iterations of the loop.
        int64_t over = 0;
        if (eff == TailStrategy::ShiftInwards) {
            over = l.extent >= 0 ? std::max<int64_t>(0, factor - l.extent) : factor - 1;
        } else if (eff == TailStrategy::RoundUp) {
            over =
                l.extent >= 0 ? (l.extent + factor - 1) / factor * factor - l.extent : factor - 1;
        }
        if (over > 0) {
            // Outputs may not compute outside their buffers, nor reductions outside their
            // domain; intermediates may, a little.
            if (l.orig < 0 || l.rvar) return false;
            int64_t reach = over * l.stride;
            if (reach > budget[size_t(l.orig)]) return false;
            budget[size_t(l.orig)] -= reach;
        }
        Loop in = l, out = l;
        in.name = inner;
        in.extent = factor;
        in.constant = true;
        in.outermost = false;
        in.derived = true;
        out.name = outer;
        out.extent = l.extent >= 0 ? (l.extent + factor - 1) / factor : -1;
        out.stride = l.stride * factor;
        out.type = ForType::Serial;
        out.derived = true;
        dims[size_t(i)] = in;
        dims.insert(dims.begin() + i + 1, out);
        return true;
    }

    // The library's reorder: `vars` (innermost first) take the places the named loops held,
    // in order. False if it would change the order of the reduction loops.
    static bool model_reorder(std::vector<Loop> &dims, const std::vector<std::string> &vars) {
        std::vector<size_t> slots;
        for (const std::string &v : vars) {
            int i = find(dims, v);
            if (i < 0 || std::find(slots.begin(), slots.end(), size_t(i)) != slots.end())
                return false;
            slots.push_back(size_t(i));
        }
        std::vector<size_t> sorted = slots;
        std::sort(sorted.begin(), sorted.end());
        std::vector<Loop> result = dims;
        for (size_t k = 0; k < sorted.size(); k++)
            result[sorted[k]] = dims[slots[k]];
        std::vector<std::string> before, after;
        for (const Loop &l : dims)
            if (l.rvar) before.push_back(l.name);
        for (const Loop &l : result)
            if (l.rvar) after.push_back(l.name);
        if (before != after) return false;
        dims = result;
        return true;
    }

    // Rules on the loop types of a whole stage: vectorize and unroll need constant extents,
    // vectorize and parallel need pure loops; a bounded amount of unrolling and vectorizing.
    bool types_valid(int p, const std::vector<Loop> &dims) const {
        int vectors = 0;
        int64_t unroll = m[p].enclosing_unroll;
        for (const Loop &l : dims) {
            if (l.type == ForType::Vectorized) {
                vectors++;
                if (l.rvar || !l.constant || l.extent > 32) return false;
            } else if (l.type == ForType::Unrolled) {
                if (!l.constant || l.extent > 16) return false;
                unroll *= l.extent;
            } else if (l.type == ForType::Parallel) {
                if (l.rvar) return false;
            }
        }
        return vectors <= 2 && unroll <= 64;
    }

    TailStrategy random_tail() {
        static const TailStrategy tails[] = {TailStrategy::Auto, TailStrategy::GuardWithIf,
                                             TailStrategy::ShiftInwards, TailStrategy::RoundUp};
        return tails[uniform(0, 3)];
    }

    void schedule_stage(int p, int stage) {
        int n = uniform(0, 4);
        for (int d = 0; d < n; d++) {
            for (int tries = 0; tries < 12; tries++)
                if (try_directive(p, stage)) break;
        }
    }

    // Draws one directive; if the model accepts it, applies it and returns true.
    bool try_directive(int p, int stage) {
        FuncModel &fm = m[p];
        StageModel st = fm.stages[size_t(stage)];
        std::vector<Loop> &dims = st.dims;
        std::vector<int64_t> budget = fm.budget;
        if (dims.empty()) return true;
        const Loop &l = pick(dims);
        const std::string old = l.name;
        const bool rv = l.rvar;
        auto var = [](const std::string &name, bool is_rvar) { return VarOrRVar(name, is_rvar); };
        std::string text;
        std::function<void(Stage &)> apply;

        int kind = uniform(0, 13);
        switch (kind) {
        case 0:
        case 1:
        case 2: { // split
            int factor = uniform(1, 9);
            TailStrategy tail = random_tail();
            std::string outer = chance(0.25) ? old : fresh(p, stage, stem(old) + "o");
            std::string inner =
                outer != old && chance(0.1) ? old : fresh(p, stage, stem(old) + "i");
            if (!model_split(p, stage, st, budget, old, outer, inner, factor, tail)) return false;
            text = "split(" + shown(old) + ", " + shown(outer) + ", " + shown(inner) + ", " +
                   std::to_string(factor) + ", " + tail_name(tail) + ")";
            apply = [=](Stage &s) {
                s.split(var(old, rv), var(outer, rv), var(inner, rv), factor, tail);
            };
            break;
        }
        case 3: { // tile
            if (dims.size() < 2) return false;
            const Loop &l2 = pick(dims);
            if (l2.name == old) return false;
            const std::string y = l2.name;
            const bool yrv = l2.rvar;
            int fx = uniform(1, 9), fy = uniform(1, 9);
            TailStrategy tail = random_tail();
            bool short_form = chance(0.4);
            std::string xo = short_form ? old : fresh(p, stage, stem(old) + "o");
            std::string yo = short_form ? y : fresh(p, stage, stem(y) + "o");
            std::string xi = fresh(p, stage, stem(old) + "i");
            std::string yi = fresh(p, stage, stem(y) + "i");
            if (!model_split(p, stage, st, budget, old, xo, xi, fx, tail)) return false;
            if (!model_split(p, stage, st, budget, y, yo, yi, fy, tail)) return false;
            if (!model_reorder(dims, {xi, yi, xo, yo})) return false;
            if (short_form) {
                text = "tile(" + shown(old) + ", " + shown(y) + ", " + shown(xi) + ", " +
                       shown(yi) + ", " + std::to_string(fx) + ", " + std::to_string(fy) + ", " +
                       tail_name(tail) + ")";
                apply = [=](Stage &s) {
                    s.tile(var(old, rv), var(y, yrv), var(xi, rv), var(yi, yrv), fx, fy, tail);
                };
            } else {
                text = "tile(" + shown(old) + ", " + shown(y) + ", " + shown(xo) + ", " +
                       shown(yo) + ", " + shown(xi) + ", " + shown(yi) + ", " + std::to_string(fx) +
                       ", " + std::to_string(fy) + ", " + tail_name(tail) + ")";
                apply = [=](Stage &s) {
                    s.tile(var(old, rv), var(y, yrv), var(xo, rv), var(yo, yrv), var(xi, rv),
                           var(yi, yrv), fx, fy, tail);
                };
            }
            break;
        }
        case 4:
        case 5: { // reorder
            if (dims.size() < 2) return false;
            int count = uniform(2, int(dims.size()));
            std::vector<size_t> idx(dims.size());
            for (size_t i = 0; i < idx.size(); i++)
                idx[i] = i;
            std::shuffle(idx.begin(), idx.end(), rng);
            idx.resize(size_t(count));
            // The chosen loops, innermost first after the reorder; the reduction loops among
            // them keep their order.
            std::vector<size_t> order = idx;
            std::shuffle(order.begin(), order.end(), rng);
            std::vector<size_t> sorted_r;
            for (size_t i : order)
                if (dims[i].rvar) sorted_r.push_back(i);
            std::sort(sorted_r.begin(), sorted_r.end());
            size_t next = 0;
            for (size_t &i : order)
                if (dims[i].rvar) i = sorted_r[next++];
            std::vector<std::string> names;
            std::vector<bool> rvars;
            for (size_t i : order) {
                names.push_back(dims[i].name);
                rvars.push_back(dims[i].rvar);
            }
            if (!model_reorder(dims, names)) return false;
            text = "reorder(";
            for (size_t i = 0; i < names.size(); i++)
                text += (i ? ", " : "") + shown(names[i]);
            text += ")";
            apply = [=](Stage &s) {
                std::vector<VarOrRVar> vs;
                for (size_t i = 0; i < names.size(); i++)
                    vs.push_back(var(names[i], rvars[i]));
                s.reorder(vs);
            };
            break;
        }
        case 6: { // fuse two adjacent loops of the same kind
            int i = find(dims, old);
            if (size_t(i) + 1 >= dims.size() || dims[size_t(i) + 1].rvar != rv) return false;
            Loop in = dims[size_t(i)], out = dims[size_t(i) + 1];
            int r = uniform(0, 9);
            std::string fused = r == 0 ? in.name : r == 1 ? out.name : fresh(p, stage, "t");
            if (fused != in.name && fused != out.name && !can_create(p, stage, dims, fused))
                return false;
            Loop f = in; // the fused loop keeps the inner loop's type
            f.name = fused;
            f.extent = in.extent >= 0 && out.extent >= 0 ? in.extent * out.extent : -1;
            f.constant = in.constant && out.constant;
            f.orig = -1;
            f.outermost = false;
            f.derived = true;
            dims[size_t(i)] = f;
            dims.erase(dims.begin() + i + 1);
            text = "fuse(" + shown(in.name) + ", " + shown(out.name) + ", " + shown(fused) + ")";
            std::string a = in.name, b = out.name;
            apply = [=](Stage &s) { s.fuse(var(a, rv), var(b, rv), var(fused, rv)); };
            break;
        }
        case 7: { // rename
            std::string name = fresh(p, stage, stem(old) + "r");
            if (!can_create(p, stage, dims, name)) return false;
            dims[size_t(find(dims, old))].name = name;
            dims[size_t(find(dims, name))].derived = true;
            text = "rename(" + shown(old) + ", " + shown(name) + ")";
            apply = [=](Stage &s) { s.rename(var(old, rv), var(name, rv)); };
            break;
        }
        case 8:
        case 9: { // vectorize, unroll, parallel, serial on an existing loop
            static const ForType types[] = {ForType::Vectorized, ForType::Unrolled,
                                            ForType::Parallel, ForType::Serial};
            ForType t = types[uniform(0, 3)];
            dims[size_t(find(dims, old))].type = t;
            const char *what = t == ForType::Vectorized ? "vectorize"
                               : t == ForType::Unrolled ? "unroll"
                               : t == ForType::Parallel ? "parallel"
                                                        : "serial";
            text = std::string(what) + "(" + shown(old) + ")";
            apply = [=](Stage &s) {
                if (t == ForType::Vectorized) s.vectorize(var(old, rv));
                if (t == ForType::Unrolled) s.unroll(var(old, rv));
                if (t == ForType::Parallel) s.parallel(var(old, rv));
                if (t == ForType::Serial) s.serial(var(old, rv));
            };
            break;
        }
        case 10:
        case 11: { // vectorize(v, factor), unroll(v, factor): split, then the inner loop
            bool vec = kind == 10;
            int factor = uniform(1, 9);
            TailStrategy tail = random_tail();
            std::string inner = old + (vec ? "_vi" : "_ui");
            if (!model_split(p, stage, st, budget, old, old, inner, factor, tail)) return false;
            dims[size_t(find(dims, inner))].type = vec ? ForType::Vectorized : ForType::Unrolled;
            text = std::string(vec ? "vectorize(" : "unroll(") + shown(old) + ", " +
                   std::to_string(factor) + ", " + tail_name(tail) + ")";
            apply = [=](Stage &s) {
                if (vec) {
                    s.vectorize(var(old, rv), factor, tail);
                } else {
                    s.unroll(var(old, rv), factor, tail);
                }
            };
            break;
        }
        default: { // parallel(v, task_size): split, then the outer loop
            int factor = uniform(1, 9);
            TailStrategy tail = random_tail();
            // (A second parallel of one loop names its inner loop v_task2, v_task3, ...)
            std::string inner = old + "_task";
            for (int k = 2; find(dims, inner) >= 0; k++)
                inner = old + "_task" + std::to_string(k);
            if (!model_split(p, stage, st, budget, old, old, inner, factor, tail)) return false;
            dims[size_t(find(dims, old))].type = ForType::Parallel;
            text = "parallel(" + shown(old) + ", " + std::to_string(factor) + ", " +
                   tail_name(tail) + ")";
            apply = [=](Stage &s) { s.parallel(var(old, rv), factor, tail); };
            break;
        }
        }
        if (!types_valid(p, dims)) return false;
        fm.stages[size_t(stage)] = st;
        fm.budget = budget;
        std::string prefix =
            label(p) + (stage == 0 ? "." : ".update(" + std::to_string(stage - 1) + ").");
        log.push_back(prefix + text);
        Stage target = stage == 0 ? Stage(infos[p].f.function(), 0) : infos[p].f.update(stage - 1);
        apply(target);
        return true;
    }
};

// ---------------------------------------------------------------------------------------
// Comparing results.

std::string value_at(const Buffer<> &b, int64_t i) {
    const uint8_t *p = static_cast<const uint8_t *>(b.raw_data()) + i * b.type().bytes();
    std::ostringstream s;
    ir::Type t = b.type();
    if (t == ir::Float(32)) {
        float v;
        std::memcpy(&v, p, 4);
        s.precision(9);
        s << v;
    } else if (t == ir::Int(32)) {
        int32_t v;
        std::memcpy(&v, p, 4);
        s << v;
    } else {
        s << "(" << ir::to_string(t) << ")";
    }
    return s.str();
}

// Empty if a and b hold the same bits; otherwise where and how they differ.
std::string difference(const Realization &a, const Realization &b) {
    if (a.size() != b.size()) return "different number of outputs";
    for (size_t k = 0; k < a.size(); k++) {
        const Buffer<> &x = a[k], &y = b[k];
        if (x.type() != y.type() || x.dimensions() != y.dimensions())
            return "different buffer shapes";
        for (int d = 0; d < x.dimensions(); d++)
            if (x.extent(d) != y.extent(d) || x.min(d) != y.min(d))
                return "different buffer shapes";
        int64_t n = x.number_of_elements(), bytes = x.type().bytes();
        const uint8_t *px = static_cast<const uint8_t *>(x.raw_data());
        const uint8_t *py = static_cast<const uint8_t *>(y.raw_data());
        int64_t mismatches = 0, first = -1;
        bool within_tolerance = x.type() == ir::Float(32);
        for (int64_t i = 0; i < n; i++) {
            if (std::memcmp(px + i * bytes, py + i * bytes, size_t(bytes)) == 0) continue;
            if (first < 0) first = i;
            mismatches++;
            if (within_tolerance) {
                float u, v;
                std::memcpy(&u, px + i * bytes, 4);
                std::memcpy(&v, py + i * bytes, 4);
                within_tolerance = aicf_test::close(v, u, 1e-5, 1e-6);
            }
        }
        if (first < 0) continue;
        // Dense buffers: the coordinates of element `first`.
        std::string at;
        int64_t rest = first;
        for (int d = 0; d < x.dimensions(); d++) {
            at += (d ? ", " : "") + std::to_string(rest % x.extent(d) + x.min(d));
            rest /= x.extent(d);
        }
        std::ostringstream s;
        s << "output " << k << ": " << mismatches << " of " << n << " values differ; the first at ("
          << at << "): expected " << value_at(x, first) << ", got " << value_at(y, first);
        // No directive drawn here may change a float either; say whether it was rounding.
        if (within_tolerance) s << " (all within a relative 1e-5: reassociated?)";
        return s.str();
    }
    return "";
}

bool verbose_reference() {
    return env_int("AICF_SCHEDULE_VERBOSE", 0) != 0;
}

// Checks the default schedule against the reference interpreter, then draws `count` schedules
// for the pipeline and checks each against the default schedule.
void check_random_schedules(const char *pipeline, const std::function<Instance()> &build,
                            int count) {
    const uint64_t seed = schedule_seed();
    count = env_int("AICF_SCHEDULE_COUNT", count);
    const int only = env_int("AICF_SCHEDULE_CASE", -1);
    // A case past the default count (found by a sweep with a larger one) still runs.
    count = std::max(count, only + 1);
    auto start = std::chrono::steady_clock::now();

    Instance ref_instance = build();
    Realization expected = ref_instance.output.realize(ref_instance.sizes);
    // The default schedule itself, against the algorithm evaluated point by point by the
    // reference interpreter (bit for bit but for exp and rsqrt, which the C library computes).
    {
        auto reference_start = std::chrono::steady_clock::now();
        aicf_test::Interpreter reference;
        std::string problem = aicf_test::compare_with_reference(
            expected.buffers(), reference.realize(ref_instance.output, ref_instance.sizes), 2e-6,
            1e-7);
        ASSERT_TRUE(problem.empty())
            << pipeline
            << ": the default schedule differs from the reference interpreter: " << problem;
        if (verbose_reference())
            std::printf(
                "  %s: reference checked in %.2f s\n", pipeline,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - reference_start)
                    .count());
    }

    const bool verbose = env_int("AICF_SCHEDULE_VERBOSE", 0) != 0;
    int tried = 0, failures = 0;
    double slowest = 0;
    std::string slowest_text;
    for (int i = 0; i < count && failures < 5; i++) {
        if (only >= 0 && i != only) continue;
        auto case_start = std::chrono::steady_clock::now();
        Instance inst = build();
        std::vector<FuncInfo> infos = discover(inst.output);
        ScheduleGenerator gen(mix(mix(seed, hash_name(pipeline)), uint64_t(i)), infos, inst.sizes);
        std::string error;
        bool applied = gen.run(error);
        tried++;
        std::string problem;
        if (!applied) {
            problem = error;
        } else {
            try {
                Realization got = inst.output.realize(inst.sizes);
                problem = difference(expected, got);
            } catch (const CompileError &e) {
                problem = std::string("CompileError (a valid schedule was refused): ") + e.what();
            } catch (const RuntimeError &e) {
                problem = std::string("RuntimeError: ") + e.what();
            } catch (const InternalError &e) {
                problem = std::string("InternalError: ") + e.what();
            } catch (const std::exception &e) {
                problem = std::string("exception: ") + e.what();
            }
        }
        double case_secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
        if (verbose)
            std::printf("  %s %d (%.2f s): %s\n", pipeline, i, case_secs, gen.text().c_str());
        if (case_secs > slowest) {
            slowest = case_secs;
            slowest_text = std::to_string(i) + ": " + gen.text();
        }
        if (problem.empty()) continue;
        failures++;
        std::string nest;
        try {
            nest = inst.output.loop_nest();
        } catch (const std::exception &e) {
            nest = std::string("(loop_nest() failed: ") + e.what() + ")";
        }
        ADD_FAILURE() << pipeline << " schedule " << i << ":\n  " << gen.text() << "\n"
                      << problem << "\nreproduce with AICF_SCHEDULE_SEED=" << seed
                      << " AICF_SCHEDULE_CASE=" << i
                      << " ./tests/test_correctness --gtest_filter=ScheduleProperty." << pipeline
                      << "\n"
                      << "loop nest:\n"
                      << nest;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[ schedules ] %s: seed %" PRIu64 ", %d schedules tried, %d failed, %.1f s "
                "(slowest %.2f s, schedule %s)\n",
                pipeline, seed, tried, failures, secs, slowest, slowest_text.c_str());
}

} // namespace

TEST(ScheduleProperty, Pointwise) {
    check_random_schedules("Pointwise", pointwise, 100);
}
TEST(ScheduleProperty, Stencil) {
    check_random_schedules("Stencil", stencil, 100);
}
TEST(ScheduleProperty, MatMul) {
    check_random_schedules("MatMul", matmul, 100);
}
TEST(ScheduleProperty, MatMulEpilogue) {
    check_random_schedules("MatMulEpilogue", matmul_epilogue, 100);
}
TEST(ScheduleProperty, LayerNorm) {
    check_random_schedules("LayerNorm", layernorm, 100);
}
TEST(ScheduleProperty, Softmax) {
    check_random_schedules("Softmax", softmax, 100);
}
TEST(ScheduleProperty, Histogram) {
    check_random_schedules("Histogram", histogram, 100);
}
TEST(ScheduleProperty, TupleArgmax) {
    check_random_schedules("TupleArgmax", tuple_argmax, 100);
}
TEST(ScheduleProperty, TupleOnlineSoftmax) {
    check_random_schedules("TupleOnlineSoftmax", tuple_online_softmax, 100);
}

// ---------------------------------------------------------------------------------------
// Reproducers: the smallest schedules found for the bugs this test found. Each is a valid
// schedule, and each bug is fixed: they stay as regression tests.

namespace {

// Realizes f(x) = 3x + 1 over n points with `schedule` applied and checks every value.
void expect_linear(const std::function<void(Func &, Var &)> &schedule, int n) {
    Var x("x");
    Func f("f");
    f(x) = x * 3 + 1;
    schedule(f, x);
    Buffer<int> out;
    ASSERT_NO_THROW(out = f.realize({n})) << f.loop_nest();
    for (int i = 0; i < n; i++)
        ASSERT_EQ(out(i), 3 * i + 1) << "at " << i;
}

// Realizes the pointwise chain's output c (37 x 29) and checks it against a plain loop.
void expect_pointwise(Func c, const Buffer<int> &in) {
    Buffer<int> out;
    ASSERT_NO_THROW(out = c.realize({37, 29})) << c.loop_nest();
    for (int j = 0; j < 29; j++)
        for (int i = 0; i < 37; i++) {
            int v = in(i, j), half = v >= 0 ? v / 2 : -((1 - v) / 2); // division rounds down
            int av = v * 3 + 7, bv = av - half + j;
            ASSERT_EQ(out(i, j), bv * av + (i - j)) << i << "," << j;
        }
}

// The histogram pipeline over `in` (37 x 29 pixels, 61 bins) with `schedule` applied to its
// per-pixel Func v and to hist; realizes hist and checks every bin against a plain count.
void expect_histogram(const Buffer<uint8_t> &in,
                      const std::function<void(Func &v, Func &hist, RDom &r, Var &y)> &schedule) {
    const int W = 37, H = 29, Bins = 61;
    Var x("x"), y("y");
    RDom r(0, W, 0, H, "r");
    Func v("v"), hist("hist");
    v(x, y) = cast<int>(in(x, y)) * 7 % Bins;
    hist(x) = 0;
    hist(clamp(v(r.x, r.y), 0, Bins - 1)) += 1;
    schedule(v, hist, r, y);
    Buffer<int> result;
    ASSERT_NO_THROW(result = hist.realize({Bins})) << hist.loop_nest();
    std::vector<int> want(Bins, 0);
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            want[int(in(i, j)) * 7 % Bins]++;
    for (int b = 0; b < Bins; b++)
        ASSERT_EQ(result(b), want[b]) << "bin " << b;
}

// Realizes the matmul epilogue's output and checks it against a double-precision loop.
void expect_epilogue(Func out, const Buffer<float> &A, const Buffer<float> &B,
                     const Buffer<float> &bias) {
    const int Rows = Epilogue::Rows, N = Epilogue::N, K = Epilogue::K;
    Buffer<float> result;
    ASSERT_NO_THROW(result = out.realize({N, Rows})) << out.loop_nest();
    for (int y = 0; y < Rows; y++)
        for (int x = 0; x < N; x++) {
            double c = double(bias(x)) * 0.25 - y;
            for (int r = 0; r < K; r++)
                c += double(A(r, y)) * B(x, r);
            ASSERT_NEAR(result(x, y), c * 0.5 + bias(x), 1e-4) << x << "," << y;
        }
}

template <typename T> void expect_same(const Buffer<T> &ref, const Buffer<T> &out) {
    ASSERT_TRUE(out.defined());
    for (int j = 0; j < ref.height(); j++)
        for (int i = 0; i < ref.width(); i++)
            ASSERT_EQ(out(i, j), ref(i, j)) << i << "," << j;
}

} // namespace

// Fixed (bounds of a loop's last iteration are now taken from what its min and extent lets
// stand for). A Func computed inside a loop of its consumer's split, when that split is
// GuardWithIf or splits the outer loop of another split, made the input bounds check ask for
// much more input than it reads: for an output of 29 (17) points, "Buffer in is too small:
// dimension 0 must cover [0, 57] ([0, 26]), but it covers [0, 28] ([0, 16])".
TEST(SchedulePropertyRepro, ComputeAtInsideASplitOverestimatesTheInput) {
    auto run = [](int n, const std::function<void(Func &, Func &, Var &)> &schedule) {
        Buffer<int> in(std::vector<int>{n}, "in");
        fill_random(in, -100, 100, 121);
        Var x("x");
        Func a("a"), c("c");
        a(x) = in(x)*2;
        c(x) = a(x) + 1;
        schedule(a, c, x);
        Buffer<int> out;
        EXPECT_NO_THROW(out = c.realize({n}));
        if (!out.defined()) return;
        for (int i = 0; i < n; i++)
            EXPECT_EQ(out(i), in(i)*2 + 1) << "at " << i;
    };
    Var xo("xo"), xi("xi"), xoo("xoo"), xoi("xoi");
    run(29, [&](Func &a, Func &c, Var &x) {
        c.split(x, xo, xi, 3, TailStrategy::GuardWithIf);
        a.compute_at(c, xi);
    });
    run(29, [&](Func &a, Func &c, Var &x) {
        c.split(x, xo, xi, 3, TailStrategy::GuardWithIf);
        a.compute_at(c, xo);
    });
    run(17, [&](Func &a, Func &c, Var &x) {
        c.split(x, xo, xi, 2).split(xo, xoo, xoi, 4); // ShiftInwards, the default
        a.compute_at(c, xoo);
    });
}

// Fixed (terms of a sum that cancel inside a min or max now move into it, so interval
// analysis sees the loop variable once). A producer split by RoundUp and computed at the
// outer loop of a GuardWithIf split of its consumer: its extent per iteration,
// `min(y*6 + 5, last) - y*6 + 1`, was bounded by the whole output's height, and a run of
// 29 rows asked for 60 rows of input: "Buffer in is too small: dimension 1 must cover
// [0, 59], but it covers [-16, 44]".
TEST(SchedulePropertyRepro, ExtentOfAGuardedTileIsBoundedByTheTile) {
    Buffer<int> in = margin_input<int>("in", {37, 29}, {2 * kB, 2 * kB}, -100, 100, 122);
    Var x("x"), y("y"), yi("yi"), yo("yo");
    Func a("a"), c("c");
    a(x, y) = in(x, y) * 3 + 7;
    c(x, y) = a(x, y) + (x - y);
    c.split(y, y, yi, 6, TailStrategy::GuardWithIf).unroll(yi);
    a.store_root().compute_at(c, y).split(y, yo, y, 9, TailStrategy::RoundUp).parallel(yo);
    Buffer<int> out;
    ASSERT_NO_THROW(out = c.realize({37, 29}));
    for (int j = 0; j < 29; j++)
        for (int i = 0; i < 37; i++)
            ASSERT_EQ(out(i, j), in(i, j) * 3 + 7 + (i - j)) << i << "," << j;
}

// Fixed (a guard clamps a variable that is one point at both ends). A Func computed at the
// innermost loop of a consumer whose outer loop is split again with GuardWithIf: the guard
// narrowed only the top of the tile index, so the producer's region per iteration, one
// point, spanned from the unclamped tile to the clamped one, and a run of 37 columns asked
// for 66: "Buffer in is too small: dimension 0 must cover [0, 65], but it covers [-16, 52]".
TEST(SchedulePropertyRepro, GuardedTileIndexKeepsARegionOnePoint) {
    Buffer<int> in = margin_input<int>("in", {37, 29}, {2 * kB, 2 * kB}, -100, 100, 123);
    Var x("x"), y("y"), xo("xo"), xi("xi"), xoo("xoo"), xoi("xoi");
    Func b("b"), c("c");
    b(x, y) = in(x, y) * 3 + 7;
    c(x, y) = b(x, y) + (x - y);
    c.split(x, xo, xi, 8, TailStrategy::ShiftInwards)
        .split(xo, xoo, xoi, 3, TailStrategy::GuardWithIf);
    b.compute_at(c, xi).parallel(x, 3, TailStrategy::RoundUp);
    Buffer<int> out;
    ASSERT_NO_THROW(out = c.realize({37, 29}));
    for (int j = 0; j < 29; j++)
        for (int i = 0; i < 37; i++)
            ASSERT_EQ(out(i, j), in(i, j) * 3 + 7 + (i - j)) << i << "," << j;
}

// Fixed (a let that a guard narrows is bounded with the other lets it uses expanded). A
// producer computed at the outer loop of a guarded split of its consumer, its two loops fused
// and vectorized with a guarded tail: inside the tail's guard, the row index was bounded from
// the region's min and extent taken separately, and a run of 17 rows asked for 32: "Buffer in
// is too small: dimension 1 must cover [0, 31], but it covers [0, 16]".
TEST(SchedulePropertyRepro, GuardedFusedLoopKeepsTheRegionsMinAndExtentTogether) {
    Buffer<int> in = margin_input<int>("in", {29, 17}, {0, 0}, -100, 100, 124);
    Var x("x"), y("y"), yo("yo"), yi("yi"), t("t");
    Func a("a"), c("c");
    a(x, y) = in(x, y) * 3 + 7;
    c(x, y) = a(x, y) + (x - y);
    c.split(y, yo, yi, 16, TailStrategy::GuardWithIf);
    a.compute_at(c, yo).fuse(x, y, t).vectorize(t, 5, TailStrategy::GuardWithIf);
    Buffer<int> out;
    ASSERT_NO_THROW(out = c.realize({29, 17}));
    for (int j = 0; j < 17; j++)
        for (int i = 0; i < 29; i++)
            ASSERT_EQ(out(i, j), in(i, j) * 3 + 7 + (i - j)) << i << "," << j;
}

// Fixed (a guard that holds for no value of a range narrows it to the guard's bound instead
// of leaving it empty). A reduction computed at the root, read by a Func computed at the
// outer loop of a doubly split consumer whose splits are GuardWithIf: in the tail iterations
// past the last row, the Func's region had a negative extent, and its tiles (RoundUp, then
// ShiftInwards) stretched the root reduction's bounds over all iterations; a run of 17 rows
// asked for 79 rows of input: "Buffer in is too small: dimension 1 must cover [-30, 48], but
// it covers [-16, 32]".
TEST(SchedulePropertyRepro, EmptyTailIterationsDoNotStretchARootRegion) {
    const int D = 41, R = 17;
    Buffer<int> in = margin_input<int>("in", {D, R}, {0, 2 * kB}, -100, 100, 125);
    Var c("c"), r("r"), ri0("ri0"), t1("t1"), ri2("ri2"), ro0("ro0"), roi1("roi1");
    RDom k(0, D, "k");
    Func total("total"), best("best"), out("out");
    total(r) = 0;
    total(r) += in(k, r);
    best(r) = total(r) * 2;
    out(c, r) = in(c, r) - best(r);
    out.split(r, r, ri0, 8, TailStrategy::GuardWithIf)
        .fuse(c, ri0, t1)
        .split(r, r, ri2, 6, TailStrategy::GuardWithIf);
    best.store_at(out, r)
        .compute_at(out, ri2)
        .split(r, ro0, r, 3, TailStrategy::RoundUp)
        .split(ro0, ro0, roi1, 3);
    total.compute_root();
    Buffer<int> result;
    ASSERT_NO_THROW(result = out.realize({D, R}));
    for (int j = 0; j < R; j++) {
        int sum = 0;
        for (int i = 0; i < D; i++)
            sum += in(i, j);
        for (int i = 0; i < D; i++)
            ASSERT_EQ(result(i, j), in(i, j) - 2 * sum) << i << "," << j;
    }
}

// Fixed (the same way). A histogram's update split over rows with GuardWithIf and its outer
// loop unrolled by more than its extent, with the per-pixel Func computed in each unrolled
// iteration and its rows unrolled by 2 (RoundUp): the unrolled iterations past the last row
// gave that Func a negative extent, which the rounding turned into rows far past the input:
// "Buffer in is too small: dimension 1 must cover [0, 49], but it covers [-8, 36]".
TEST(SchedulePropertyRepro, GuardedOffUnrolledIterationsReadNoFurther) {
    Buffer<uint8_t> in = margin_input<uint8_t>("in", {37, 29}, {kB, kB}, 1, 250, 126);
    expect_histogram(in, [](Func &v, Func &hist, RDom &r, Var &y) {
        RVar ro("ro"), ri("ri");
        hist.update(0).split(r.y, ro, ri, 7, TailStrategy::GuardWithIf).unroll(ro, 7);
        v.compute_at(hist, RVar("ro_ui")).unroll(y, 2, TailStrategy::RoundUp);
    });
}

// Kept working alongside that fix (the simplifier rewrites min(x + k, y) - min(x, y) as y - x
// clamped to [0, k]). A Func computed in each lane of a vectorized loop with a guarded tail,
// inside guarded tiles of a guarded parallel split: once its region's min is clamped to the
// guard, the extent, a difference of two mins of the same tile start, was bounded by the
// whole height twice, and the input was asked for 57 rows of 29.
TEST(SchedulePropertyRepro, ClampedRegionKeepsItsExtentBounded) {
    Buffer<int> in = margin_input<int>("in", {37, 29}, {2 * kB, 2 * kB}, -100, 100, 127);
    PointwiseChain p(in);
    Var &x = p.x, &y = p.y;
    Var yr("yr"), xo("xo"), xi("xi"), yo("yr_tasko"), yi("yr_taski");
    Func &a = p.a, &b = p.b, &c = p.c;
    c.rename(y, yr).parallel(yr, 9, TailStrategy::GuardWithIf);
    c.tile(x, Var("yr_task"), xo, yo, xi, yi, 2, 9, TailStrategy::GuardWithIf)
        .vectorize(yo, 7, TailStrategy::GuardWithIf);
    b.compute_at(c, yi);
    a.compute_at(c, Var("yr_tasko_vi"));
    expect_pointwise(c, in);
}

// Kept working alongside that fix (a range is narrowed to the guard's bound only where some
// conjunct of the guard can skip whole iterations of the loops around it). Funcs computed at
// the outer loop of a split of a guarded parallel loop's fused tasks: the guard there only
// trims the last tile, and narrowing its range anyway loosened the bounds of what the tiles
// read, asking for 67 columns of 37.
TEST(SchedulePropertyRepro, GuardThatSkipsNoIterationKeepsItsRange) {
    Buffer<int> in = margin_input<int>("in", {37, 29}, {2 * kB, 2 * kB}, -100, 100, 128);
    PointwiseChain p(in);
    Var &x = p.x, &y = p.y;
    Var t0("t0"), to("to"), ti("ti");
    Func &a = p.a, &b = p.b, &c = p.c;
    c.parallel(x, 3, TailStrategy::GuardWithIf)
        .fuse(Var("x_task"), x, t0)
        .split(t0, to, ti, 9, TailStrategy::ShiftInwards);
    b.compute_at(c, to);
    a.compute_at(c, y);
    expect_pointwise(c, in);
}

namespace {

// A 3x3 box blur as two passes over an input with a border of `margin` pixels (the one-pixel
// border it needs, or more), scheduled by `schedule`; checked against a sum over the input.
void expect_blur(int w, int h, const std::function<void(Func &, Func &, Var &, Var &)> &schedule,
                 std::vector<int> margin = {1, 1}) {
    Buffer<int> in = margin_input<int>("in", {w, h}, margin, -100, 100, 125);
    Var x("x"), y("y");
    Func bx("bx"), by("by");
    bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
    by(x, y) = bx(x, y - 1) + bx(x, y) + bx(x, y + 1);
    schedule(bx, by, x, y);
    Buffer<int> out;
    ASSERT_NO_THROW(out = by.realize({w, h})) << w << " x " << h << "\n" << by.loop_nest();
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            int ref = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    ref += in(i + dx, j + dy);
            ASSERT_EQ(out(i, j), ref) << i << "," << j;
        }
}

} // namespace

// Fixed (terms that cancel inside a nested min move down to it; where the bound over the
// whole pipeline does not fit, each tile's reads are checked instead). The everyday tiled
// stencil: tiles with a guarded tail, the first pass computed per tile and vectorized (its
// last vector shifted inwards). The region of the first pass in the last tile, from the
// tile's start and its length bounded separately, asked for 29 columns past the end of a
// 100-column image: "Buffer in is too small: dimension 0 must cover [-5, 128], but it covers
// [-1, 100]".
TEST(SchedulePropertyRepro, TiledStencilWithAGuardedTail) {
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), t("t");
    for (auto [w, h] : {std::pair{100, 77}, std::pair{37, 19}}) {
        expect_blur(w, h, [&](Func &bx, Func &by, Var &x, Var &y) {
            by.tile(x, y, xo, yo, xi, yi, 32, 16, TailStrategy::GuardWithIf).vectorize(xi, 8);
            bx.compute_at(by, xo).vectorize(x, 8);
        });
        expect_blur(w, h, [&](Func &bx, Func &by, Var &x, Var &y) {
            by.tile(x, y, xo, yo, xi, yi, 32, 16, TailStrategy::GuardWithIf)
                .fuse(xo, yo, t)
                .parallel(t);
            bx.compute_at(by, t).vectorize(x, 8);
        });
        expect_blur(w, h, [&](Func &bx, Func &by, Var &x, Var &y) {
            by.tile(x, y, xo, yo, xi, yi, 32, 16, TailStrategy::GuardWithIf);
            bx.compute_at(by, yi).vectorize(x, 8);
        });
        // Stored for the whole image, computed per band of rows in pairs of rows (RoundUp):
        // the last band may compute one row more, which a two-row border covers.
        expect_blur(w, h,
                    [&](Func &bx, Func &by, Var &x, Var &y) {
                        by.split(y, yo, yi, 9, TailStrategy::GuardWithIf);
                        bx.store_root().compute_at(by, yo).split(y, yo, yi, 2,
                                                                 TailStrategy::RoundUp);
                    },
                    {1, 2});
    }
}

// A schedule that does read past the input is refused with the region one tile reads, not the
// bound over all tiles: RoundUp computes the last tile's first pass over a whole vector.
TEST(SchedulePropertyRepro, ReadPastTheInputNamesTheTilesRegion) {
    Buffer<int> in = margin_input<int>("in", {100, 20}, {1, 1}, -100, 100, 126);
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func bx("bx"), by("by");
    bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
    by(x, y) = bx(x, y - 1) + bx(x, y) + bx(x, y + 1);
    by.tile(x, y, xo, yo, xi, yi, 32, 16, TailStrategy::GuardWithIf);
    bx.compute_at(by, xo).vectorize(x, 8, TailStrategy::RoundUp);
    try {
        by.realize({100, 20});
        FAIL() << "the last tile reads in up to column 104";
    } catch (const RuntimeError &e) {
        EXPECT_NE(std::string(e.what()).find("Buffer in is too small: dimension 0 must cover [95, "
                                             "104] (what one iteration of loop xo of by reads), "
                                             "but it covers [-1, 100]"),
                  std::string::npos)
            << e.what();
    }
}

// Runs a row-wise softmax over the D x R input and checks it against a double-precision loop.
void expect_softmax(Func &sm, const Buffer<float> &in, int D, int R) {
    Buffer<float> out;
    ASSERT_NO_THROW(out = sm.realize({D, R}));
    for (int j = 0; j < R; j++) {
        double m = -1e300, s = 0;
        for (int i = 0; i < D; i++)
            m = std::max(m, double(in(i, j)));
        for (int i = 0; i < D; i++)
            s += std::exp(double(in(i, j)) - m);
        for (int i = 0; i < D; i++) {
            double ref = std::exp(double(in(i, j)) - m) / s;
            ASSERT_NEAR(out(i, j), ref, 1e-6) << i << "," << j;
        }
    }
}

// Fixed (a quotient of a bounded numerator is bounded whatever the divisor). A Func whose two
// loops are fused, computed per column of a row-wise softmax whose reductions need other
// columns: the row index, the fused index divided by a region's width that interval analysis
// could not prove positive, was unbounded: "AICF cannot bound the region of input in read in
// dimension 1".
TEST(SchedulePropertyRepro, FusedLoopOverARegionOfSymbolicWidth) {
    const int D = 47, R = 13;
    Buffer<float> in = margin_input<float>("in", {D, R}, {0, 0}, -8.0, 8.0, 127);
    Var c("c"), r("r"), cr("cr"), t("t");
    RDom k(0, D, "k");
    Func rmax("rmax"), e("e"), dsum("dsum"), sm("sm");
    rmax(r) = -std::numeric_limits<float>::infinity();
    rmax(r) = max(rmax(r), in(k, r));
    e(c, r) = exp(in(c, r) - rmax(r));
    dsum(r) = 0.0f;
    dsum(r) += e(k, r);
    sm(c, r) = e(c, r) / dsum(r);
    sm.reorder(r, c);
    e.compute_at(sm, c).rename(c, cr).fuse(cr, r, t);
    rmax.compute_at(sm, c);
    dsum.compute_at(sm, c);
    expect_softmax(sm, in, D, R);
}

// Fixed (stack arrays carry no type-based alias tags). An intermediate computed per element of
// a fused, parallel loop, whose pure definition copies a Func computed at its own loop: LLVM
// turned the copy into a memcpy and then merged the two stack arrays, after which the
// different alias tags of their names let it delete the stores of the copied Func as never
// read. Every output value was wrong, with one thread or two.
TEST(SchedulePropertyRepro, StackCopyOfAStackFuncKeepsItsStores) {
    Buffer<float> A = Epilogue::A_input(128), B = Epilogue::B_input(129),
                  bias = Epilogue::bias_input(130);
    Epilogue e(A, B, bias);
    Var i = e.i, j = e.j, t0("t0"), jt("j_task"); // parallel(j, 9) names its inner loop j_task
    Func out = e.out, C = e.C, init = e.init;
    out.parallel(j, 9, TailStrategy::ShiftInwards).reorder(j, jt, i).fuse(j, jt, t0);
    C.compute_at(out, t0).parallel(i, 6);
    init.compute_at(LoopLevel("C", "i", 0));
    expect_epilogue(out, A, B, bias);
}

// Fixed (a let too large to expand whole for bounds has the operands of its min or max
// expanded one by one). A matmul's accumulator computed per task of its consumer's fused
// parallel loop, with the rows of its update split into guarded tasks and fused with the
// columns: the accumulator's last column, its start plus its extent, was bounded with the two
// taken apart, and the root Func that it copies (and the bias that Func reads) was computed
// over 81 columns where 29 are read: "Buffer bias is too small: dimension 0 must cover
// [-25, 55], but it covers [-16, 44]".
TEST(SchedulePropertyRepro, AccumulatorsLastColumnIsBoundedAsAWhole) {
    Buffer<float> A = Epilogue::A_input(131), B = Epilogue::B_input(132),
                  bias = Epilogue::bias_input(133);
    Epilogue e(A, B, bias);
    Var i = e.i, j = e.j, t0("t0"), t1("t1"), jr("jr"), it("i_task");
    Func out = e.out, C = e.C, init = e.init;
    out.parallel(j, 3, TailStrategy::GuardWithIf).fuse(j, i, t0).parallel(t0, 7);
    C.compute_at(out, Var("t0_task")).rename(j, jr).parallel(jr).fuse(jr, i, t1);
    C.update(0).parallel(i, 7, TailStrategy::GuardWithIf).fuse(j, it, it);
    init.compute_root();
    expect_epilogue(out, A, B, bias);
}

// Fixed in c689a9c. A GuardWithIf split of a loop other than the Func's own variable (a
// renamed loop, or the inner loop of a ShiftInwards split) made bounds inference ignore the
// guard, and the output bounds check failed: "Buffer f is too small: dimension 0 must cover
// [0, 8], but it covers [0, 7]".
TEST(SchedulePropertyRepro, GuardOnDerivedLoopIsNotUsedByBounds) {
    expect_linear(
        [](Func &f, Var &x) {
            f.rename(x, Var("xr"))
                .split(Var("xr"), Var("xo"), Var("xi"), 3, TailStrategy::GuardWithIf);
        },
        8);
    expect_linear(
        [](Func &f, Var &x) {
            Var xo("xo"), xi("xi"), xio("xio"), xii("xii");
            f.split(x, xo, xi, 4, TailStrategy::ShiftInwards)
                .split(xi, xio, xii, 3, TailStrategy::GuardWithIf);
        },
        8);
}

// Fixed in c689a9c (the loop now stays serial). A Func computed where its region is one point,
// with its two loops fused and vectorized with a guarded tail, was refused: "Cannot vectorize
// the loop a.s0.t_vi: every lane would store to the same element of a (0)".
TEST(SchedulePropertyRepro, VectorizedFusedLoopOfAOnePointFuncIsRefused) {
    auto run = [](bool scheduled) {
        Var x("x"), y("y"), t("t");
        Func a("a"), c("c");
        a(x, y) = x * 3 + y;
        c(x, y) = a(x, y) + 1;
        if (scheduled) a.compute_at(c, x).fuse(x, y, t).vectorize(t, 2, TailStrategy::GuardWithIf);
        return Buffer<int>(c.realize({7, 5}));
    };
    Buffer<int> ref = run(false), out;
    EXPECT_NO_THROW(out = run(true));
    expect_same(ref, out);
}

// Fixed in c689a9c. An intermediate computed at the root, whose region comes from two reads
// (e(x, y) and e(0, y)) and whose loops are fused: the input it reads, directly or through a
// Func computed at the fused loop, could not be bounded: "AICF cannot bound the region of
// input in read in dimension 1".
TEST(SchedulePropertyRepro, FusedLoopOfAnIntermediateIsUnbounded) {
    static Buffer<int> in = [] {
        Buffer<int> b(std::vector<int>{7, 5}, "in");
        fill_random(b, -100, 100, 120);
        return b;
    }();
    auto direct = [](bool scheduled) {
        Var x("x"), y("y"), t("t");
        Func e("e"), out("out");
        e(x, y) = in(x, y) * 2;
        out(x, y) = e(x, y) + e(0, y);
        e.compute_root();
        if (scheduled) e.fuse(x, y, t);
        return Buffer<int>(out.realize({7, 5}));
    };
    auto through_compute_at = [](bool scheduled) {
        Var x("x"), y("y"), t("t");
        Func a("a"), e("e"), out("out");
        a(y) = in(0, y);
        e(x, y) = a(y) + x;
        out(x, y) = e(x, y) + e(0, y);
        e.compute_root();
        if (scheduled) {
            e.fuse(x, y, t);
            a.compute_at(e, t);
        }
        return Buffer<int>(out.realize({7, 5}));
    };
    for (const auto &run : {std::function<Buffer<int>(bool)>(direct),
                            std::function<Buffer<int>(bool)>(through_compute_at)}) {
        Buffer<int> ref = run(false), out;
        EXPECT_NO_THROW(out = run(true));
        expect_same(ref, out);
    }
}

// Fixed in c689a9c (refused, with the reason). RoundUp on the inner loop of a split in an
// update stage ran that loop into the next tile and applied the update twice to some points:
// f(x) = x, f(x) += r over 3 points gave 10, 11 instead of 7, 8 at x = 4, 5.
TEST(SchedulePropertyRepro, RoundUpOnInnerLoopOfUpdateAppliesUpdatesTwice) {
    Var x("x"), xo("xo"), xi("xi"), xio("xio"), xii("xii");
    RDom r(0, 3, "r");
    Func f("f"), g("g");
    f(x) = x;
    f(x) += r;
    g(x) = f(x);
    f.compute_root();
    Buffer<int> out;
    try {
        f.update().split(x, xo, xi, 4).split(xi, xio, xii, 3, TailStrategy::RoundUp);
        out = g.realize({10});
    } catch (const CompileError &) {
        return; // refusing the schedule is a fix too
    }
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(out(i), i + 3) << "at " << i;
}

// Fixed before c689a9c, when the loop variables a stage's splits bind got versions: fuse and
// split gave every binding of a reused name the same variable.
TEST(SchedulePropertyRepro, FuseIntoTheOuterLoopsName) {
    // The inner variable was computed from the fused loop after the outer one rebound it.
    auto run = [](bool scheduled) {
        Var x("x"), y("y");
        Func f("f");
        f(x, y) = x + y * 100;
        if (scheduled) f.fuse(x, y, y);
        return Buffer<int>(f.realize({4, 3}));
    };
    expect_same(run(false), run(true));
}

TEST(SchedulePropertyRepro, ComputeAtAFusedLoopNamedLikeItsInnerLoop) {
    // Bounds inference computed the producer's region for the first row only.
    auto run = [](bool scheduled) {
        Var x("x"), y("y"), yo("yo"), yi("yi");
        Func a("a"), c("c");
        a(x, y) = x * 3 + y * 100;
        c(x, y) = a(x, y) + 1;
        if (scheduled) {
            c.split(y, yo, yi, 1, TailStrategy::RoundUp).fuse(yi, yo, yi);
            a.compute_at(c, yi);
        }
        return Buffer<int>(c.realize({4, 3}));
    };
    expect_same(run(false), run(true));
}

TEST(SchedulePropertyRepro, GuardedSplitOfAReusedLoopName) {
    // split(x, x, xi) then a GuardWithIf split of the new x guarded the original x.
    auto run = [](bool scheduled) {
        Var x("x"), y("y"), xi0("xi0"), xi2("xi2");
        Func f("f");
        f(x, y) = x * 7 - y;
        if (scheduled) {
            f.split(x, x, xi0, 9, TailStrategy::ShiftInwards)
                .split(x, x, xi2, 6, TailStrategy::GuardWithIf);
        }
        return Buffer<int>(f.realize({53, 3}));
    };
    expect_same(run(false), run(true));
}

// Seed 18, schedule 199 of the softmax: fused, split and unrolled stages whose region of mx
// needs bounds of a few thousand nodes. A cap of 2000 nodes on symbolic bounds (against
// expressions whose bounds double at every step) refused it as unbounded.
TEST(SchedulePropertyRepro, BoundsOfThousandsOfNodesAreKept) {
    aicf_test::ScopedEnv seed("AICF_SCHEDULE_SEED", "18"), which("AICF_SCHEDULE_CASE", "199"),
        count("AICF_SCHEDULE_COUNT", "200");
    check_random_schedules("Softmax", softmax, 200);
}

// Seed 56, schedule 116 of the softmax: e's stage lets, computed at the root, counted more than
// 16 variables expanded, and bounds inference named them. Named, e.s0.c.extent no longer
// cancelled in the index of a tile fused from e's columns and rows, and the input checks asked
// for 383 rows: "Buffer in is too small: dimension 1 must cover [-375, 7]". Lets are named only
// past 64 variables (the chains they are for grow past that within a few stages).
TEST(SchedulePropertyRepro, RegionLetsOfModerateSizeAreExpanded) {
    aicf_test::ScopedEnv seed("AICF_SCHEDULE_SEED", "56"), which("AICF_SCHEDULE_CASE", "116");
    check_random_schedules("Softmax", softmax, 200);
}

// Seed 74, schedule 140 of the layernorm: mean computed per pair of rows of norm, over a
// region of 7 rows (var, inside, shifts its tiles of 6 inwards), its rows split by 8 with
// ShiftInwards and the outer loop split by 8 again with GuardWithIf and fused. The fused
// loop's parts were clamped as min(max(part, first), last), with last from the region's
// extent, a difference of its ends that interval analysis bounds at its uncorrelated worst
// (-12 here): the outer part's lower bound fell to -64 and the input checks asked for 69 rows
// above the first: "Buffer in is too small: dimension 1 must cover [-69, 20], but it covers
// [-32, 50]" (it reads from -6). The clamp to the first value is now outermost.
TEST(SchedulePropertyRepro, FusedPartsStartAtTheirFirstValue) {
    aicf_test::ScopedEnv seed("AICF_SCHEDULE_SEED", "74"), which("AICF_SCHEDULE_CASE", "140");
    check_random_schedules("LayerNorm", layernorm, 200);
}

// Seed 44, schedule 139 of the matmul epilogue: C computed per step of out's unrolled outer
// loop, its update split by 2 (RoundUp) and guarded by an unroll's test. Inside the guard,
// the index's let was bounded again with its start and its rounded length apart: "Buffer B
// is too small: dimension 0 must cover [0, 53], but it covers [-8, 36]" (it reads up to 29).
// Lets a guard narrows are now bounded over the loops inside, as every other let is.
TEST(SchedulePropertyRepro, NarrowedLetsAreBoundedOverTheLoopsInside) {
    aicf_test::ScopedEnv seed("AICF_SCHEDULE_SEED", "44"), which("AICF_SCHEDULE_CASE", "139");
    check_random_schedules("MatMulEpilogue", matmul_epilogue, 200);
}

// Fixed (the last iteration of a loop inside the statement is substituted into an index
// linear in it before the index is bounded over the loops outside). A Func computed per
// unrolled step of its consumer's guarded split, in tiles rounded up to 4 columns: the
// region a tile reads, its start and its rounded-up length bounded apart over the outer
// loop, asked for 64 columns of 37: "Buffer in is too small: dimension 0 must cover [0, 63],
// but it covers [-16, 52]".
TEST(SchedulePropertyRepro, RoundedUpTileEndsWhereItsRegionEnds) {
    Buffer<int> in = margin_input<int>("in", {37, 29}, {2 * kB, 2 * kB}, -100, 100, 129);
    PointwiseChain p(in);
    Var &x = p.x, &y = p.y;
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), bxo("bxo"), bxi("bxi");
    Func &a = p.a, &b = p.b, &c = p.c;
    c.split(x, xo, xi, 8).unroll(xo, 3, TailStrategy::GuardWithIf);
    b.compute_at(c, xo).tile(y, x, yo, bxo, yi, bxi, 9, 4, TailStrategy::RoundUp);
    a.compute_root();
    expect_pointwise(c, in);
}

// Fixed (the simplifier writes min(p, q) + max(q - p, 0) as q). A histogram's update split
// twice over columns with guarded tails and the outer loop unrolled past its extent, with the
// per-pixel Func computed in each unrolled step: that Func's last column, its region's start
// plus its extent, was bounded as the largest start plus the largest extent, asking for 48
// columns of 37: "Buffer in is too small: dimension 0 must cover [0, 47], but it covers
// [-8, 44]".
TEST(SchedulePropertyRepro, GuardedStepsRegionEndsAtItsMax) {
    Buffer<uint8_t> in = margin_input<uint8_t>("in", {37, 29}, {kB, kB}, 1, 250, 130);
    expect_histogram(in, [](Func &v, Func &hist, RDom &r, Var &) {
        RVar ro("ro"), ri("ri"), rii("rii");
        hist.update(0)
            .split(r.x, ro, ri, 9)
            .unroll(ro, 8)
            .split(ri, ri, rii, 4, TailStrategy::GuardWithIf);
        v.compute_at(hist, RVar("ro_ui"));
    });
}

// Fixed (a term of a sum that cancels inside a min of a rounded-down quotient lets the
// simplifier write the quotient as a remainder). A Func computed per step of its consumer's
// guarded row tiles, rounded up to 8 rows: its last row, the tile's start plus its clamped
// extent rounded down to 8, was bounded as the largest start plus the largest extent, asking
// for 53 rows of 29: "Buffer in is too small: dimension 1 must cover [0, 52], but it covers
// [-16, 44]".
TEST(SchedulePropertyRepro, ClampedRoundedUpTileEndsWhereItsRegionEnds) {
    Buffer<int> in = margin_input<int>("in", {37, 29}, {2 * kB, 2 * kB}, -100, 100, 132);
    PointwiseChain p(in);
    Var &x = p.x, &y = p.y;
    Var yv("yv"), yvi("yvi"), yi("yi"), xi("xi"), yo("yo"), byi("byi");
    Func &a = p.a, &b = p.b, &c = p.c;
    c.split(y, y, yv, 6, TailStrategy::GuardWithIf).split(yv, yv, yvi, 5);
    c.tile(y, x, yi, xi, 4, 3, TailStrategy::GuardWithIf);
    b.compute_at(c, yvi).split(y, yo, byi, 8, TailStrategy::RoundUp).reorder(byi, yo);
    a.compute_root();
    expect_pointwise(c, in);
}

// Fixed (an index monotonic in a loop, though not linear in it, has the loop's first or last
// iteration substituted before it is bounded). The row maximum of a softmax computed per row
// of a Func unrolled by 8, in 9-row steps shifted inwards and tiled: the tile index,
// min(extent - 8 * r - 1, 7) / 72, was bounded over the unrolled loop r apart from its
// extent, reaching -1, and asked for 72 rows below the input: "Buffer in is too small:
// dimension 1 must cover [-72, 12], but it covers [-40, 52]".
TEST(SchedulePropertyRepro, ShiftedTileIndexOfAnUnrolledRowStaysInItsTile) {
    const int D = 47, R = 13;
    Buffer<float> in = margin_input<float>("in", {D, R}, {kB, 5 * kB}, -8.0, 8.0, 133);
    Var c("c"), r("r"), ro("ro"), ri("ri"), t("t"), rr("rr"), ruo("ruo"), rti("rti"), rui("rui"),
        roo("roo"), roi("roi");
    RDom k(0, D, "k");
    Func rmax("rmax"), mx("mx"), e("e"), dsum("dsum"), den("den"), sm("sm");
    rmax(r) = -std::numeric_limits<float>::infinity();
    rmax(r) = max(rmax(r), in(k, r));
    mx(r) = rmax(r);
    e(c, r) = exp(in(c, r) - mx(r));
    dsum(r) = 0.0f;
    dsum(r) += e(k, r);
    den(r) = dsum(r);
    sm(c, r) = e(c, r) / den(r);
    sm.split(r, ro, ri, 6, TailStrategy::GuardWithIf).fuse(ri, ro, t);
    den.compute_at(sm, c).rename(r, rr).parallel(rr, 3);
    dsum.compute_at(sm, c);
    e.compute_at(sm, t).unroll(r, 8, TailStrategy::GuardWithIf);
    mx.compute_at(e, r).unroll(r, 9, TailStrategy::ShiftInwards);
    mx.tile(r, Var("r_ui"), ro, ruo, rti, rui, 8, 7, TailStrategy::GuardWithIf)
        .split(ro, roo, roi, 1);
    expect_softmax(sm, in, D, R);
}

// Fixed (a test fails throughout a partitioned loop's tail only where its bound is exact).
// A guarded parallel split of a fused loop: the guard's bound, through (fused % 3) of the
// outer loop, was taken over every value of the outer loop (at most 2), so the tail past it
// ran nothing also where the guard passed, and columns of v were never computed.
TEST(SchedulePropertyRepro, ATailIsDroppedOnlyWhereItsTestFails) {
    Buffer<uint8_t> in = margin_input<uint8_t>("in", {37, 29}, {kB, kB}, 1, 250, 131);
    expect_histogram(in, [](Func &v, Func &, RDom &, Var &y) {
        Var x("x"), xi0("xi0"), xi1("xi1"), t2("t2");
        v.compute_root().split(x, x, xi0, 4).split(x, x, xi1, 2, TailStrategy::ShiftInwards);
        v.parallel(x, 2, TailStrategy::GuardWithIf).fuse(x, y, t2);
    });
}
