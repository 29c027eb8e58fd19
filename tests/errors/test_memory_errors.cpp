// Memory exhaustion is a typed error, whether it happens when a pipeline runs or while it
// compiles. Each case runs in a child process under an address-space limit (RLIMIT_AS), so
// the limit ends with it; the child's exit code says what it caught. (Not in the sanitizer
// builds: their shadow memory needs more address space than any such limit leaves.)

#include "Reference.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace aicf;

namespace {

using aicf_test::kSanitized;

// The exit code of `body` run in a child process (100 + the signal if one killed it).
int in_child(const std::function<int()> &body) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) _exit(body());
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

// Limits this process's address space to what it uses now plus `spare` bytes.
bool limit_address_space(int64_t spare) {
    std::ifstream statm("/proc/self/statm");
    int64_t pages = 0;
    if (!(statm >> pages)) return false;
    const rlim_t limit = rlim_t(pages * sysconf(_SC_PAGESIZE) + spare);
    const rlimit r{limit, limit};
    return setrlimit(RLIMIT_AS, &r) == 0;
}

// A row sum over an intermediate of 4096 x 65536 floats (1 GiB) computed at the root.
Func sum_of_big_intermediate() {
    Var x("x"), y("y");
    RDom r(0, 65536, "r");
    Func big("big"), out("out");
    big(x, y) = cast<float>(x + y);
    out(x) = 0.0f;
    out(x) += big(x, r);
    big.compute_root();
    return out;
}

TEST(MemoryErrors, AnAllocationRefusedWhileRunningIsARuntimeErrorNamingIt) {
    if (kSanitized) GTEST_SKIP() << "address-space limits do not mix with sanitizers";
    const int code = in_child([] {
        Pipeline out(sum_of_big_intermediate());
        out.compile_jit();
        if (!limit_address_space(int64_t(256) << 20)) return 10;
        try {
            out.realize({4096});
            return 1;
        } catch (const RuntimeError &e) {
            const std::string msg = e.what();
            return msg.find("Could not allocate") != std::string::npos &&
                           msg.find("big") != std::string::npos
                       ? 0
                       : 2;
        } catch (...) {
            return 3;
        }
    });
    EXPECT_EQ(code, 0) << "1: no error, 2: another message, 3: another exception, 10: no limit";
}

TEST(MemoryErrors, MemoryExhaustedWhileCompilingIsACompileError) {
    if (kSanitized) GTEST_SKIP() << "address-space limits do not mix with sanitizers";
    // With the JIT already running (a pipeline compiled before), what runs out first is
    // mapping the new machine code: the same error.
    {
        Var x("x");
        Func warm("warm");
        warm(x) = x * 3;
        warm.realize({4});
    }
    const int code = in_child([] {
        // A pipeline worth compiling: unrolled and vectorized stages.
        Var x("x"), y("y"), xi("xi");
        Func f("f"), g("g");
        f(x, y) = sqrt(cast<float>(x * y + 1)) * 0.5f;
        g(x, y) = f(x, y) + f(x + 1, y) * f(x, y + 1);
        g.split(x, x, xi, 64).vectorize(xi, 16).unroll(xi);
        f.compute_at(g, y).vectorize(x, 8);
        if (!limit_address_space(0)) return 10;
        try {
            Pipeline(g).compile_jit();
            return 1;
        } catch (const CompileError &e) {
            return std::string(e.what()).find("Out of memory while compiling pipeline g") !=
                           std::string::npos
                       ? 0
                       : 2;
        } catch (...) {
            return 3;
        }
    });
    EXPECT_EQ(code, 0) << "1: no error, 2: another message, 3: another exception, 10: no limit";
}

} // namespace
