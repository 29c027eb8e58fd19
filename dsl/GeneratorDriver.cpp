// The command line of generator programs (aicf::generator_main).

#include "dsl/Generator.h"
#include "dsl/base/Error.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace aicf {

namespace {

const char *const kUsage =
    "usage: %s -g NAME [-o DIR] [-e KINDS] [-f FUNCTION] [-s ARG=SIZE ...] [PARAM=VALUE ...]\n"
    "       %s -l\n"
    "Compiles a generator of this program ahead of time.\n"
    "  -g NAME      the generator, or a preset of one, to compile\n"
    "  -o DIR       the folder to write to (default: the current one)\n"
    "  -e KINDS     what to write, comma-separated (default: static_library,c_header):\n"
    "                 static_library  FUNCTION.a, the compiled pipeline\n"
    "                 object          FUNCTION.o, the same as an object file\n"
    "                 c_header        FUNCTION.h, the declarations of its C functions\n"
    "                 ptx             FUNCTION.ptx, its GPU kernels\n"
    "                 stmt            FUNCTION.stmt, the lowered IR\n"
    "                 assembly        FUNCTION.s, the host code\n"
    "                 report          FUNCTION.report.txt, .json and .dot (and .svg where\n"
    "                                 Graphviz is installed): the dataflow report of a GPU\n"
    "                                 target at the sizes -s gives, counted without running\n"
    "  -f FUNCTION  the name of the C function (default: NAME)\n"
    "  -s ARG=SIZE  for the report: the extents of an input or output buffer, innermost first\n"
    "               (-s out=4096x2048; the outputs take the first output's), or the value of\n"
    "               a scalar input (-s alpha=0.5)\n"
    "  -l           lists the generators and presets of this program, with their parameters\n"
    "  PARAM=VALUE  sets a parameter of the generator; target=host-cuda-sm_80 compiles GPU\n"
    "               kernels for that architecture (default: target=host, the CPU compiling).\n"
    "               Several targets, comma-separated and most preferred first\n"
    "               (target=x86-64-v3-cuda-sm_80,x86-64-v3,x86-64), make one library that runs\n"
    "               the first this machine runs; stmt and ptx files are then one per target\n"
    "The C functions are FUNCTION, FUNCTION_argv and FUNCTION_metadata; link the library with\n"
    "libaicf_runtime.\n";

void usage(std::ostream &out, const char *program) {
    std::string text = kUsage;
    for (size_t at; (at = text.find("%s")) != std::string::npos;)
        text.replace(at, 2, program);
    out << text;
}

void list(std::ostream &out) {
    std::vector<std::string> names = GeneratorRegistry::generators();
    if (names.empty()) out << "No generators are registered in this program.\n";
    for (const std::string &name : names) {
        std::unique_ptr<GeneratorBase> g;
        try {
            g = GeneratorRegistry::create(name);
        } catch (const CompileError &e) {
            // One broken generator does not hide the others.
            out << name << "\n  (cannot be constructed: " << e.what() << ")\n";
            continue;
        }
        out << name << "\n";
        for (const GeneratorParamBase *p : g->params()) {
            // The type or rank of an input or output that is a parameter has no default.
            bool required = false;
            for (const GeneratorIOBase *io : g->arguments())
                required = required || (!p->was_set() && (p->name() == io->name() + ".type" ||
                                                          p->name() == io->name() + ".dim"));
            out << "  " << p->name() << (required ? " (required)" : " = " + p->value_text())
                << "  (" << p->kind() << ")\n";
        }
        // Each argument with its type and rank, or the parameters that set them.
        auto is_param = [&](const std::string &name) {
            for (const GeneratorParamBase *p : g->params())
                if (p->name() == name) return true;
            return false;
        };
        for (const GeneratorIOBase *io : g->arguments()) {
            const std::string type_param = io->name() + ".type", dim_param = io->name() + ".dim";
            const std::string type =
                is_param(type_param) ? "the type " + type_param : detail::type_text(io->type());
            out << "  " << (io->is_output() ? "output " : "input ") << io->name() << ": "
                << (io->is_buffer() ? "buffer of " : "scalar ") << type;
            if (io->is_buffer()) {
                if (is_param(dim_param)) {
                    out << ", " << dim_param << " dimensions";
                } else {
                    out << ", " << io->dimensions()
                        << (io->dimensions() == 1 ? " dimension" : " dimensions");
                }
            }
            out << "\n";
        }
    }
    for (const auto &p : GeneratorRegistry::presets()) {
        out << p.second.name << " (preset of " << p.first << ":";
        for (const auto &v : p.second.values)
            out << " " << v.first << "=" << v.second;
        out << ")\n";
    }
}

// "4096x2048" as extents; empty when it is not one.
// The extents of `-s name=text` ("4096x2048"), each from 1 to 2^31 - 1.
std::vector<int> extents_of(const std::string &name, const std::string &text) {
    const std::string where = "-s " + name + "=" + text + ": an extent";
    user_assert(!text.empty() && text.back() != 'x')
        << "-s " << name << "=" << text << ": the extents of a buffer are non-negative integers "
        << "joined by x (4096x2048).";
    std::vector<int> extents;
    std::stringstream list(text);
    for (std::string e; std::getline(list, e, 'x');)
        extents.push_back(int(detail::parse_int(e, 0, INT32_MAX, where)));
    return extents;
}

// Writes the dataflow report of generator `name` at `sizes` as FUNCTION.report.*.
void write_report(const std::string &name,
                  const std::vector<std::pair<std::string, std::string>> &params,
                  const std::vector<std::pair<std::string, std::string>> &sizes,
                  const std::string &path) {
    // Of a list of targets (one build each), the first with GPU kernels: the report counts
    // theirs.
    std::vector<std::pair<std::string, std::string>> first_target = params;
    for (auto &p : first_target) {
        if (p.first != "target") continue;
        std::stringstream list(p.second);
        std::string chosen = p.second.substr(0, p.second.find(','));
        for (std::string t; std::getline(list, t, ',');) {
            if (t.find("cuda") == std::string::npos) continue;
            chosen = t;
            break;
        }
        p.second = chosen;
    }
    std::unique_ptr<GeneratorBase> g = GeneratorRegistry::create(name);
    for (const auto &p : first_target)
        g->set_param(p.first, p.second);
    Pipeline pipeline = g->build();
    std::vector<int> output_sizes;
    ReportArguments args;
    std::string outputs;
    for (const GeneratorIOBase *io : g->arguments()) {
        auto it = std::find_if(sizes.begin(), sizes.end(),
                               [&](const auto &s) { return s.first == io->name(); });
        if (io->is_output()) outputs += (outputs.empty() ? "" : ", ") + io->name();
        if (it == sizes.end()) continue;
        // The report's sizes are the first output's that has them; every output's own
        // extents go with the arguments too (those of another rank take them, and others
        // must agree).
        if (io->is_output() && output_sizes.empty())
            output_sizes = extents_of(it->first, it->second);
        if (io->is_buffer()) {
            args.buffers[io->name()] = extents_of(it->first, it->second);
        } else {
            char *end = nullptr;
            args.scalars[io->name()] = std::strtod(it->second.c_str(), &end);
            user_assert(end && *end == 0 && !it->second.empty())
                << "-s " << it->first << "=" << it->second << ": the value of scalar input "
                << io->name() << " must be a number.";
        }
    }
    for (const auto &s : sizes) {
        bool known = false;
        for (const GeneratorIOBase *io : g->arguments())
            known = known || io->name() == s.first;
        user_assert(known) << "-s " << s.first << ": generator " << name << " has no input or "
                           << "output " << s.first << ".";
    }
    user_assert(!output_sizes.empty())
        << "The report of generator " << name << " needs the size of its output: -s "
        << outputs.substr(0, outputs.find(',')) << "=4096x2048 (extents, innermost first).";
    const DataflowReport report = pipeline.report(output_sizes, g->get_target(), args);
    for (auto [extension, text] : {std::make_pair(".report.txt", report.to_text()),
                                   std::make_pair(".report.json", report.to_json())}) {
        std::ofstream out(path + extension);
        user_assert(out.good()) << "report: cannot open " << path << extension << " for writing.";
        out << text;
    }
    if (!write_report_picture(report, path + ".report.dot", path + ".report.svg"))
        std::cerr << "report: wrote " << path << ".report.dot; no SVG of it (Graphviz's dot is "
                  << "not on the PATH, or failed).\n";
}

} // namespace

