//===- dlc-bandwidth.cpp - generated kernels against a device copy --------===//
//
//   dlc-bandwidth [--mib N] [--steps N]
//
// How close do the generated element-wise kernels come to the memory
// system's limit? Each case is a one-launch plan (a single op, or a fused
// group) run by the CUDA executor as a replayed CUDA graph; its bandwidth
// counts every byte the kernel must read and write once. The yardstick is
// a device-to-device cudaMemcpy of the same operand size measured in the
// same run (bytes read + written). Medians over --steps steps, each timed
// between CUDA events. The target is at least 80% of the copy.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Device.h"
#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cuda/CudaExecutor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

using namespace dlc::rt;

namespace {

constexpr int64_t kAlignment = 256;

/// A plan of one launch over buffers laid out one after another.
struct Case {
  std::string label;
  Plan plan;
  int64_t bytesMoved = 0; // inputs read + outputs written, once each

  int32_t buffer(const std::string &name, DType dtype, std::vector<int64_t> shape,
                 BufferRole role) {
    PlanBuffer b;
    b.name = name;
    b.dtype = dtype;
    b.shape = std::move(shape);
    b.role = role;
    b.offset = (plan.arenaBytes + kAlignment - 1) / kAlignment * kAlignment;
    b.bytes = b.numElements() * dtypeBytes(dtype);
    plan.arenaBytes = b.offset + b.bytes;
    plan.buffers.push_back(std::move(b));
    return static_cast<int32_t>(plan.buffers.size() - 1);
  }
  /// Every case times element-wise ops, alone or in a group of `kind`.
  void kernel(const std::string &op, std::vector<int32_t> in, std::vector<int32_t> out,
              PlanAttrs attrs = {}, FusionKind kind = FusionKind::kNone) {
    PlanKernel k{OpId::kConstant, "", std::move(in), std::move(out), std::move(attrs),
                 OpClass::kElementwise, kind};
    k.setOp(parseOpId(op).value());
    plan.kernels.push_back(std::move(k));
  }
};

std::vector<Case> cases(int64_t elements) {
  std::vector<Case> all;
  const DType f32 = DType::kF32, f16 = DType::kF16;
  const BufferRole in = BufferRole::kInput, out = BufferRole::kGradient;
  auto make = [&](const std::string &label) -> Case & {
    all.emplace_back();
    all.back().label = label;
    all.back().plan.model = "bandwidth";
    all.back().plan.batch = 1;
    all.back().plan.precision = "fp32";
    all.back().plan.fusion = "none";
    return all.back();
  };
  const int64_t rows = elements / 1024;
  {
    Case &c = make("relu f32 (a copy's traffic)");
    c.kernel("relu", {c.buffer("x", f32, {rows, 1024}, in)}, {c.buffer("y", f32, {rows, 1024}, out)});
    c.bytesMoved = 2 * rows * 1024 * 4;
  }
  {
    Case &c = make("add f32");
    c.kernel("add", {c.buffer("a", f32, {rows, 1024}, in), c.buffer("b", f32, {rows, 1024}, in)},
             {c.buffer("y", f32, {rows, 1024}, out)});
    c.bytesMoved = 3 * rows * 1024 * 4;
  }
  {
    Case &c = make("add + relu fused f32");
    int32_t s = c.buffer("s", f32, {rows, 1024}, BufferRole::kTemporary);
    PlanAttrs group = {{"fusion.group", int64_t(0)}};
    c.kernel("add", {c.buffer("a", f32, {rows, 1024}, in), c.buffer("b", f32, {rows, 1024}, in)},
             {s}, group, FusionKind::kElewiseAct);
    c.kernel("relu", {s}, {c.buffer("y", f32, {rows, 1024}, out)}, group, FusionKind::kElewiseAct);
    c.bytesMoved = 3 * rows * 1024 * 4;
  }
  {
    Case &c = make("bias add (broadcast row) f32");
    c.kernel("add", {c.buffer("x", f32, {rows, 1024}, in), c.buffer("b", f32, {1024}, in)},
             {c.buffer("y", f32, {rows, 1024}, out)});
    c.bytesMoved = 2 * rows * 1024 * 4 + 1024 * 4;
  }
  {
    Case &c = make("add f16");
    c.kernel("add", {c.buffer("a", f16, {rows, 1024}, in), c.buffer("b", f16, {rows, 1024}, in)},
             {c.buffer("y", f16, {rows, 1024}, out)});
    c.bytesMoved = 3 * rows * 1024 * 2;
  }
  {
    Case &c = make("cast f32 -> f16");
    c.kernel("cast", {c.buffer("x", f32, {rows, 1024}, in)}, {c.buffer("y", f16, {rows, 1024}, out)});
    c.bytesMoved = rows * 1024 * (4 + 2);
  }
  return all;
}

int usage(const std::string &message) {
  std::cerr << "dlc-bandwidth: " << message << "\n"
            << "usage: dlc-bandwidth [--mib N] [--steps N]\n"
            << "  --mib N    size of each float32 operand in MiB (default 1024)\n"
            << "  --steps N  timed steps per case; the median is reported (default 20)\n";
  return 2;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  int64_t mib = 1024, steps = 20;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--mib" || arg == "--steps") && i + 1 < argc) {
      char *end = nullptr;
      long long value = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || value <= 0)
        return usage(arg + " needs a positive integer, got '" + argv[i] + "'");
      (arg == "--mib" ? mib : steps) = value;
    } else if (arg == "-h" || arg == "--help") {
      usage("generated element-wise kernels' bandwidth against a device-to-device copy");
      return 0;
    } else {
      return usage("unknown argument '" + arg + "'");
    }
  }
  auto devices = listCudaDevices();
  if (!devices.isOk()) {
    std::cerr << "dlc-bandwidth: " << devices.status().message() << "\n";
    return 1;
  }
  const int64_t elements = mib * (1 << 20) / 4 / 1024 * 1024;
  auto copy = measureDeviceCopyGBs(size_t(elements) * 4, static_cast<int>(steps));
  if (!copy.isOk()) {
    std::cerr << "dlc-bandwidth: " << copy.status().toString() << "\n";
    return 1;
  }
  std::printf("%-32s %12s %10s %9s %8s\n", "kernel", "MiB moved", "median ms", "GB/s",
              "vs copy");
  std::printf("%-32s %12.0f %10s %9.1f %7.1f%%\n", "device-to-device copy",
              2.0 * elements * 4 / (1 << 20), "", *copy, 100.0);
  std::string device;
  for (Case &c : cases(elements)) {
    auto exec = cuda::CudaExecutor::create(c.plan);
    if (!exec.isOk()) {
      std::cerr << "dlc-bandwidth: " << c.label << ": " << exec.status().toString() << "\n";
      return 1;
    }
    device = (*exec)->deviceName();
    const auto &paths = (*exec)->launchPaths();
    if (paths.size() != 1 || paths.front().path != "generated") {
      std::cerr << "dlc-bandwidth: " << c.label << " did not run as one generated kernel\n";
      return 1;
    }
    std::vector<double> ms;
    for (int64_t i = 0; i < steps + 2; ++i) {
      Status s = (*exec)->step();
      auto t = s.isOk() ? (*exec)->stepMs() : StatusOr<float>(s);
      if (!t.isOk()) {
        std::cerr << "dlc-bandwidth: " << c.label << ": " << t.status().toString() << "\n";
        return 1;
      }
      if (i >= 2) // the first steps compile the graph and warm the caches
        ms.push_back(*t);
    }
    double m = median(ms), gbs = c.bytesMoved / (m * 1e-3) / 1e9;
    std::printf("%-32s %12.0f %10.3f %9.1f %7.1f%%\n", c.label.c_str(),
                double(c.bytesMoved) / (1 << 20), m, gbs, 100 * gbs / *copy);
  }
  std::printf("device %s; %lld MiB per float32 operand; median of %lld steps (CUDA graph "
              "replays, CUDA events); the step's one-thread counter kernel is included\n",
              device.c_str(), static_cast<long long>(mib), static_cast<long long>(steps));
  return 0;
}
