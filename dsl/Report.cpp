#include "dsl/Report.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace aicf {

const std::vector<GPUPeaks> &report_gpus() {
    // Dense rates (the datasheets' tensor-core figures with sparsity are twice these).
    static const std::vector<GPUPeaks> gpus = {
        {"A100", 2.039e12, 19.5e12, 312e12, 156e12,
         "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: HBM2e 2,039 GB/s, FP32 19.5 "
         "TFLOPS, BF16/FP16 Tensor Core 312 TFLOPS, TF32 Tensor Core 156 TFLOPS"},
        {"H100", 3.35e12, 67e12, 989.5e12, 494.7e12,
         "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 3.35 TB/s, FP32 67 TFLOPS, "
         "BF16/FP16 Tensor Core 1,979 TFLOPS and TF32 989 TFLOPS with sparsity (half dense)"},
        {"H200", 4.8e12, 67e12, 989.5e12, 494.7e12,
         "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: HBM3e 4.8 TB/s, FP32 67 TFLOPS, "
         "BF16/FP16 Tensor Core 1,979 TFLOPS and TF32 989 TFLOPS with sparsity (half dense)"},
    };
    return gpus;
}

int64_t KernelReport::requested_bytes() const {
    int64_t total = 0;
    for (const BufferReport &b : buffers)
        total += b.requested_read + b.requested_written;
    return total;
}

int64_t KernelReport::moved_bytes() const {
    int64_t total = 0;
    for (const BufferReport &b : buffers)
        total += b.moved_read + b.moved_written;
    return total;
}

int64_t KernelReport::compulsory_bytes() const {
    int64_t total = 0;
    for (const BufferReport &b : buffers) {
        if (b.role != BufferReport::Intermediate) total += b.moved_read + b.moved_written;
    }
    return total;
}

double KernelReport::intensity() const {
    const int64_t moved = moved_bytes();
    return moved > 0 ? double(flops + tensor_flops) / double(moved) : 0.0;
}

int64_t DataflowReport::requested_bytes() const {
    int64_t total = 0;
    for (const KernelReport &k : kernels)
        total += k.requested_bytes();
    return total;
}

int64_t DataflowReport::moved_bytes() const {
    int64_t total = 0;
    for (const KernelReport &k : kernels)
        total += k.moved_bytes();
    return total;
}

int64_t DataflowReport::flops() const {
    int64_t total = 0;
    for (const KernelReport &k : kernels)
        total += k.flops;
    return total;
}

int64_t DataflowReport::tensor_flops() const {
    int64_t total = 0;
    for (const KernelReport &k : kernels)
        total += k.tensor_flops;
    return total;
}