int generator_main(int argc, char **argv) {
    const char *program = argc > 0 ? argv[0] : "aicf_generator";
    std::string name, dir = ".", kinds = "static_library,c_header", function;
    std::vector<std::pair<std::string, std::string>> params, sizes;
    bool listing = false;
    std::set<std::string> given_flags;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        // The flag's value, or nothing (said on stderr) when it is missing or empty, as an
        // unset variable in a build script makes it.
        auto value = [&](const char *flag) -> std::optional<std::string> {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                std::cerr << program << ": " << flag << " needs a value"
                          << (i + 1 < argc ? " (it was given an empty one)" : "") << "\n";
                return std::nullopt;
            }
            return std::string(argv[++i]);
        };
        if (a == "-h" || a == "--help") {
            usage(std::cout, program);
            return 0;
        } else if (a == "-l" || a == "--list") {
            listing = true;
        } else if (a == "-g" || a == "-o" || a == "-e" || a == "-f") {
            std::optional<std::string> v = value(a.c_str());
            if (!v) return 1;
            // A flag given twice (two build scripts' settings joined) is refused, as a
            // parameter given twice is: neither value is plainly the one meant.
            if (!given_flags.insert(a).second) {
                std::cerr << program << ": " << a << " is given twice (the second time as " << *v
                          << ")\n";
                return 1;
            }
            (a == "-g" ? name : a == "-o" ? dir : a == "-e" ? kinds : function) = *v;
        } else if (a == "-s") {
            std::optional<std::string> given = value("-s");
            if (!given) return 1;
            const std::string &v = *given;
            if (v.find('=') == std::string::npos) {
                std::cerr << program << ": -s takes ARG=SIZE (-s out=4096x2048)\n";
                return 1;
            }
            const std::string key = v.substr(0, v.find('=')), size = v.substr(v.find('=') + 1);
            for (const auto &[k, before] : sizes) {
                if (k != key) continue;
                std::cerr << program << ": -s " << key << " is given twice (" << before << ", then "
                          << size << ")\n";
                return 1;
            }
            sizes.push_back({key, size});
        } else if (a.find('=') != std::string::npos && a[0] != '-') {
            const std::string key = a.substr(0, a.find('=')), v = a.substr(a.find('=') + 1);
            for (const auto &[k, before] : params) {
                if (k != key) continue;
                std::cerr << program << ": " << key << " is given twice (" << before << ", then "
                          << v << ")\n";
                return 1;
            }
            params.push_back({key, v});
        } else {
            std::cerr << program << ": unknown argument " << a << "\n";
            usage(std::cerr, program);
            return 1;
        }
    }
    try {
        if (listing) {
            list(std::cout);
            return 0;
        }
        if (name.empty()) {
            std::cerr << program << ": -g NAME is missing\n";
            usage(std::cerr, program);
            return 1;
        }
        if (function.empty()) function = name;
        std::map<std::string, std::string OutputFiles::*> kind_of = {
            {"static_library", &OutputFiles::static_library},
            {"object", &OutputFiles::object},
            {"c_header", &OutputFiles::c_header},
            {"ptx", &OutputFiles::ptx},
            {"stmt", &OutputFiles::stmt},
            {"assembly", &OutputFiles::assembly}};
        std::map<std::string, std::string> extension = {
            {"static_library", ".a"}, {"object", ".o"},  {"c_header", ".h"},
            {"ptx", ".ptx"},          {"stmt", ".stmt"}, {"assembly", ".s"}};
        OutputFiles files;
        bool report = false, compile = false;
        std::stringstream list(kinds + ",");
        for (std::string kind; std::getline(list, kind, ',');) {
            if (kind.empty()) {
                std::cerr << program << ": -e " << kinds << ": an empty kind between commas\n";
                return 1;
            }
            if (kind == "report") {
                report = true;
                continue;
            }
            compile = true;
            auto it = kind_of.find(kind);
            if (it == kind_of.end()) {
                std::cerr << program << ": -e: unknown kind " << kind << "; the kinds are "
                          << "static_library, object, c_header, ptx, stmt, assembly, report\n";
                return 1;
            }
            files.*(it->second) = dir + "/" + function + extension[kind];
        }
        // -o names a folder that is made if need be, as build systems expect.
        std::error_code made;
        std::filesystem::create_directories(dir, made);
        if (made) {
            std::cerr << program << ": -o " << dir << ": cannot make the folder: " << made.message()
                      << "\n";
            return 1;
        }
        if (!report && !sizes.empty()) {
            std::cerr << program << ": -s " << sizes[0].first << "=" << sizes[0].second
                      << " gives a size to the report, but -e " << kinds
                      << " does not ask for one: add report to -e (-e " << kinds << ",report)\n";
            return 1;
        }
        if (compile) GeneratorRegistry::compile_to_files(name, params, function, files);
        if (report) write_report(name, params, sizes, dir + "/" + function);
        return 0;
    } catch (const Error &e) {
        std::cerr << program << ": " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << program << ": " << e.what() << "\n";
        return 1;
    }
}

} // namespace aicf
