#ifndef AICF_APPS_MLP_REPORT_H
#define AICF_APPS_MLP_REPORT_H

// The dataflow reports (dsl/Report.h) of the MLP block's schedules (MlpBlock.h) at a size,
// counted from their kernels without running them (the weights are ImageParams, so nothing
// of the block's size is allocated), and a table comparing them.

#include "MlpBlock.h"
#include "dsl/aicf.h"

#include <cstdio>
#include <string>
#include <vector>

namespace aicf_apps {

struct MlpReports {
    int tokens = 0, d = 0, hidden = 0;
    aicf::DataflowReport by_operator, fused_epilogues, dataflow;
};

// With `baseline`, the dataflow schedule's report also derives the operator-by-operator
// baseline from the algorithm (every Func its own kernel).
inline MlpReports mlp_reports(int tokens, int d, int hidden, const aicf::Target &target,
                              bool baseline = false) {
    const aicf::ImageParam x = mlp_input_param();
    const MlpWeightsOf<aicf::ImageParam> w = mlp_weight_params();
    const aicf::ReportArguments args = mlp_report_arguments(tokens, d, hidden);
    const std::vector<int> sizes = {d, tokens};
    MlpReports r;
    r.tokens = tokens, r.d = d, r.hidden = hidden;
    r.by_operator =
        mlp_block_by_operator(x, w, d, hidden, "mlp").report(sizes, target, args, false);
    r.fused_epilogues =
        mlp_block_fused_epilogues(x, w, d, hidden, "mlp").report(sizes, target, args, false);
    r.dataflow = mlp_block_dataflow(x, w, d, hidden, "mlp").report(sizes, target, args, baseline);
    return r;
}

inline std::string mb(int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", double(bytes) / 1e6);
    return text;
}

// One row per size and schedule: kernels, bytes requested and moved, moved over compulsory,
// and the roofline bound on each GPU.
inline std::string mlp_report_table(const std::vector<MlpReports> &sizes) {
    std::string s = "| tokens x d x hidden | schedule | kernels | requested MB | moved MB | "
                    "x compulsory |";
    for (const aicf::GPUPeaks &g : aicf::report_gpus())
        s += " " + g.name + " bound |";
    s += "\n|---|---|---|---|---|---|";
    for (size_t i = 0; i < aicf::report_gpus().size(); i++)
        s += "---|";
    s += "\n";
    for (const MlpReports &m : sizes) {
        const std::string shape = std::to_string(m.tokens) + " x " + std::to_string(m.d) + " x " +
                                  std::to_string(m.hidden);
        for (auto [name, r] : {std::make_pair("one kernel per operator", &m.by_operator),
                               std::make_pair("fused epilogues", &m.fused_epilogues),
                               std::make_pair("dataflow (LN in prologue)", &m.dataflow)}) {
            char row[256];
            std::snprintf(row, sizeof(row), "| %s | %s | %zu | %s | %s | %.2f |", shape.c_str(),
                          name, r->kernels.size(), mb(r->requested_bytes()).c_str(),
                          mb(r->moved_bytes()).c_str(),
                          double(r->moved_bytes()) / double(r->compulsory_bytes));
            s += row;
            for (const aicf::RooflineBound &b : r->roofline) {
                std::snprintf(row, sizeof(row), " %.3f ms %s |", b.seconds * 1e3,
                              b.memory_bound() ? "mem" : "math");
                s += row;
            }
            s += "\n";
        }
    }
    return s;
}

} // namespace aicf_apps

#endif
