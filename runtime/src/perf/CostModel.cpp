//===- CostModel.cpp - a routed launch's predicted time on a GPU ----------===//

#include "dlc/runtime/perf/CostModel.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dlc::rt::perf {

const std::vector<std::string> &CostParams::names() {
  static const std::vector<std::string> n = {
      "launch_overhead_s", "generated_mem_eff", "reduction_mem_eff", "hand_written_mem_eff",
      "library_mem_eff",   "tensor_max_eff",    "cuda_core_max_eff", "half_flops"};
  return n;
}

std::vector<double> CostParams::values() const {
  return {launchOverhead, generatedMemEff, reductionMemEff, handWrittenMemEff,
          libraryMemEff,  tensorMaxEff,    cudaCoreMaxEff,  halfFlops};
}

void CostParams::setValues(const std::vector<double> &v) {
  double *fields[] = {&launchOverhead, &generatedMemEff, &reductionMemEff, &handWrittenMemEff,
                      &libraryMemEff,  &tensorMaxEff,    &cudaCoreMaxEff,  &halfFlops};
  for (size_t i = 0; i < v.size() && i < std::size(fields); ++i)
    *fields[i] = v[i];
}

std::vector<LaunchCost> planLaunchCosts(const Plan &plan) {
  std::vector<cuda::DeviceLaunch> device = cuda::planDeviceLaunches(plan);
  std::vector<int64_t> launchOf(plan.kernels.size(), 0);
  for (size_t l = 0; l < device.size(); ++l)
    for (size_t k : device[l].launch.kernels)
      launchOf[k] = static_cast<int64_t>(l);
  // Bytes per launch by launchMemoryBytes' rule (inputs read once, values
  // that leave the launch written once), which only gives the step's total.
  std::vector<std::vector<int64_t>> readers(plan.buffers.size());
  for (size_t i = 0; i < plan.kernels.size(); ++i)
    for (int32_t id : plan.kernels[i].inputs)
      readers[id].push_back(launchOf[i]);
  std::vector<int64_t> waitAt = allReduceWaitPoints(plan);

  std::vector<LaunchCost> costs;
  costs.reserve(device.size());
  for (size_t l = 0; l < device.size(); ++l) {
    const cuda::DeviceLaunch &d = device[l];
    LaunchCost c;
    c.index = static_cast<int64_t>(l);
    c.kind = d.launch.kind;
    c.path = d.path;
    c.label = codegen::launchLabel(d.launch);
    std::vector<int32_t> produced, read;
    for (size_t k : d.launch.kernels) {
      const PlanKernel &kernel = plan.kernels[k];
      c.reduction |= d.path == "generated" && kernel.opClass == OpClass::kReduction;
      int64_t macs = kernelMacs(plan, kernel);
      if (macs > 0) {
        c.flops += 2.0 * static_cast<double>(macs);
        c.contractionType = dtypeName(plan.buffers[kernel.inputs[0]].dtype);
      }
      for (int32_t id : kernel.inputs)
        if (std::find(produced.begin(), produced.end(), id) == produced.end() &&
            std::find(read.begin(), read.end(), id) == read.end())
          read.push_back(id);
      for (int32_t id : kernel.outputs)
        produced.push_back(id);
    }
    for (int32_t id : read)
      c.bytes += static_cast<double>(plan.buffers[id].bytes);
    for (int32_t id : produced) {
      const PlanBuffer &b = plan.buffers[id];
      bool leaves = b.role != BufferRole::kTemporary ||
                    std::any_of(readers[id].begin(), readers[id].end(),
                                [&](int64_t r) { return r != static_cast<int64_t>(l); });
      if (leaves)
        c.bytes += static_cast<double>(b.bytes);
    }
    if (d.path == "nccl") {
      const PlanKernel &kernel = plan.kernels[d.launch.kernels.front()];
      c.allReduceBytes = 0;
      for (int32_t id : kernel.inputs)
        c.allReduceBytes += static_cast<double>(plan.buffers[id].bytes);
      int64_t wait = waitAt[d.launch.kernels.front()];
      c.waitAt = wait >= static_cast<int64_t>(plan.kernels.size())
                     ? static_cast<int64_t>(device.size())
                     : launchOf[wait];
    }
    costs.push_back(std::move(c));
  }
  return costs;
}

double contractionPeak(const DeviceSpec &device, const std::string &type, bool tf32) {
  if (type == "f16")
    return device.fp16Flops;
  if (type == "bf16")
    return device.bf16Flops;
  if (tf32 && device.tf32Flops > 0)
    return device.tf32Flops;
  return device.fp32Flops;
}

double predictSeconds(const LaunchCost &launch, const DeviceSpec &device,
                      const CostParams &params, bool tf32) {
  if (launch.allReduceBytes >= 0)
    return 0;
  // libraryMemEff is batch norm's; a GEMM's or convolution's operands
  // stream as a generated kernel's do.
  double memEff = launch.reduction                ? params.reductionMemEff
                  : launch.path == "generated"    ? params.generatedMemEff
                  : launch.path == "hand-written" ? params.handWrittenMemEff
                  : launch.flops > 0              ? params.generatedMemEff
                                                  : params.libraryMemEff;
  double memory = launch.bytes / (device.memoryBandwidth * memEff);
  double compute = 0;
  if (launch.flops > 0) {
    double peak = contractionPeak(device, launch.contractionType, tf32);
    // No tensor unit for its type (bf16 on Volta): the CUDA cores.
    if (peak <= 0)
      peak = device.fp32Flops;
    bool tensor = peak != device.fp32Flops;
    double ceiling = tensor ? params.tensorMaxEff : params.cudaCoreMaxEff;
    double eff = ceiling * launch.flops / (launch.flops + params.halfFlops);
    compute = launch.flops / (peak * eff);
  }
  return params.launchOverhead + std::max(memory, compute);
}

std::vector<SimLaunch> simLaunches(const std::vector<LaunchCost> &launches,
                                   const DeviceSpec &device, const CostParams &params,
                                   bool tf32, double scale) {
  std::vector<SimLaunch> sim;
  sim.reserve(launches.size());
  for (const LaunchCost &l : launches) {
    SimLaunch s;
    if (l.allReduceBytes >= 0) {
      s.allReduceBytes = l.allReduceBytes;
      s.waitAt = l.waitAt;
    } else {
      s.seconds = predictSeconds(l, device, params, tf32) * scale;
    }
    sim.push_back(s);
  }
  return sim;
}

Status readCostParams(const std::string &path, CostParams &params) {
  std::ifstream in(path);
  if (!in)
    return Status(StatusCode::kInvalidArgument, "cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  std::vector<double> values = params.values();
  for (size_t i = 0; i < CostParams::names().size(); ++i) {
    std::string key = "\"" + CostParams::names()[i] + "\"";
    size_t at = s.find(key);
    if (at == std::string::npos)
      continue;
    size_t colon = s.find(':', at + key.size());
    if (colon == std::string::npos)
      return Status(StatusCode::kInvalidArgument, path + ": no value for " + key);
    char *end = nullptr;
    double v = std::strtod(s.c_str() + colon + 1, &end);
    if (end == s.c_str() + colon + 1 || !(v > 0))
      return Status(StatusCode::kInvalidArgument,
                    path + ": " + key + " must be a positive number");
    values[i] = v;
  }
  params.setValues(values);
  return Status::ok();
}

} // namespace dlc::rt::perf
