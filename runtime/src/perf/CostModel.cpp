//===- CostModel.cpp - a routed launch's predicted time on a GPU ----------===//

#include "dlc/runtime/perf/CostModel.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/PlanLaunches.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/RowStride.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dlc::rt::perf {

const std::vector<std::string> &CostParams::names() {
  static const std::vector<std::string> n = {
      "launch_overhead_s", "stream_mem_eff", "reduction_mem_eff", "norm_mem_eff",
      "legacy_norm_mem_eff", "gather_mem_eff", "tensor_max_eff", "cuda_core_max_eff",
      "misaligned_tensor_eff", "contraction_latency_s", "dram_latency_s",
      "row_pass_latency_s", "profile_event_overhead_s", "conv_dgrad_tensor_rel",
      "conv_wgrad_tensor_rel", "conv_dgrad_cuda_core_rel", "conv_wgrad_cuda_core_rel"};
  return n;
}

std::vector<double> CostParams::values() const {
  return {launchOverhead,      streamMemEff,       reductionMemEff, normMemEff,
          legacyNormMemEff,    gatherMemEff,       tensorMaxEff,    cudaCoreMaxEff,
          misalignedTensorEff, contractionLatency, dramLatency,     rowPassLatency,
          profileEventOverhead, convDgradTensorRel, convWgradTensorRel, convDgradCudaCoreRel,
          convWgradCudaCoreRel};
}

void CostParams::setValues(const std::vector<double> &v) {
  double *fields[] = {&launchOverhead,      &streamMemEff,       &reductionMemEff,
                      &normMemEff,          &legacyNormMemEff,   &gatherMemEff,
                      &tensorMaxEff,        &cudaCoreMaxEff,     &misalignedTensorEff,
                      &contractionLatency,  &dramLatency,        &rowPassLatency,
                      &profileEventOverhead, &convDgradTensorRel,  &convWgradTensorRel,
                      &convDgradCudaCoreRel, &convWgradCudaCoreRel};
  for (size_t i = 0; i < v.size() && i < std::size(fields); ++i)
    *fields[i] = v[i];
}

const char *accessName(Access access) {
  switch (access) {
  case Access::kStream: return "stream";
  case Access::kReduction: return "reduction";
  case Access::kNormalization: return "normalization";
  case Access::kGather: return "gather";
  case Access::kContraction: return "contraction";
  }
  return "stream";
}

namespace {

/// The launch's access pattern: the most constraining of its kernels' op
/// classes (a fused group's element-wise ops ride along its reduction or
/// normalization).
Access accessOf(const Plan &plan, const cuda::DeviceLaunch &d) {
  Access access = Access::kStream;
  for (size_t k : d.launch.kernels) {
    OpClass c = plan.kernels[k].opClass;
    if (c == OpClass::kContraction)
      return Access::kContraction;
    if (c == OpClass::kRowNormalization || c == OpClass::kBatchNormalization)
      access = Access::kNormalization;
    else if (c == OpClass::kOpaque && access != Access::kNormalization)
      access = Access::kGather;
    else if (c == OpClass::kReduction && access == Access::kStream)
      access = Access::kReduction;

  }
  return access;
}

ConvPass convPassOf(OpId op) {
  return op == OpId::kConv2d                 ? ConvPass::kForward
         : op == OpId::kConv2dBackwardData   ? ConvPass::kBackwardData
         : op == OpId::kConv2dBackwardFilter ? ConvPass::kBackwardFilter
                                             : ConvPass::kNone;
}

} // namespace