namespace {

std::string format(const char *fmt, double v) {
    char text[64];
    std::snprintf(text, sizeof(text), fmt, v);
    return text;
}

// A count in decimal units (k, M, G, T), as bandwidths and rates are quoted.
std::string scaled(int64_t count, const char *unit) {
    const double v = double(count);
    const std::string u = unit;
    if (v >= 1e12) return format("%.2f T", v / 1e12) + u;
    if (v >= 1e9) return format("%.2f G", v / 1e9) + u;
    if (v >= 1e6) return format("%.2f M", v / 1e6) + u;
    if (v >= 1e3) return format("%.2f k", v / 1e3) + u;
    return format("%.0f", v) + (u.empty() ? "" : " " + u);
}

std::string bytes_text(int64_t bytes) {
    return scaled(bytes, "B");
}

std::string flops_text(int64_t flops) {
    return scaled(flops, "");
}

std::string seconds_text(double s) {
    if (s >= 1) return format("%.2f s", s);
    if (s >= 1e-3) return format("%.2f ms", s * 1e3);
    if (s >= 1e-6 || s == 0) return format("%.1f us", s * 1e6);
    // A small kernel's bound, which would read 0.0 us.
    return format("%.1f ns", s * 1e9);
}

std::string bound_text(const RooflineBound &b) {
    return seconds_text(b.seconds) + (b.memory_bound() ? " mem" : " math");
}

std::string plural(size_t n, const char *word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

const char *role_name(BufferReport::Role r) {
    switch (r) {
    case BufferReport::Input:
        return "input";
    case BufferReport::Output:
        return "output";
    default:
        return "intermediate";
    }
}

// A table with columns padded to their widest cell.
class Table {
public:
    void row(std::vector<std::string> cells) { rows.push_back(std::move(cells)); }
    std::string to_string() const {
        std::vector<size_t> width;
        for (const auto &r : rows) {
            width.resize(std::max(width.size(), r.size()));
            for (size_t i = 0; i < r.size(); i++)
                width[i] = std::max(width[i], r[i].size());
        }
        std::string s;
        for (size_t n = 0; n < rows.size(); n++) {
            s += "|";
            for (size_t i = 0; i < width.size(); i++) {
                const std::string cell = i < rows[n].size() ? rows[n][i] : "";
                s += " " + cell + std::string(width[i] - cell.size(), ' ') + " |";
            }
            s += "\n";
            if (n == 0) {
                s += "|";
                for (size_t w : width)
                    s += std::string(w + 2, '-') + "|";
                s += "\n";
            }
        }
        return s;
    }

private:
    std::vector<std::vector<std::string>> rows;
};

std::string shape_text(const std::array<int64_t, 3> &g) {
    return std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
}

std::string json_string(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof(esc), "\\u%04x", c);
            out += esc;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// A Graphviz string: quoted, with line breaks as \n.
std::string dot_string(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char text[64];
    std::snprintf(text, sizeof(text), "%.17g", v);
    return text;
}

std::string json_roofline(const std::vector<RooflineBound> &bounds) {
    std::string s = "[";
    for (size_t i = 0; i < bounds.size(); i++) {
        const RooflineBound &b = bounds[i];
        s += std::string(i ? ", " : "") + "{\"gpu\": " + json_string(b.gpu) +
             ", \"seconds\": " + json_number(b.seconds) +
             ", \"memory_seconds\": " + json_number(b.memory_seconds) +
             ", \"compute_seconds\": " + json_number(b.compute_seconds) +
             ", \"bound\": " + (b.memory_bound() ? "\"memory\"" : "\"compute\"") + "}";
    }
    return s + "]";
}

template <typename T, typename F> std::string json_list(const std::vector<T> &v, F item) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); i++)
        s += (i ? ", " : "") + item(v[i]);
    return s + "]";
}

