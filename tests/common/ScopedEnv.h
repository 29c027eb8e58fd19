#ifndef AICF_TESTS_SCOPED_ENV_H
#define AICF_TESTS_SCOPED_ENV_H

// Sets an environment variable for the scope, or unsets it (a null value); AICF reads
// AICF_DEVICE at each run.

#include <cstdlib>
#include <string>

namespace aicf_test {

class ScopedEnv {
public:
    ScopedEnv(const char *name, const char *value) : name(name) {
        const char *old = std::getenv(name);
        had = old != nullptr;
        if (had) saved = old;
        if (value) {
            setenv(name, value, 1);
        } else {
            unsetenv(name);
        }
    }
    ~ScopedEnv() {
        if (had) {
            setenv(name, saved.c_str(), 1);
        } else {
            unsetenv(name);
        }
    }

private:
    const char *name;
    bool had = false;
    std::string saved;
};

} // namespace aicf_test

#endif
