#include "dsl/Fingerprint.h"

#include "dsl/Associative.h"
#include "dsl/Fields.h"
#include "dsl/ir/IRPrinter.h"

#include <type_traits>

namespace aicf {
namespace detail {

using namespace ir;

namespace {

// Writes values into the key, each in a form that cannot run into the next (strings with
// their length, sequences with their size).
class KeyWriter {
public:
    std::string key;

    void write(const std::string &s) {
        write(uint64_t(s.size()));
        key += s;
    }
    void write(bool b) { key += b ? 'T' : 'F'; }
    template <typename T, std::enable_if_t<std::is_integral_v<T> || std::is_enum_v<T>, int> = 0>
    void write(T v) {
        key += std::to_string(int64_t(v));
        key += ';';
    }
    void write(const Expr &e) {
        // Written with shared subexpressions once: an algorithm that uses each step's value
        // several times is a tree exponential in the number of steps.
        write(e.defined() ? to_string(e.type()) + ":" + to_shared_string(e)
                          : std::string("undefined"));
    }
    void write(const Type &t) { write(to_string(t)); }
    void write(const LoopLevel &l) {
        write(l.defined());
        write(l.is_root());
        write(l.is_inlined());
        write(l.func());
        write(l.var());
        write(l.stage());
    }
    void write(const ReductionDomain &r) {
        write(r.defined());
        if (!r.defined()) return;
        write(r.domain().size());
        for (const ReductionVariable &v : r.domain()) {
            write(v.var);
            write(v.min);
            write(v.extent);
        }
        write(r.predicate());
    }
    // The merge rfactor wrote: its values spell the form's merge; what the form says besides.
    void write(const Definition::Merge &m) {
        write(m.partials);
        write(m.had_point);
        const AssociativeUpdate &f = *m.form;
        write(f.kind);
        write(f.ops);
        write(f.compared);
        write(f.larger_wins);
        write(f.ties_to_candidate);
        write(f.nan_wins);
        write(f.positions);
        write(uint64_t(f.parts.size()));
    }
    // A definition as the algorithm wrote it, behind one rfactor rewrote.
    template <typename T> void write(const std::shared_ptr<const T> &p) {
        write(bool(p));
        if (p) write(*p);
    }
    template <typename T> void write(const std::vector<T> &v) {
        write(uint64_t(v.size()));
        for (const T &x : v)
            write(x);
    }
    // The schedule structs (and anything else that is a plain struct): every field.
    template <typename T, std::enable_if_t<std::is_class_v<T> && std::is_aggregate_v<T>, int> = 0>
    void write(const T &s) {
        for_each_field(s, [&](const auto &field) { write(field); });
    }
};

// FunctionContents holds a reference count besides what defines a Func, so it cannot be
// visited as an aggregate: fingerprint() writes its fields by name. This mirror of its
// layout makes adding a field there a compile error here, until the key writes it too.
struct FunctionContentsAsWritten {
    std::atomic<int> ref_count;
    std::string name;
    std::vector<std::string> args;
    std::vector<Type> output_types;
    Definition init;
    std::vector<Definition> updates;
    FuncSchedule schedule;
    std::map<std::string, IntrusivePtr<FunctionContents>> wrappers;
};
static_assert(
    sizeof(FunctionContents) == sizeof(FunctionContentsAsWritten),
    "FunctionContents changed: write its new field into the fingerprint, then update this mirror");

} // namespace

std::string fingerprint(const std::vector<Function> &outputs, const std::vector<Argument> &args,
                        const Target &target) {
    KeyWriter w;
    w.write(target.to_string());
    w.write(args.size());
    for (const Argument &a : args) {
        w.write(a.name);
        w.write(a.is_buffer);
        w.write(a.is_output);
        w.write(a.type);
        w.write(a.dimensions);
        w.write(a.known_strides);
    }
    w.write(outputs.size());
    for (const Function &f : outputs)
        w.write(f.name());
    const std::map<std::string, Function> env = find_transitive_calls(outputs);
    w.write(env.size());
    for (const auto &[name, f] : env) {
        w.write(name);
        w.write(f.args());
        w.write(f.output_types());
        w.write(f.schedule());
        w.write(f.get()->wrappers.size());
        for (const auto &[consumer, wrapper] : f.get()->wrappers) {
            w.write(consumer);
            w.write(wrapper->name);
        }
        w.write(f.stages());
        for (int s = 0; s < f.stages(); s++)
            w.write(f.stage(s));
    }
    return w.key;
}

} // namespace detail
} // namespace aicf
