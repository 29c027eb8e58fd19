#include "dsl/Schedule.h"

#include "dsl/Names.h"

#include "dsl/base/Changes.h"
#include "dsl/base/Error.h"

namespace aicf {

struct LoopLevel::Contents {
    enum Kind { Undefined, Inlined, Root, At } kind = Undefined;
    std::string func, var;
    int stage = -1;
};

LoopLevel::LoopLevel() : contents(std::make_shared<Contents>()) {}

LoopLevel LoopLevel::inlined() {
    LoopLevel l;
    l.contents->kind = Contents::Inlined;
    return l;
}

LoopLevel LoopLevel::root() {
    LoopLevel l;
    l.contents->kind = Contents::Root;
    return l;
}

LoopLevel::LoopLevel(const std::string &func, const std::string &var, int stage)
    : contents(std::make_shared<Contents>()) {
    user_assert(stage >= -1) << "LoopLevel(" << func << ", " << var << ", " << stage
                             << "): the stage is -1 (the "
                             << "last one of " << func
                             << ") or an index of one of its stages (0 for the pure "
                             << "definition, 1 for the first update, ...).";
    contents->kind = Contents::At;
    contents->func = func;
    contents->var = var;
    contents->stage = stage;
}

void LoopLevel::set(const LoopLevel &other) {
    detail::note_definition_change();
    *contents = *other.contents;
}
bool LoopLevel::is_inlined() const {
    return contents->kind == Contents::Inlined;
}
bool LoopLevel::is_root() const {
    return contents->kind == Contents::Root;
}
bool LoopLevel::defined() const {
    return contents->kind != Contents::Undefined;
}
const std::string &LoopLevel::func() const {
    return contents->func;
}
const std::string &LoopLevel::var() const {
    return contents->var;
}
int LoopLevel::stage() const {
    return contents->stage;
}

std::string LoopLevel::to_string() const {
    switch (contents->kind) {
    case Contents::Undefined:
        return "undefined";
    case Contents::Inlined:
        return "inlined";
    case Contents::Root:
        return "root";
    case Contents::At:
        // As users write it: the loop x of f (its last stage that has one), or of a stage.
        return "loop " + contents->var + " of " +
               (contents->stage >= 0 ? stage_for_users(contents->func, contents->stage)
                                     : contents->func);
    }
    return "?";
}

bool LoopLevel::same_place(const LoopLevel &o) const {
    return contents->kind == o.contents->kind && contents->func == o.contents->func &&
           contents->var == o.contents->var && contents->stage == o.contents->stage;
}

} // namespace aicf
