#include "dsl/Names.h"

#include <cctype>
#include <set>
#include <vector>

namespace aicf {

namespace {
// Between a Func's name and its stage number in the names of stages and loops. Func names
// hold no '.' (names users choose are checked for it), so the first occurrence is the one.
constexpr const char *kStageSeparator = ".s";
constexpr const char *kVersionSeparator = ".v";
constexpr const char *kPrefetchLoop = ".prefetch.";

bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
} // namespace

std::string stage_name(const std::string &func, int stage) {
    return func + kStageSeparator + std::to_string(stage);
}

std::string loop_name(const std::string &func, int stage, const std::string &var) {
    return stage_name(func, stage) + "." + var;
}
std::string loop_min_name(const std::string &func, int stage, const std::string &var) {
    return loop_name(func, stage, var) + ".min";
}
std::string loop_max_name(const std::string &func, int stage, const std::string &var) {
    return loop_name(func, stage, var) + ".max";
}
std::string loop_extent_name(const std::string &func, int stage, const std::string &var) {
    return loop_name(func, stage, var) + ".extent";
}
std::string var_version_name(const std::string &var, int version) {
    return var + kVersionSeparator + std::to_string(version);
}
std::string single_thread_var(bool block) {
    return block ? "__block" : "__thread";
}
std::string realized_min_name(const std::string &func, const std::string &arg) {
    return func + "." + arg + ".min_realized";
}
std::string realized_extent_name(const std::string &func, const std::string &arg) {
    return func + "." + arg + ".extent_realized";
}
std::string arg_of_realized_extent(const std::string &func, const std::string &name) {
    const std::string prefix = func + ".", suffix = ".extent_realized";
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix))
        return "";
    return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
}
bool is_extent_name(const std::string &name) {
    const std::string suffix = ".extent";
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}
std::string storage_name(const std::string &func, int value_index, int outputs) {
    return outputs == 1 ? func : func + "." + std::to_string(value_index);
}
StorageNameParts parse_storage_name(const std::string &storage) {
    StorageNameParts parts;
    size_t dot = storage.rfind('.');
    parts.func = storage.substr(0, dot);
    if (dot == std::string::npos || dot + 1 == storage.size()) return parts;
    int index = 0;
    for (size_t i = dot + 1; i < storage.size(); i++) {
        if (!std::isdigit(static_cast<unsigned char>(storage[i]))) {
            parts.func = storage;
            return parts;
        }
        index = index * 10 + (storage[i] - '0');
    }
    parts.value_index = index;
    parts.of_tuple = true;
    return parts;
}

std::string prefetch_loop_name(const std::string &name, int value_index, const std::string &part) {
    return name + kPrefetchLoop + std::to_string(value_index) + "." + part;
}
bool is_prefetch_loop(const std::string &loop, std::string *prefetched) {
    size_t at = loop.find(kPrefetchLoop);
    if (at == std::string::npos) return false;
    if (prefetched) *prefetched = loop.substr(0, at);
    return true;
}
std::string steady_min_name(const std::string &loop) {
    return loop + ".steady_min";
}
std::string steady_end_name(const std::string &loop) {
    return loop + ".steady_end";
}
std::string thread_partial_name(const std::string &loop) {
    return loop + ".partial";
}
std::string warp_partials_name(const std::string &loop) {
    return loop + ".warp_partials";
}
bool is_warp_partials(const std::string &storage, std::string *loop) {
    const std::string suffix = warp_partials_name("");
    const std::string name = parse_storage_name(storage).func;
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    if (loop) *loop = name.substr(0, name.size() - suffix.size());
    return true;
}
std::string loaded_value_name(const std::string &buffer, int n) {
    return buffer + ".loaded." + std::to_string(n);
}
std::string kept_value_name(const std::string &buffer, int n) {
    return buffer + ".kept." + std::to_string(n);
}

LoopNameParts parse_loop_name(const std::string &loop) {
    LoopNameParts parts;
    size_t sep = loop.find(kStageSeparator);
    if (sep == std::string::npos) return parts;
    size_t digits = sep + 2, dot = loop.find('.', digits);
    if (dot == std::string::npos || dot == digits) return parts;
    int stage = 0;
    for (size_t i = digits; i < dot; i++) {
        if (loop[i] < '0' || loop[i] > '9') return parts;
        stage = stage * 10 + (loop[i] - '0');
    }
    parts.func = loop.substr(0, sep);
    parts.stage = stage;
    parts.var = loop.substr(dot + 1);
    return parts;
}

std::string func_of_loop(const std::string &loop) {
    LoopNameParts parts = parse_loop_name(loop);
    return parts.func.empty() ? loop : parts.func;
}

std::string stage_of_loop(const std::string &loop) {
    LoopNameParts parts = parse_loop_name(loop);
    return parts.func.empty() ? loop : stage_name(parts.func, parts.stage);
}

std::string stage_for_users(const std::string &func, int stage) {
    return stage <= 0 ? func : func + ".update(" + std::to_string(stage - 1) + ")";
}