std::string json_report(const DataflowReport &r, const std::string &indent) {
    std::ostringstream s;
    const std::string in = indent + "  ";
    s << "{\n";
    s << in << "\"pipeline\": " << json_string(r.pipeline) << ",\n";
    s << in << "\"target\": " << json_string(r.target) << ",\n";
    auto extents = [](const std::vector<int> &v) {
        return json_list(v, [](int e) { return std::to_string(e); });
    };
    s << in << "\"sizes\": " << extents(r.sizes) << ",\n";
    s << in << "\"other_output_sizes\": {";
    for (auto it = r.other_output_sizes.begin(); it != r.other_output_sizes.end(); ++it)
        s << (it == r.other_output_sizes.begin() ? "" : ", ") << json_string(it->first) << ": "
          << extents(it->second);
    s << "},\n";
    s << in << "\"kernels\": [";
    for (size_t i = 0; i < r.kernels.size(); i++) {
        const KernelReport &k = r.kernels[i];
        s << (i ? "," : "") << "\n"
          << in << "  {\"name\": " << json_string(k.name)
          << ", \"funcs\": " << json_list(k.funcs, json_string) << ", \"grid\": "
          << json_list(std::vector<int64_t>(k.grid.begin(), k.grid.end()),
                       [](int64_t v) { return std::to_string(v); })
          << ", \"block\": "
          << json_list(std::vector<int>(k.block.begin(), k.block.end()),
                       [](int v) { return std::to_string(v); })
          << ", \"shared_bytes\": " << k.shared_bytes
          << ", \"registers\": " << (k.registers < 0 ? "null" : std::to_string(k.registers))
          << ", \"spill_bytes\": " << (k.spill_bytes < 0 ? "null" : std::to_string(k.spill_bytes))
          << ", \"flops\": " << k.flops << ", \"tensor_flops\": " << k.tensor_flops
          << ", \"tf32\": " << (k.tf32 ? "true" : "false")
          << ", \"exact\": " << (k.exact ? "true" : "false")
          << ", \"requested_bytes\": " << k.requested_bytes()
          << ", \"moved_bytes\": " << k.moved_bytes()
          << ", \"compulsory_bytes\": " << k.compulsory_bytes()
          << ", \"intensity\": " << json_number(k.intensity()) << ", \"buffers\": "
          << json_list(k.buffers,
                       [](const BufferReport &b) {
                           return "{\"name\": " + json_string(b.name) +
                                  ", \"role\": " + json_string(role_name(b.role)) +
                                  ", \"bytes\": " + std::to_string(b.bytes) +
                                  ", \"requested_read\": " + std::to_string(b.requested_read) +
                                  ", \"requested_written\": " +
                                  std::to_string(b.requested_written) +
                                  ", \"moved_read\": " + std::to_string(b.moved_read) +
                                  ", \"moved_written\": " + std::to_string(b.moved_written) + "}";
                       })
          << ", \"roofline\": " << json_roofline(k.roofline) << "}";
    }
    s << "\n" << in << "],\n";
    s << in << "\"host_funcs\": " << json_list(r.host_funcs, json_string) << ",\n";
    s << in << "\"totals\": {\"kernels\": " << r.kernels.size()
      << ", \"requested_bytes\": " << r.requested_bytes()
      << ", \"moved_bytes\": " << r.moved_bytes()
      << ", \"compulsory_bytes\": " << r.compulsory_bytes << ", \"flops\": " << r.flops()
      << ", \"tensor_flops\": " << r.tensor_flops()
      << ", \"roofline\": " << json_roofline(r.roofline) << "},\n";
    s << in << "\"baseline\": " << (r.baseline ? json_report(*r.baseline, in) : "null") << ",\n";
    s << in << "\"summary\": " << json_string(r.summary()) << "\n";
    s << indent << "}";
    return s.str();
}

} // namespace

std::string DataflowReport::summary() const {
    if (kernels.empty()) {
        // (Kernels whose grid is empty do not launch.)
        if (std::count(sizes.begin(), sizes.end(), 0) > 0)
            return "no kernels launch: the output is empty at these sizes";
        return "no GPU kernels: the schedule computes every Func on the host";
    }
    const std::string self =
        plural(kernels.size(), "kernel") + " moving " + bytes_text(moved_bytes());
    std::string host;
    for (size_t i = 0; i < host_funcs.size(); i++)
        host += (i ? ", " : "") + host_funcs[i];
    if (!host.empty()) host += " on the host, not counted";
    if (!baseline) return host.empty() ? self : self + " (" + host + ")";
    const int64_t before = baseline->moved_bytes(), after = moved_bytes();
    std::string ratio = "the same";
    if (after > 0 && double(before) >= 1.05 * double(after)) {
        ratio = format("%.1fx less", double(before) / double(after));
    } else if (before > 0 && double(after) >= 1.05 * double(before)) {
        ratio = format("%.1fx more", double(after) / double(before));
    }
    return plural(baseline->kernels.size(), "kernel") + " moving " + bytes_text(before) + " -> " +
           self + " (" + ratio + (host.empty() ? "" : "; " + host) + ")";
}

