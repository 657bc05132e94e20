//===- HostKernelCheck.cpp - each generated launch against the reference --===//
//
// A whole step of a large model on the reference backend takes minutes on
// a small host; checking each generated launch alone on random inputs takes
// the generated ops' time only, and names the launch that is wrong.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Half.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cpu/HostKernels.h"
#include "dlc/runtime/Parallel.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

namespace dlc::rt::cpu {

namespace {

bool isFloat(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

std::vector<float> widened(const unsigned char *bytes, const PlanBuffer &b) {
  std::vector<float> values(b.numElements());
  if (b.dtype == DType::kF32)
    std::memcpy(values.data(), bytes, values.size() * sizeof(float));
  else
    widenToFloat(bytes, b.dtype, values.data(), b.numElements());
  return values;
}

void fill(unsigned char *bytes, const PlanBuffer &b, const std::vector<float> &values) {
  if (b.dtype == DType::kF32)
    std::memcpy(bytes, values.data(), values.size() * sizeof(float));
  else
    roundFromFloat(values.data(), b.dtype, bytes, b.numElements());
}

/// compare_dumps.py's measure: max |have - want| / max |want| over the
/// finite values; equal elements (non-finite ones too) count as no error.
double relativeError(const std::vector<float> &have, const std::vector<float> &want) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isfinite(want[i]))
      scale = std::max(scale, std::fabs(double(want[i])));
    bool same = have[i] == want[i] || (std::isnan(have[i]) && std::isnan(want[i]));
    if (!same)
      diff = std::max(diff, std::isnan(have[i] - want[i]) ? INFINITY
                                                          : std::fabs(double(have[i]) - want[i]));
  }
  return diff / std::max(scale, 1e-12);
}

/// The buffers generated launch `g` writes.
std::vector<int32_t> writtenBy(const Plan &plan, const HostLaunch &h) {
  const codegen::GeneratedKernel &g = *h.kernel;
  std::set<int32_t> outputs;
  for (size_t k : h.launch.kernels)
    outputs.insert(plan.kernels[k].outputs.begin(), plan.kernels[k].outputs.end());
  std::vector<int32_t> written;
  for (int32_t id : g.args)
    if (outputs.count(id))
      written.push_back(id);
  for (const codegen::OptimizerSegment &s : g.segments)
    for (int32_t id : {s.newParam, s.newState1, s.newState2})
      if (id >= 0)
        written.push_back(id);
  for (const codegen::CastSegment &s : g.castSegments)
    written.push_back(s.output);
  return written;
}

} // namespace

StatusOr<std::vector<HostLaunchCheck>> checkHostLaunches(const Plan &plan, uint64_t seed,
                                                         const std::string &cacheDir,
                                                         int timedRuns) {
  auto created = CpuExecutor::create(plan, CpuExecutor::Options());
  if (!created.isOk())
    return created.status();
  CpuExecutor &reference = **created;
  auto host = HostKernels::create(plan, cacheDir);
  if (!host.isOk())
    return host.status();
  unsigned char *arena = reference.hostArena();
  (*host)->bind(plan, arena);
  ThreadPool pool(cpuThreadCount());
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<HostLaunchCheck> checks;
  for (size_t l = 0; l < (*host)->launches().size(); ++l) {
    const HostLaunch &h = (*host)->launches()[l];
    if (!h.kernel)
      continue;
    // Random operands: what the launch reads and no kernel of it writes
    // (a reshape's view shares its value's bytes, filled either way).
    std::set<int32_t> produced, statuses;
    for (size_t k : h.launch.kernels)
      produced.insert(plan.kernels[k].outputs.begin(), plan.kernels[k].outputs.end());
    for (const codegen::OptimizerSegment &s : h.kernel->segments)
      statuses.insert(s.lossScaleStatus);
    std::vector<int32_t> inputs;
    for (size_t k : h.launch.kernels)
      for (int32_t id : plan.kernels[k].inputs)
        if (!produced.count(id) && isFloat(plan.buffers[id].dtype))
          inputs.push_back(id);
    for (int32_t id : inputs) {
      const PlanBuffer &b = plan.buffers[id];
      std::vector<float> values(b.numElements());
      for (float &v : values)
        v = b.role == BufferRole::kOptimizerState ? std::fabs(normal(rng)) : normal(rng);
      if (statuses.count(id)) // a loss scale's {gradient multiplier, skip}
        values = {0.5f, 0.f};
      fill(arena + b.offset, b, values);
    }
    std::vector<std::string> saved;
    for (int32_t id : inputs)
      saved.emplace_back(reinterpret_cast<char *>(arena + plan.buffers[id].offset),
                         plan.buffers[id].bytes);
    for (size_t k : h.launch.kernels)
      if (Status s = reference.runKernel(k, 0); !s.isOk())
        return s;
    std::vector<int32_t> written = writtenBy(plan, h);
    std::vector<std::vector<float>> want;
    for (int32_t id : written) {
      want.push_back(widened(arena + plan.buffers[id].offset, plan.buffers[id]));
      // A value the kernel does not write shows as this.
      const PlanBuffer &b = plan.buffers[id];
      fill(arena + b.offset, b, std::vector<float>(b.numElements(), -12345.f));
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      std::memcpy(arena + plan.buffers[inputs[i]].offset, saved[i].data(), saved[i].size());
    (*host)->run(l, 0, 0, pool);
    HostLaunchCheck check;
    check.launch = l;
    for (size_t i = 0; i < written.size(); ++i) {
      const PlanBuffer &b = plan.buffers[written[i]];
      double error = relativeError(widened(arena + b.offset, b), want[i]);
      if (error >= check.error) {
        check.error = error;
        check.buffer = b.name;
        check.unit = b.dtype == DType::kF16 ? 0x1p-10 : b.dtype == DType::kBF16 ? 0x1p-7 : 0x1p-23;
      }
    }
    using Clock = std::chrono::steady_clock;
    const Clock::time_point timingStart = Clock::now();
    for (int run = 0; run < timedRuns && Clock::now() - timingStart < std::chrono::milliseconds(100);
         ++run) {
      const Clock::time_point start = Clock::now();
      (*host)->run(l, 0, 0, pool);
      double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (run == 0 || seconds < check.minSeconds)
        check.minSeconds = seconds;
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

} // namespace dlc::rt::cpu
