// The command line of generator programs (aicf::generator_main).

#include "dsl/Generator.h"
#include "dsl/base/Error.h"

#include <iostream>
#include <map>
#include <sstream>

namespace aicf {

namespace {

const char *const kUsage =
    "usage: %s -g NAME [-o DIR] [-e KINDS] [-f FUNCTION] [PARAM=VALUE ...]\n"
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
    "  -f FUNCTION  the name of the C function (default: NAME)\n"
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
        std::unique_ptr<GeneratorBase> g = GeneratorRegistry::create(name);
        out << name << "\n";
        for (const GeneratorParamBase *p : g->params())
            out << "  " << p->name() << " = " << p->value_text() << "  (" << p->kind() << ")\n";
        for (const GeneratorIOBase *io : g->arguments()) {
            out << "  " << (io->is_output() ? "output " : "input ") << io->name() << ": "
                << (io->is_buffer() ? "buffer" : "scalar") << "\n";
        }
    }
    for (const auto &p : GeneratorRegistry::presets()) {
        out << p.second.name << " (preset of " << p.first << ":";
        for (const auto &v : p.second.values)
            out << " " << v.first << "=" << v.second;
        out << ")\n";
    }
}

} // namespace

int generator_main(int argc, char **argv) {
    const char *program = argc > 0 ? argv[0] : "aicf_generator";
    std::string name, dir = ".", kinds = "static_library,c_header", function;
    std::vector<std::pair<std::string, std::string>> params;
    bool listing = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](const char *flag) -> std::string {
            if (i + 1 >= argc) {
                std::cerr << program << ": " << flag << " needs a value\n";
                return {};
            }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            usage(std::cout, program);
            return 0;
        } else if (a == "-l" || a == "--list") {
            listing = true;
        } else if (a == "-g" || a == "-o" || a == "-e" || a == "-f") {
            std::string v = value(a.c_str());
            if (v.empty()) return 1;
            (a == "-g" ? name : a == "-o" ? dir : a == "-e" ? kinds : function) = v;
        } else if (a.find('=') != std::string::npos && a[0] != '-') {
            params.push_back({a.substr(0, a.find('=')), a.substr(a.find('=') + 1)});
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
        std::stringstream list(kinds);
        for (std::string kind; std::getline(list, kind, ',');) {
            auto it = kind_of.find(kind);
            if (it == kind_of.end()) {
                std::cerr << program << ": -e: unknown kind " << kind << "; the kinds are "
                          << "static_library, object, c_header, ptx, stmt, assembly\n";
                return 1;
            }
            files.*(it->second) = dir + "/" + function + extension[kind];
        }
        GeneratorRegistry::compile_to_files(name, params, function, files);
        return 0;
    } catch (const Error &e) {
        std::cerr << program << ": " << e.what() << "\n";
        return 1;
    }
}

} // namespace aicf