std::string DataflowReport::to_text() const {
    std::ostringstream s;
    auto size_text = [](const std::vector<int> &extents) {
        std::string text;
        for (size_t i = 0; i < extents.size(); i++)
            text += (i ? " x " : "") + std::to_string(extents[i]);
        return extents.empty() ? std::string("one point (no dimensions)") : text;
    };
    s << "Dataflow report: " << pipeline << (other_output_sizes.empty() ? " at " : ", outputs at ")
      << size_text(sizes);
    const char *joint = " except ";
    for (const auto &[name, extents] : other_output_sizes) {
        s << joint << name << " at " << size_text(extents);
        joint = ", ";
    }
    s << " for " << target << "\n\n";
    Table t;
    std::vector<std::string> head = {"kernel", "grid",     "block", "shared", "regs",  "requested",
                                     "moved",  "compuls.", "flops", "tensor", "flop/B"};
    for (const GPUPeaks &g : report_gpus())
        head.push_back(g.name);
    t.row(head);
    for (const KernelReport &k : kernels) {
        std::vector<std::string> r = {
            k.name + (k.exact ? "" : " (bound)"),
            shape_text(k.grid),
            std::to_string(k.block[0]) + "x" + std::to_string(k.block[1]) + "x" +
                std::to_string(k.block[2]),
            bytes_text(k.shared_bytes),
            k.registers < 0
                ? "-"
                : std::to_string(k.registers) +
                      (k.spill_bytes > 0 ? " +" + bytes_text(k.spill_bytes) + " spill" : ""),
            bytes_text(k.requested_bytes()),
            bytes_text(k.moved_bytes()),
            bytes_text(k.compulsory_bytes()),
            flops_text(k.flops),
            flops_text(k.tensor_flops) + (k.tf32 && k.tensor_flops ? " tf32" : ""),
            format("%.1f", k.intensity())};
        for (const RooflineBound &b : k.roofline)
            r.push_back(bound_text(b));
        t.row(r);
    }
    std::vector<std::string> total = {"total",
                                      "",
                                      "",
                                      "",
                                      "",
                                      bytes_text(requested_bytes()),
                                      bytes_text(moved_bytes()),
                                      bytes_text(compulsory_bytes),
                                      flops_text(flops()),
                                      flops_text(tensor_flops()),
                                      ""};
    for (const RooflineBound &b : roofline)
        total.push_back(bound_text(b));
    t.row(total);
    s << t.to_string() << "\n";

    Table b;
    b.row({"kernel", "buffer", "role", "size", "requested read", "requested written", "moved read",
           "moved written"});
    for (const KernelReport &k : kernels) {
        for (const BufferReport &buf : k.buffers) {
            b.row({k.name, buf.name, role_name(buf.role), bytes_text(buf.bytes),
                   bytes_text(buf.requested_read), bytes_text(buf.requested_written),
                   bytes_text(buf.moved_read), bytes_text(buf.moved_written)});
        }
    }
    s << b.to_string() << "\n";
    s << "requested: bytes the loads and stores ask for (L2 traffic); moved: the elements each "
         "kernel reaches in each buffer (device-memory traffic when caches keep the reuse, in "
         "whole elements, not 32-byte sectors);\n"
         "compuls.: of a kernel, what it moves of the pipeline's inputs and outputs; in the "
         "total, the compulsory bytes, the pipeline's inputs read once and outputs written once ("
      << (kernels.empty() ? std::string("none in device memory: no kernel reads or writes it")
                          : bytes_text(compulsory_bytes) +
                                ", less than the kernels' sum where two kernels read one input")
      << "). Roofline: moved bytes and flops at each GPU's datasheet peaks.\n";
    if (!host_funcs.empty()) {
        s << "Computed in host code, outside these counts:";
        for (size_t i = 0; i < host_funcs.size(); i++)
            s << (i ? ", " : " ") << host_funcs[i];
        s << " (the CPU's reads and writes, and any copies between host and device memory, "
             "are not counted).\n";
    }
    if (baseline) {
        s << "\nOperator by operator (every Func its own kernel, a plain GPU schedule): "
          << plural(baseline->kernels.size(), "kernel") << ", requested "
          << bytes_text(baseline->requested_bytes()) << ", moved "
          << bytes_text(baseline->moved_bytes());
        for (const RooflineBound &r : baseline->roofline)
            s << ", " << r.gpu << " " << bound_text(r);
        s << "\n";
    }
    s << "\n" << summary() << "\n";
    return s.str();
}

