#include "backends/llvm/CudaToolkit.h"

#include "dsl/base/Error.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace aicf {
namespace backends {

namespace {

bool file_exists(const std::string &path) {
    return !path.empty() && access(path.c_str(), R_OK) == 0;
}

std::string find_ptxas() {
    if (const char *env = std::getenv("AICF_PTXAS"); env && *env) return env;
#ifdef AICF_CUDA_BIN_DIR
    if (file_exists(std::string(AICF_CUDA_BIN_DIR) + "/ptxas"))
        return std::string(AICF_CUDA_BIN_DIR) + "/ptxas";
#endif
    if (file_exists("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
    if (const char *path = std::getenv("PATH")) {
        std::stringstream dirs(path);
        std::string dir;
        while (std::getline(dirs, dir, ':')) {
            if (file_exists(dir + "/ptxas")) return dir + "/ptxas";
        }
    }
    return "";
}

} // namespace

std::string libdevice_path() {
    if (const char *env = std::getenv("AICF_LIBDEVICE"); env && *env) return env;
#ifdef AICF_LIBDEVICE_PATH
    if (file_exists(AICF_LIBDEVICE_PATH)) return AICF_LIBDEVICE_PATH;
#endif
    const char *fallback = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
    return file_exists(fallback) ? fallback : "";
}

std::string KernelResources::to_string() const {
    std::ostringstream s;
    s << kernel << " (" << arch << "): " << registers << " registers, " << spill_store_bytes
      << " bytes spill stores, " << spill_load_bytes << " bytes spill loads, " << stack_frame_bytes
      << " bytes stack frame, " << static_shared_bytes << " bytes static shared memory";
    for (const std::string &c : wgmma_changes)
        s << "; ptxas: " << c;
    return s.str();
}

bool ptxas_available() {
    return !find_ptxas().empty();
}
bool libdevice_available() {
    return file_exists(libdevice_path());
}

namespace {

// Runs ptxas on `ptx` for `arch`: the cubin, and what ptxas -v printed.
std::string run_ptxas(const std::string &ptx, const std::string &arch, std::string &text) {
    std::string ptxas = find_ptxas();
    user_assert(!ptxas.empty())
        << "ptxas was not found: install the CUDA toolkit, or set AICF_PTXAS.";
    char dir_template[] = "/tmp/aicf_ptx_XXXXXX";
    char *dir = mkdtemp(dir_template);
    internal_assert(dir) << "cannot create a temporary directory";
    std::string input = std::string(dir) + "/kernels.ptx",
                output = std::string(dir) + "/kernels.cubin", log = std::string(dir) + "/ptxas.log";
    std::ofstream(input) << ptx;
    std::string command = "'" + ptxas + "' -v -arch=" + arch + " -o '" + output + "' '" + input +
                          "' > '" + log + "' 2>&1";
    int status = std::system(command.c_str());
    std::ifstream in(log);
    text.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ifstream cubin_file(output, std::ios::binary);
    std::string cubin((std::istreambuf_iterator<char>(cubin_file)),
                      std::istreambuf_iterator<char>());
    std::remove(input.c_str());
    std::remove(output.c_str());
    std::remove(log.c_str());
    rmdir(dir);
    user_assert(status == 0) << "ptxas rejected the kernels for " << arch << ":\n" << text;
    return cubin;
}

} // namespace

std::string ptx_to_cubin(const std::string &ptx, const std::string &arch) {
    std::string text;
    return run_ptxas(ptx, arch, text);
}

std::vector<KernelResources> assemble_ptx(const std::string &ptx, const std::string &arch) {
    std::string text;
    run_ptxas(ptx, arch, text);

    // ptxas -v: "Compiling entry function 'k' for 'sm_80'", then "N bytes stack frame, N bytes
    // spill stores, N bytes spill loads" and "Used N registers, ... N bytes smem ...".
    // And what it did to a kernel's wgmma, before those lines: "(C7517) warpgroup.wait is
    // injected in around line N by compiler to allow use of registers defined by GMMA in
    // function 'k'", or "(C7515) Potential Performance Loss: wgmma.mma_async instructions are
    // serialized due to ... in the function 'k'".
    std::vector<KernelResources> result;
    std::vector<std::pair<std::string, std::string>> wgmma_changes; // kernel, what
    std::stringstream lines(text);
    std::string line;
    std::smatch m;
    while (std::getline(lines, line)) {
        if (std::regex_search(line, m,
                              std::regex("\\((C75\\d\\d)\\) (.*) in (the )?function '([^']+)'"))) {
            wgmma_changes.emplace_back(m[4], std::string(m[1]) + " " + std::string(m[2]));
            continue;
        }
        if (std::regex_search(line, m, std::regex("Compiling entry function '([^']+)'"))) {
            KernelResources k;
            k.kernel = m[1];
            k.arch = arch;
            result.push_back(k);
            continue;
        }
        if (result.empty()) continue;
        KernelResources &r = result.back();
        if (std::regex_search(line, m,
                              std::regex("(\\d+) bytes stack frame, (\\d+) bytes spill stores, "
                                         "(\\d+) bytes spill loads"))) {
            r.stack_frame_bytes = std::stoi(m[1]);
            r.spill_store_bytes = std::stoi(m[2]);
            r.spill_load_bytes = std::stoi(m[3]);
        }
        if (std::regex_search(line, m, std::regex("Used (\\d+) registers")))
            r.registers = std::stoi(m[1]);
        if (std::regex_search(line, m, std::regex("(\\d+) bytes smem")))
            r.static_shared_bytes = std::stoi(m[1]);
    }
    for (KernelResources &r : result)
        for (const auto &[kernel, what] : wgmma_changes)
            if (kernel == r.kernel) r.wgmma_changes.push_back(what);
    return result;
}

} // namespace backends
} // namespace aicf
