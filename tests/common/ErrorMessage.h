#ifndef AICF_TESTS_ERROR_MESSAGE_H
#define AICF_TESTS_ERROR_MESSAGE_H

// For error tests: the message of the exception of type E that f raises; and for tests of
// generated text (PTX, reports), how often a fragment occurs in it.

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <typeinfo>

namespace aicf_test {

// Another exception type fails the test (its message is returned marked, so a fragment check
// on it still says what was raised).
template <typename E, typename F> std::string message_of(F &&f) {
    try {
        f();
    } catch (const E &e) {
        return e.what();
    } catch (const std::exception &e) {
        ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": "
                      << e.what();
        return std::string("wrong exception type: ") + e.what();
    }
    return "no exception";
}

inline int occurrences(const std::string &text, const std::string &what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        n++;
    return n;
}

} // namespace aicf_test

#define EXPECT_CONTAINS(text, fragment)                                                            \
    EXPECT_NE(std::string(text).find(fragment), std::string::npos) << "message: " << (text)

#endif