std::vector<LaunchCost> planLaunchCosts(const Plan &plan) {
  std::vector<cuda::DeviceLaunch> device = cuda::planDeviceLaunches(plan);
  std::vector<Launch> launches = cuda::launchesOf(device);
  std::vector<int64_t> launchOf(plan.kernels.size(), 0);
  for (size_t l = 0; l < device.size(); ++l)
    for (size_t k : device[l].launch.kernels)
      launchOf[k] = static_cast<int64_t>(l);
  // Bytes per launch by launchMemoryBytes' rule (inputs read once, values
  // that leave the launch written once), which only gives the step's total.
  std::vector<std::vector<int64_t>> readers(plan.buffers.size());
  for (size_t i = 0; i < plan.kernels.size(); ++i)
    for (int32_t id : plan.kernels[i].inputs)
      readers[storageOwner(plan, id)].push_back(launchOf[i]); // views: one value
  std::vector<int64_t> waitAt = allReduceWaitPoints(plan);

  std::vector<LaunchCost> costs;
  costs.reserve(device.size());
  for (size_t l = 0; l < device.size(); ++l) {
    const cuda::DeviceLaunch &d = device[l];
    LaunchCost c;
    c.index = static_cast<int64_t>(l);
    c.kind = d.launch.kind;
    c.path = cuda::devicePathName(d.path);
    c.label = launchLabel(d.launch);
    c.access = accessOf(plan, d);
    c.blocks = d.blocks;
    c.threadsPerBlock = d.threadsPerBlock;
    std::vector<int32_t> produced, read;
    for (size_t k : d.launch.kernels) {
      const PlanKernel &kernel = plan.kernels[k];
      int64_t macs = kernelMacs(plan, kernel);
      if (macs > 0) {
        c.flops += 2.0 * static_cast<double>(macs);
        c.contractionType = dtypeName(plan.buffers[kernel.inputs[0]].dtype);
        c.convPass = convPassOf(kernel.id);
        c.outputElements += static_cast<double>(plan.buffers[kernel.outputs[0]].numElements());
        c.nchwLibraryContraction = cuda::isCudnn(d.path) && kernelLayout(kernel) == "NCHW";
        // cuDNN's NHWC convolutions read channels-last rows the same way
        // (ResNet's stem: 3 channels, 6-byte rows).
        if (d.path == cuda::DevicePath::kCublasLt || (cuda::isCudnn(d.path) && kernelLayout(kernel) == "NHWC"))
          for (int32_t id : {kernel.inputs[0], kernel.inputs[1], kernel.outputs[0]}) {
            // A row's start: its padded stride where the plan padded it
            // (RowStride.h), else the last dimension.
            const PlanBuffer &b = plan.buffers[id];
            int64_t row = leadingDimension(b) * dtypeBytes(b.dtype);
            c.operandAlignment = std::min(
                c.operandAlignment, static_cast<double>(std::min<int64_t>(row & -row, 16)));
          }
      }
      // Statistics along the last axis (OpKinds.h): one row per line of it.
      if (kernel.opClass == OpClass::kRowNormalization && d.blocks > 0) {
        const PlanBuffer &x = plan.buffers[kernel.inputs[0]];
        if (!x.shape.empty() && x.shape.back() > 0)
          c.rows = std::max(c.rows, static_cast<double>(x.numElements() / x.shape.back()));
      }
      for (int32_t id : kernel.inputs)
        if (std::find(produced.begin(), produced.end(), id) == produced.end() &&
            std::find(read.begin(), read.end(), id) == read.end())
          read.push_back(id);
      for (int32_t id : kernel.outputs)
        produced.push_back(id);
    }
    c.legacyLibraryNorm = cuda::isCudnn(d.path) && c.access == Access::kNormalization &&
                          !cuda::fusedBatchNormFor(plan, d.launch, launches).isOk();
    // The bytes a pass over a buffer costs. cuDNN's plain batch-norm calls
    // take about as long on half-precision data as on float (the H100,
    // ResNet-50 b256 NCHW: backward 33.8 / 42.0 ms, forward 15.1 / 16.3):
    // their passes count every element as at least 4 bytes.
    auto passCost = [&](const PlanBuffer &b) {
      double bytes = static_cast<double>(b.bytes);
      int64_t element = dtypeBytes(b.dtype);
      return c.legacyLibraryNorm && element > 0 && element < 4 ? bytes * 4 / element : bytes;
    };
    // A normalization reads its full-size inputs once for the statistics
    // and again for the map (per-channel or per-row values stay cached).
    int64_t largest = 0;
    for (int32_t id : read)
      largest = std::max(largest, plan.buffers[id].numElements());
    for (int32_t id : read) {
      const PlanBuffer &b = plan.buffers[id];
      c.bytes += static_cast<double>(b.bytes);
      c.bytesPerThread += static_cast<double>(b.bytes) / std::max<int64_t>(b.numElements(), 1);
      bool reread = c.access == Access::kNormalization && b.numElements() == largest;
      c.passBytes += passCost(b) * (reread ? 2 : 1);
    }
    for (int32_t id : produced) {
      const PlanBuffer &b = plan.buffers[id];
      bool leaves = b.role != BufferRole::kTemporary ||
                    std::any_of(readers[storageOwner(plan, id)].begin(),
                                readers[storageOwner(plan, id)].end(),
                                [&](int64_t r) { return r != static_cast<int64_t>(l); });
      if (leaves) {
        c.bytes += static_cast<double>(b.bytes);
        c.passBytes += passCost(b);
      }
    }
    if (d.path == cuda::DevicePath::kCollective) {
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

double waveEfficiency(const LaunchCost &launch, const DeviceSpec &device) {
  if (launch.flops <= 0 || launch.outputElements <= 0 || device.sms <= 0)
    return 1;
  // Output tiles of 128 x 128 (cuBLAS's and cuDNN's usual CTA tile, NVIDIA's
  // Matrix Multiplication Background guide, "Wave Quantization"); fewer
  // tiles than multiprocessors split the reduction (split-K) into at most
  // one slice of 256 products a tile per multiprocessor.
  constexpr double kTile = 128 * 128, kMinSlice = 256;
  double tiles = std::ceil(launch.outputElements / kTile);
  double depth = launch.flops / 2 / launch.outputElements;
  double sms = static_cast<double>(device.sms);
  double splits = tiles < sms ? std::clamp(std::floor(sms / tiles), 1.0,
                                           std::max(1.0, std::floor(depth / kMinSlice)))
                              : 1;
  double units = tiles * splits;
  return units / (std::ceil(units / sms) * sms);
}

double predictSeconds(const LaunchCost &launch, const DeviceSpec &device,
                      const CostParams &params, bool tf32) {
  if (launch.allReduceBytes >= 0)
    return 0;
  double memEff = launch.legacyLibraryNorm                  ? params.legacyNormMemEff
                  : launch.access == Access::kReduction       ? params.reductionMemEff
                  : launch.access == Access::kNormalization ? params.normMemEff
                  : launch.access == Access::kGather        ? params.gatherMemEff
                                                            : params.streamMemEff;
  double bandwidth = device.memoryBandwidth * memEff;
  // Little's law: the loads a grid keeps in flight bound its bandwidth. A
  // library picks its own grid (0 here), sized to fill the GPU.
  if (launch.blocks > 0 && launch.threadsPerBlock > 0 && launch.bytesPerThread > 0 &&
      device.sms > 0) {
    double resident = std::min<double>(
        static_cast<double>(std::min(launch.blocks, device.sms * cuda::kBlocksPerMultiprocessor)) *
            static_cast<double>(launch.threadsPerBlock),
        static_cast<double>(device.sms * device.threadsPerSm));
    bandwidth = std::min(bandwidth, resident * launch.bytesPerThread / params.dramLatency);
  }
  double passBytes = std::max(launch.passBytes, launch.bytes);
  double memory = passBytes / bandwidth;
  // A block per row: rows wait for their passes (statistics, then the map)
  // behind the blocks the multiprocessors hold at once.
  double rowTime = 0;
  if (launch.rows > 0 && launch.blocks > 0 && launch.threadsPerBlock > 0 && device.sms > 0) {
    double perSm = std::min<double>(
        cuda::kBlocksPerMultiprocessor,
        std::max<int64_t>(1, device.threadsPerSm / launch.threadsPerBlock));
    double concurrent = std::min<double>(static_cast<double>(launch.blocks),
                                         static_cast<double>(device.sms) * perSm);
    rowTime = std::ceil(launch.rows / concurrent) * 2 * params.rowPassLatency;
  }
  double compute = 0;
  if (launch.flops > 0) {
    double peak = contractionPeak(device, launch.contractionType, tf32);
    // No tensor unit for its type (bf16 on Volta): the CUDA cores.
    if (peak <= 0)
      peak = device.fp32Flops;
    bool tensor = peak != device.fp32Flops;
    double ceiling = tensor ? params.tensorMaxEff : params.cudaCoreMaxEff;
    if (launch.convPass == ConvPass::kBackwardData)
      ceiling *= tensor ? params.convDgradTensorRel : params.convDgradCudaCoreRel;
    else if (launch.convPass == ConvPass::kBackwardFilter)
      ceiling *= tensor ? params.convWgradTensorRel : params.convWgradCudaCoreRel;
    if (tensor && launch.operandAlignment < 16)
      ceiling = std::min(ceiling, params.misalignedTensorEff * launch.operandAlignment / 2);
    compute = launch.flops / (peak * ceiling * waveEfficiency(launch, device)) +
              params.contractionLatency;
    // cuDNN's layout conversions run before and after the tensor-core
    // kernel, at streaming bandwidth: a read and a write of each operand.
    if (tensor && launch.nchwLibraryContraction)
      compute += 2 * launch.bytes / (device.memoryBandwidth * params.streamMemEff);
  }
  return params.launchOverhead + std::max({memory, compute, rowTime});
}

double profiledSeconds(const LaunchCost &launch, const DeviceSpec &device,
                       const CostParams &params, bool tf32) {
  if (launch.allReduceBytes >= 0)
    return 0;
  return predictSeconds(launch, device, params, tf32) + params.profileEventOverhead;
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
