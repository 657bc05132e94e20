//===- KernelDump.cpp - generated kernels as files ------------------------===//

#include "dlc/runtime/codegen/KernelDump.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace dlc::rt::codegen {

std::string kernelBindings(const Plan &plan, const GeneratedKernel &g) {
  std::string text = "// plan " + plan.model + " (batch " + std::to_string(plan.batch) +
                     ", fusion " + plan.fusion + "), launch #" + std::to_string(g.launch) +
                     ", plan kernels";
  for (size_t k : g.kernels)
    text += " #" + std::to_string(k);
  text += "\n";
  for (size_t i = 0; i < g.args.size(); ++i)
    text += "//   argument " + std::to_string(i) + ": '" + plan.buffers[g.args[i]].name + "'\n";
  for (const OptimizerSegment &s : g.segments)
    text += "//   segment: " + std::string(s.adamw ? "adamw" : "sgd") + " '" +
            plan.buffers[s.param].name + "', " + std::to_string(s.elements) + " elements\n";
  for (const CastSegment &s : g.castSegments)
    text += "//   segment: cast '" + plan.buffers[s.input].name + "' to " + dtypeName(s.to) +
            " '" + plan.buffers[s.output].name + "', " + std::to_string(s.elements) +
            " elements\n";
  return text + "\n";
}

Status writeKernelSources(const Plan &plan, const std::vector<GeneratedKernel> &kernels,
                          const std::string &dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir))
    return Status(StatusCode::kInvalidArgument,
                  "cannot create directory " + dir +
                      (error ? " (" + error.message() + ")" : std::string(" (a file is there)")));
  for (const GeneratedKernel &g : kernels) {
    char index[16];
    std::snprintf(index, sizeof(index), "%04zu", g.launch);
    std::string file = dir + "/" + index + "-" + g.name +
                       (g.target == KernelTarget::kHost ? ".cpp" : ".cu");
    std::ofstream out(file);
    out << kernelBindings(plan, g) << g.source;
    if (!out)
      return Status(StatusCode::kInvalidArgument, "cannot write " + file);
  }
  return Status::ok();
}

} // namespace dlc::rt::codegen
