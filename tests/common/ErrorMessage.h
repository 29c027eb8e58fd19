#ifndef AICF_TESTS_ERROR_MESSAGE_H
#define AICF_TESTS_ERROR_MESSAGE_H

// For error tests: the message of the exception of type E that f raises.

#include <gtest/gtest.h>

#include <exception>
#include <string>

namespace aicf_test {

template <typename E, typename F> std::string message_of(F &&f) {
    try {
        f();
    } catch (const E &e) {
        return e.what();
    } catch (const std::exception &e) {
        return std::string("wrong exception type: ") + e.what();
    }
    return "no exception";
}

} // namespace aicf_test

#define EXPECT_CONTAINS(text, fragment)                                                            \
    EXPECT_NE(std::string(text).find(fragment), std::string::npos) << "message: " << (text)

#endif
