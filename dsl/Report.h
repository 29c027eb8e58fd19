#ifndef AICF_REPORT_H
#define AICF_REPORT_H

// The dataflow report: for a pipeline, a GPU target and concrete sizes, what each kernel moves
// through device memory against the compulsory minimum, counted from the kernel IR without
// running anything (Pipeline::report builds one).
//
// Two measures of a kernel's traffic:
// - requested: the bytes its loads and stores ask for, summed over the active lanes (a tile
//   that 32 blocks read counts 32 times). It is what the simulator counts, and the traffic
//   between the SMs and the L2 cache.
// - moved: per buffer, the span of bytes its loads reach plus the span its stores reach
//   (each at most the buffer's size and the bytes requested). It is the device-memory
//   traffic when the caches keep every reuse within the kernel; the roofline uses it.
// The compulsory bytes are those no schedule can avoid: each input of the pipeline read once
// and each output written once. Intermediates that go through device memory are what a
// dataflow schedule removes.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace aicf {

// The peak rates of a GPU that the roofline uses: dense (no sparsity), from the vendor's
// datasheet named in `source`.
struct GPUPeaks {
    std::string name;
    double memory_bytes_per_s = 0;
    double fp32_flops_per_s = 0;   // float arithmetic on the CUDA cores
    double tensor_flops_per_s = 0; // bf16 / f16 mma with float sums
    double tf32_flops_per_s = 0;   // TF32 mma
    std::string source;
};

// A100 (SXM, 80 GB), H100 (SXM5) and H200 (SXM).
const std::vector<GPUPeaks> &report_gpus();

// The time bound of a kernel on one GPU (no schedule of it runs faster): the largest of its
// moved bytes over the memory bandwidth, its tensor-core flops over the tensor-core rate, and
// its other flops over the float rate. A pipeline's bound is its kernels' bounds summed.
struct RooflineBound {
    std::string gpu;
    double seconds = 0;
    double memory_seconds = 0, compute_seconds = 0;
    bool memory_bound() const { return memory_seconds >= compute_seconds; }
};

struct BufferReport {
    enum Role { Input, Output, Intermediate };
    std::string name;
    Role role = Intermediate;
    int64_t bytes = 0; // the buffer's size
    int64_t requested_read = 0, requested_written = 0;
    int64_t moved_read = 0, moved_written = 0;
};

struct KernelReport {
    std::string name;
    std::vector<std::string> funcs; // computed in it, outermost first
    std::array<int64_t, 3> grid{{1, 1, 1}};
    std::array<int, 3> block{{1, 1, 1}};
    int64_t shared_bytes = 0;
    // From ptxas for the target's architecture; -1 where the CUDA toolkit is not present.
    int registers = -1, spill_bytes = -1;
    std::vector<BufferReport> buffers;
    int64_t flops = 0;        // float operations on the CUDA cores, per lane
    int64_t tensor_flops = 0; // 2 m n k per mma
    bool tf32 = false;        // its mma takes float inputs (TF32)
    // False where a count depends on data: the counts are then an upper bound.
    bool exact = true;
    std::vector<RooflineBound> roofline; // one per report_gpus()

    int64_t requested_bytes() const;
    int64_t moved_bytes() const;
    // The moved bytes of the pipeline's inputs and outputs (none of its intermediates).
    int64_t compulsory_bytes() const;
    // Flops (both kinds) per moved byte.
    double intensity() const;
};

class DataflowReport {
public:
    std::string pipeline; // the (first) output's name
    std::string target;
    std::vector<int> sizes; // of the outputs
    // The extents of the outputs of another rank than the sizes, by name.
    std::map<std::string, std::vector<int>> other_output_sizes;
    std::vector<KernelReport> kernels; // in launch order
    // Funcs the schedule computes in host code: their memory traffic is not device traffic
    // and is in none of the counts (nor are the inputs only they read).
    std::vector<std::string> host_funcs;
    // Each input read once, each output written once (those the kernels reach).
    int64_t compulsory_bytes = 0;
    std::vector<RooflineBound> roofline; // the kernels' bounds summed, per GPU
    // The same algorithm with every Func its own kernel (a plain GPU schedule each), when
    // the report was asked to derive it.
    std::shared_ptr<DataflowReport> baseline;
    // The algorithm's dataflow: which Funcs each Func and kernel reads (by name), and the
    // pipeline's inputs, for the picture.
    std::map<std::string, std::vector<std::string>> calls;
    std::vector<std::string> inputs;

    int64_t requested_bytes() const;
    int64_t moved_bytes() const;
    int64_t flops() const;
    int64_t tensor_flops() const;

    // "7 kernels moving 1.23 GB -> 2 kernels moving 402.65 MB (3.1x less)"; without a
    // baseline, only this pipeline's part.
    std::string summary() const;
    // A table per kernel, the totals, and the summary.
    std::string to_text() const;
    // JSON, as the README's "The dataflow report" section describes.
    std::string to_json() const;
    // A Graphviz picture: the Funcs of each kernel in a box, edges labelled with the bytes
    // they move through device memory, or "on chip".
    std::string to_dot() const;
};

// Sizes the report cannot find from the pipeline: the extents of each ImageParam (by name)
// and the value of each Param. Buffers the algorithm holds give their own shapes; the
// outputs have the report's sizes.
struct ReportArguments {
    std::map<std::string, std::vector<int>> buffers;
    std::map<std::string, double> scalars;
};

// Writes report.to_dot() to `path` and, when Graphviz's `dot` is on the PATH, renders it
// to `svg_path` (dot run without a shell: the paths may hold any character). Returns whether
// the SVG was written; raises RuntimeError naming `path` when it cannot be written.
bool write_report_picture(const DataflowReport &report, const std::string &path,
                          const std::string &svg_path);

} // namespace aicf

#endif