std::string loop_var_for_users(const std::string &loop) {
    LoopNameParts parts = parse_loop_name(loop);
    if (parts.func.empty()) return loop;
    if (parts.var == single_thread_var(true) || parts.var == single_thread_var(false))
        return "gpu_single_thread()";
    size_t version = parts.var.rfind(kVersionSeparator);
    bool versioned = version != std::string::npos && version + 2 < parts.var.size();
    for (size_t i = version + 2; versioned && i < parts.var.size(); i++)
        versioned = std::isdigit(static_cast<unsigned char>(parts.var[i]));
    return versioned ? parts.var.substr(0, version) : parts.var;
}

std::string loop_stage_for_users(const std::string &loop) {
    LoopNameParts parts = parse_loop_name(loop);
    return parts.func.empty() ? loop : stage_for_users(parts.func, parts.stage);
}

std::string loop_for_users(const std::string &loop) {
    LoopNameParts parts = parse_loop_name(loop);
    if (parts.func.empty()) return loop;
    return loop_var_for_users(loop) + " of " + loop_stage_for_users(loop);
}

std::string with_user_loop_names(const std::string &text) {
    // A loop variable in printed IR is a run of name characters and dots that parses as a
    // loop name and ends where the name does (not in ".min", ".extent" or the like).
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        if (!is_name_char(text[i]) ||
            (i > 0 && (is_name_char(text[i - 1]) || text[i - 1] == '.'))) {
            out += text[i++];
            continue;
        }
        size_t end = i;
        while (end < text.size() && (is_name_char(text[end]) || text[end] == '.'))
            end++;
        std::string word = text.substr(i, end - i);
        LoopNameParts parts = parse_loop_name(word);
        bool bound_name = false;
        for (const char *suffix :
             {".min", ".max", ".extent", ".min_realized", ".extent_realized"}) {
            std::string s = suffix;
            bound_name = bound_name || (word.size() > s.size() &&
                                        word.compare(word.size() - s.size(), s.size(), s) == 0);
        }
        out += parts.func.empty() || bound_name ? word : loop_var_for_users(word);
        i = end;
    }
    return out;
}

namespace {
// Whether `word` ends with `suffix` after at least one character.
bool ends_with(const std::string &word, const std::string &suffix) {
    return word.size() > suffix.size() &&
           word.compare(word.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What one bound symbol stands for; empty for any other word.
std::string symbol_meaning(const std::string &word) {
    for (const char *field : {".min.", ".extent.", ".stride."}) {
        size_t at = word.rfind(field);
        if (at == std::string::npos || at == 0) continue;
        std::string dim = word.substr(at + std::string(field).size());
        bool digits = !dim.empty();
        for (char c : dim)
            digits = digits && std::isdigit(static_cast<unsigned char>(c));
        if (!digits || !parse_loop_name(word.substr(0, at)).func.empty()) continue;
        std::string what = std::string(field) == ".min."      ? "the first index"
                           : std::string(field) == ".extent." ? "the extent"
                                                              : "the stride";
        return what + " of buffer " + word.substr(0, at) + " in dimension " + dim;
    }
    for (const char *suffix : {".min_realized", ".extent_realized"}) {
        if (!ends_with(word, suffix)) continue;
        std::string rest = word.substr(0, word.size() - std::string(suffix).size());
        size_t dot = rest.find('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size()) return "";
        std::string what = std::string(suffix) == ".min_realized" ? "the first point" : "the size";
        return what + " of the region of " + rest.substr(0, dot) + " stored there in " +
               rest.substr(dot + 1);
    }
    for (const char *suffix : {".min", ".max", ".extent"}) {
        if (!ends_with(word, suffix)) continue;
        std::string loop = word.substr(0, word.size() - std::string(suffix).size());
        if (parse_loop_name(loop).func.empty()) return "";
        std::string what = std::string(suffix) == ".min"   ? "the first iteration"
                           : std::string(suffix) == ".max" ? "the last iteration"
                                                           : "the number of iterations";
        return what + " of loop " + loop_for_users(loop);
    }
    return "";
}
} // namespace

std::string symbols_for_users(const std::string &text) {
    std::vector<std::string> clauses;
    std::set<std::string> seen;
    size_t i = 0;
    while (i < text.size()) {
        if (!is_name_char(text[i]) ||
            (i > 0 && (is_name_char(text[i - 1]) || text[i - 1] == '.'))) {
            i++;
            continue;
        }
        size_t end = i;
        while (end < text.size() && (is_name_char(text[end]) || text[end] == '.'))
            end++;
        std::string word = text.substr(i, end - i);
        std::string meaning = symbol_meaning(word);
        if (!meaning.empty() && seen.insert(word).second)
            clauses.push_back(word + " is " + meaning);
        i = end;
    }
    std::string out;
    for (size_t c = 0; c < clauses.size(); c++)
        out += (c ? "; " : "") + clauses[c];
    return out;
}

} // namespace aicf