std::string DataflowReport::to_json() const {
    return json_report(*this, "") + "\n";
}

std::string DataflowReport::to_dot() const {
    // A Func computed in several kernels (an update launched on its own) has a box in each.
    std::map<std::string, std::vector<size_t>> kernels_of;
    for (size_t i = 0; i < kernels.size(); i++)
        for (const std::string &f : kernels[i].funcs)
            kernels_of[f].push_back(i);
    const std::set<std::string> input_set(inputs.begin(), inputs.end());
    auto id = [](const std::string &kind, const std::string &name) {
        return dot_string(kind + ":" + name);
    };
    auto node = [&](const std::string &f, size_t k) {
        return id("func", f + "@" + std::to_string(k));
    };
    // The Func a buffer holds: itself, or a Tuple element's Func (am.0, am.1: am).
    auto func_of_buffer = [](const std::string &b) { return parse_storage_name(b).func; };
    // Funcs the kernels read from device memory that no kernel computes: computed on the host.
    std::set<std::string> on_host;
    for (const KernelReport &k : kernels)
        for (const BufferReport &b : k.buffers) {
            const std::string g = func_of_buffer(b.name);
            if (!kernels_of.count(g) && !input_set.count(b.name) && calls.count(g))
                on_host.insert(g);
        }
    // The Funcs and inputs a Func reads, through the Funcs inlined into it.
    std::function<void(const std::string &, std::set<std::string> &, std::set<std::string> &)>
        sources =
            [&](const std::string &f, std::set<std::string> &out, std::set<std::string> &seen) {
                auto it = calls.find(f);
                if (it == calls.end()) return;
                for (const std::string &g : it->second) {
                    if (!seen.insert(g).second) continue;
                    if (g == f) continue;
                    if (kernels_of.count(g) || input_set.count(g) || on_host.count(g)) {
                        out.insert(g);
                    } else {
                        sources(g, out, seen);
                    }
                }
            };
    // The bytes kernel k reads of Func or input g (all of a Tuple's elements).
    auto read_bytes = [&](size_t k, const std::string &g) {
        int64_t bytes = 0;
        for (const BufferReport &b : kernels[k].buffers)
            if (b.name == g || func_of_buffer(b.name) == g) bytes += b.moved_read;
        return bytes;
    };
    std::ostringstream s;
    s << "digraph dataflow {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=10];\n"
      << "  label=" << dot_string(pipeline + ": " + summary()) << ";\n";
    for (const std::string &in : inputs) {
        int64_t bytes = 0;
        for (const KernelReport &k : kernels)
            for (const BufferReport &b : k.buffers)
                if (b.name == in) bytes = b.bytes;
        // (The size of an input no kernel reads is not counted.)
        s << "  " << id("in", in) << " [shape=cylinder, label="
          << dot_string(in + (bytes ? "\n" + bytes_text(bytes) : std::string())) << "];\n";
    }
    // A Func computed on the host, and what it reads there (not device-memory traffic).
    for (const std::string &h : on_host) {
        s << "  " << id("host", h) << " [style=dashed, label=" << dot_string(h + "\n(on the host)")
          << "];\n";
        std::set<std::string> from, seen;
        sources(h, from, seen);
        for (const std::string &g : from)
            s << "  "
              << (kernels_of.count(g) ? node(g, kernels_of.at(g).front())
                                      : id(on_host.count(g) ? "host" : "in", g))
              << " -> " << id("host", h) << " [style=dotted];\n";
    }
    for (size_t i = 0; i < kernels.size(); i++) {
        const KernelReport &k = kernels[i];
        s << "  subgraph " << dot_string("cluster_" + std::to_string(i))
          << " {\n    label=" << dot_string(k.name + "\nmoves " + bytes_text(k.moved_bytes()))
          << ";\n";
        for (const std::string &f : k.funcs) {
            const bool again = kernels_of.at(f).front() != i;
            s << "    " << node(f, i) << " [label=" << dot_string(f + (again ? " (again)" : ""))
              << "];\n";
        }
        s << "  }\n";
    }
    std::set<std::string> outputs_drawn;
    for (size_t i = 0; i < kernels.size(); i++) {
        std::set<std::string> labelled;
        // An edge into f in kernel i from g: on chip within the kernel, else through device
        // memory (a buffer read by several Funcs of the kernel: its bytes on the first edge).
        auto edge = [&](const std::string &g, const std::string &source, const std::string &f) {
            const std::vector<size_t> *in_kernels =
                kernels_of.count(g) ? &kernels_of.at(g) : nullptr;
            if (in_kernels && std::count(in_kernels->begin(), in_kernels->end(), i)) {
                s << "  " << node(g, i) << " -> " << node(f, i)
                  << " [label=\"on chip\", color=\"darkgreen\", style=dashed];\n";
                return;
            }
            // A kernel that reads nothing of g (the kernel of a Func's pure definition, where
            // only an update reads g) has no edge from it.
            if (read_bytes(i, g) == 0) return;
            const bool first = labelled.insert(g).second;
            s << "  " << source << " -> " << node(f, i)
              << " [label=" << dot_string(first ? bytes_text(read_bytes(i, g)) : "") << ", color=\""
              << (input_set.count(g) ? "black" : "red") << "\"];\n";
        };
        for (const std::string &f : kernels[i].funcs) {
            std::set<std::string> from, seen;
            sources(f, from, seen);
            for (const std::string &g : from) {
                std::string source = id(on_host.count(g) ? "host" : "in", g);
                if (!input_set.count(g) && !on_host.count(g)) {
                    // From the last kernel before this one that computes g, else its first.
                    const std::vector<size_t> &ks = kernels_of.at(g);
                    size_t at = ks.front();
                    for (size_t k : ks)
                        if (k < i) at = k;
                    source = node(g, at);
                }
                edge(g, source, f);
            }
            // An update in a later kernel continues from the Func's earlier kernel. (The same
            // kernel launched again, per iteration of a host loop, computes another part.)
            const std::vector<size_t> &ks = kernels_of.at(f);
            for (size_t k = 0; k + 1 < ks.size(); k++) {
                if (ks[k + 1] != i || kernels[ks[k]].name == kernels[i].name) continue;
                const int64_t bytes = read_bytes(i, f);
                s << "  " << node(f, ks[k]) << " -> " << node(f, i)
                  << " [label=" << dot_string(bytes ? bytes_text(bytes) : "")
                  << ", color=\"red\"];\n";
            }
        }
        for (const BufferReport &b : kernels[i].buffers) {
            if (b.role != BufferReport::Output || !b.moved_written) continue;
            if (outputs_drawn.insert(b.name).second) {
                s << "  " << id("out", b.name)
                  << " [shape=cylinder, label=" << dot_string(b.name + "\n" + bytes_text(b.bytes))
                  << "];\n";
            }
            const std::string f = func_of_buffer(b.name);
            if (!std::count(kernels[i].funcs.begin(), kernels[i].funcs.end(), f)) continue;
            s << "  " << node(f, i) << " -> " << id("out", b.name)
              << " [label=" << dot_string(bytes_text(b.moved_written)) << "];\n";
        }
    }
    s << "}\n";
    return s.str();
}

bool write_report_picture(const DataflowReport &report, const std::string &path,
                          const std::string &svg_path) {
    {
        std::ofstream out(path);
        out << report.to_dot();
        out.close();
        if (!out)
            runtime_error_report << "The dataflow report's picture: cannot write " << path << ".";
    }
    // dot -Tsvg PATH -o SVG_PATH, run without a shell (the paths may hold any character), its
    // messages dropped; false where dot is not on the PATH or fails.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> words = {"dot", "-Tsvg", path, "-o", svg_path};
    std::vector<char *> argv;
    for (std::string &w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, "dot", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return false;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace aicf
