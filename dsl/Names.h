#ifndef AICF_NAMES_H
#define AICF_NAMES_H

// The names AICF derives for stages, loops, bounds and storage, and how they read to users.
// Every part of the compiler builds and takes apart such names through these functions, so
// each is spelled in one place (nothing else concatenates or parses ".s0" and friends).
// Users never see the internal form: messages name a stage as it is written in C++
// (`f`, `f.update(0)`) and a loop by its variable and stage (`loop x of f.update(0)`).

#include "dsl/ir/IROperator.h"

#include <string>

namespace aicf {

// ---- Internal names ----

// Stage `stage` of Func `func` (0 the pure definition, i > 0 update i - 1): "f.s1".
std::string stage_name(const std::string &func, int stage);
// The loop over variable `var` of that stage: "f.s1.x".
std::string loop_name(const std::string &func, int stage, const std::string &var);
// The first and last value that loop takes: "f.s0.x.min", "f.s0.x.max".
std::string loop_min_name(const std::string &func, int stage, const std::string &var);
std::string loop_max_name(const std::string &func, int stage, const std::string &var);
// Its number of iterations, max - min + 1: "f.s0.x.extent".
std::string loop_extent_name(const std::string &func, int stage, const std::string &var);
// A loop variable bound before a later split, fuse or rename of the same name took it over:
// "x.v2" (version 2 of x).
std::string var_version_name(const std::string &var, int version);
// The loop of a stage that gpu_single_thread() runs on one block and one thread.
std::string single_thread_var(bool block);
// The region a Func is stored over, per pure argument: "f.x.min_realized", "f.x.extent_realized".
std::string realized_min_name(const std::string &func, const std::string &arg);
std::string realized_extent_name(const std::string &func, const std::string &arg);
// The argument whose realized_extent_name is `name`, of Func `func`; empty for another name.
std::string arg_of_realized_extent(const std::string &func, const std::string &name);
// Whether `name` is a name loop_extent_name (or a let of its form) makes: "....extent".
bool is_extent_name(const std::string &name);
// The flat storage of element `value_index` of a Func with `outputs` elements: "f" or "f.1".
std::string storage_name(const std::string &func, int value_index, int outputs);
// The Func and element a storage name holds: "f.1" is element 1 of f, "f" element 0 of a
// Func of one element (then `of_tuple` is false).
struct StorageNameParts {
    std::string func;
    int value_index = 0;
    bool of_tuple = false;
};
StorageNameParts parse_storage_name(const std::string &storage);
// The loops a prefetch of element `value_index` of `name` runs: over the cache lines of a
// row ("in.prefetch.0.line", part "line") and over the rows (part "1", "2", ...).
std::string prefetch_loop_name(const std::string &name, int value_index, const std::string &part);
// Whether a loop is such a prefetch loop, and if so whose ("in").
bool is_prefetch_loop(const std::string &loop, std::string *prefetched = nullptr);
// The first and last-plus-one iteration of a partitioned loop's steady state.
std::string steady_min_name(const std::string &loop);
std::string steady_end_name(const std::string &loop);
// The storage of a cross-thread reduction over `loop`: each thread's partial result
// ("f.s1.r.partial"), and the partial results of the warps ("f.s1.r.warp_partials").
std::string thread_partial_name(const std::string &loop);
std::string warp_partials_name(const std::string &loop);
// Whether a storage (an element of a Tuple's, too) holds such partial results, and if so the
// reduction loop's name.
bool is_warp_partials(const std::string &storage, std::string *loop = nullptr);
// A value a kernel loads from `buffer` once and uses where the kernel read it again
// ("in.loaded.3"), and the register that holds an element of `buffer` through a loop that
// reads and writes it ("f.kept.0"; keep_values_in_registers).
std::string loaded_value_name(const std::string &buffer, int n);
std::string kept_value_name(const std::string &buffer, int n);
// The descriptor argument of a buffer: "b.buffer" (spelled in the IR layer, whose
// simplifier needs it too).
using ir::buffer_descriptor_name;

// A loop name taken apart: "f.s1.x.v2" is Func "f", stage 1, variable "x.v2". Only names that
// loop_name built parse; for any other name `func` is empty.
struct LoopNameParts {
    std::string func;
    int stage = -1;
    std::string var;
};
LoopNameParts parse_loop_name(const std::string &loop);
// The Func a loop belongs to: "f" for "f.s0.x" (the whole name when it is not a loop's).
std::string func_of_loop(const std::string &loop);
// The stage a loop belongs to: "f.s1" for "f.s1.x".
std::string stage_of_loop(const std::string &loop);

// ---- What users read ----

// A stage as users write it: "f" (the pure definition), "f.update(0)".
std::string stage_for_users(const std::string &func, int stage);
// A loop as users know it: "x of f.update(0)" for "f.s1.x"; any other name unchanged.
std::string loop_for_users(const std::string &loop);
// The variable of a loop as users wrote it: "x" for "f.s1.x" and for "f.s1.x.v2".
std::string loop_var_for_users(const std::string &loop);
// The stage of a loop as users write it: "f.update(0)" for "f.s1.x".
std::string loop_stage_for_users(const std::string &loop);
// Text (an expression or statement printed for a message) with every loop variable written
// as its user's name: "f(g.s0.x + 1)" reads "f(x + 1)".
std::string with_user_loop_names(const std::string &text);
// What the bound symbols in such text stand for, one clause each, in the order they first
// appear: "h.extent.0 is the extent of buffer h in dimension 0; f.x.extent_realized is the
// size of the region of f stored there in x". Empty when the text names none.
std::string symbols_for_users(const std::string &text);

} // namespace aicf

#endif
