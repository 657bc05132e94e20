//===- RunBuffers.cpp - what a run reads in and writes out ----------------===//
//
// --params-in and --inputs-in (.npy files into the executor's buffers) and
// --dump-out (parameters, state, loss and last gradients back out), in the
// order the model declares, whatever order the plan stores.
//
//===----------------------------------------------------------------------===//

#include "RunSteps.h"

#include "dlc/runtime/Npy.h"
#include "dlc/runtime/cpu/CpuExecutor.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace dlc::bench {

namespace {

/// A buffer's bytes as float32 values (half precision widened).
std::vector<float> asFloats(const std::string &bytes, rt::DType dtype) {
  size_t n = bytes.size() / rt::dtypeBytes(dtype);
  std::vector<float> values(n);
  if (rt::cpu::isHalf(dtype))
    rt::cpu::widenToFloat(bytes.data(), dtype, values.data(), n);
  else
    std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

/// Loads DIR/<name>.npy into every buffer of the given roles; a missing file
/// is an error only when `required`.
rt::Status loadBuffers(rt::Executor &exec, const std::string &dir,
                       std::initializer_list<rt::BufferRole> roles,
                       bool required(rt::BufferRole)) {
  for (const rt::PlanBuffer &b : exec.plan().buffers) {
    if (std::find(roles.begin(), roles.end(), b.role) == roles.end())
      continue;
    std::string path = dir + "/" + b.name + ".npy";
    if (!required(b.role) && !std::ifstream(path))
      continue;
    auto array = rt::readNpy(path);
    if (!array.isOk())
      return array.status();
    // Half-precision buffers (--precision fp16) load from float32 files.
    bool widened = rt::cpu::isHalf(b.dtype) && array->dtype == rt::DType::kF32;
    std::vector<int64_t> declared = rt::declaredShape(b);
    if ((array->dtype != b.dtype && !widened) || array->shape != declared) {
      std::string expected, got;
      for (int64_t d : declared)
        expected += std::to_string(d) + " ";
      for (int64_t d : array->shape)
        got += std::to_string(d) + " ";
      return rt::Status(rt::StatusCode::kInvalidArgument,
                        path + ": '" + b.name + "' is " + rt::dtypeName(b.dtype) +
                            " [ " + expected + "], the file holds " +
                            rt::dtypeName(array->dtype) + " [ " + got + "]");
    }
    if (widened) {
      std::string half(b.bytes, '\0');
      rt::cpu::roundFromFloat(reinterpret_cast<const float *>(array->data.data()),
                              b.dtype, half.data(), b.numElements());
      array->data = std::move(half);
    }
    // Files hold the declared order; a filter may be stored OHWI.
    array->data = rt::toStoredOrder(b, array->data, rt::dtypeBytes(b.dtype));
    if (rt::Status s = exec.write(b.name, array->data.data(), array->data.size());
        !s.isOk())
      return s;
  }
  return rt::Status::ok();
}

} // namespace

rt::Status prepareRepeat(rt::Executor &exec, const RunOptions &o, uint64_t dataSeed,
                         const std::string &inputsDir) {
  if (rt::Status s = exec.initialize(o.seed); !s.isOk())
    return s;
  if (!o.paramsIn.empty())
    if (rt::Status s = loadBuffers(exec, o.paramsIn,
                                   {rt::BufferRole::kParam, rt::BufferRole::kState},
                                   [](rt::BufferRole role) {
                                     return role == rt::BufferRole::kParam;
                                   });
        !s.isOk())
      return s;
  return inputsDir.empty()
             ? exec.fillSyntheticBatch(dataSeed)
             : loadBuffers(exec, inputsDir, {rt::BufferRole::kInput, rt::BufferRole::kLabel},
                           [](rt::BufferRole) { return true; });
}

void captureGradient(const rt::Executor &exec, size_t k, GradientCapture &capture) {
  const rt::Plan &plan = exec.plan();
  const rt::PlanKernel &kernel = plan.kernels[k];
  if (capture.relu && kernel.id == rt::OpId::kRelu) {
    if (kernel.fusionKind == rt::FusionKind::kNone && kernel.outputs.size() == 1)
      capture.reluOutputs[k] =
          asFloats(exec.bytesOf(kernel.outputs[0]), plan.buffers[kernel.outputs[0]].dtype);
    return;
  }
  if (capture.updateGradients.empty())
    for (const rt::PlanKernel &update : plan.kernels)
      if (update.opClass == rt::OpClass::kOptimizer && update.inputs.size() > 1)
        capture.updateGradients.insert(update.inputs[1]);
  if (kernel.id == rt::OpId::kCast && kernel.inputs.size() == 1 && kernel.outputs.size() == 1 &&
      capture.updateGradients.count(kernel.outputs[0]) &&
      rt::cpu::isHalf(plan.buffers[kernel.inputs[0]].dtype)) {
    // The widening is exact: these are the values the update reads.
    capture.widened[kernel.outputs[0]] =
        asFloats(exec.bytesOf(kernel.inputs[0]), plan.buffers[kernel.inputs[0]].dtype);
    return;
  }
  if (kernel.opClass != rt::OpClass::kOptimizer)
    return;
  int32_t gradId = kernel.inputs[1];
  std::vector<float> values;
  if (auto widened = capture.widened.find(gradId); widened != capture.widened.end()) {
    values = std::move(widened->second);
    capture.widened.erase(widened);
  } else {
    values = asFloats(exec.bytesOf(gradId), plan.buffers[gradId].dtype);
  }
  size_t statusOperand = kernel.id == rt::OpId::kSgdUpdate ? 3 : 4;
  if (kernel.inputs.size() > statusOperand) {
    float factor =
        asFloats(exec.bytesOf(kernel.inputs[statusOperand]), rt::DType::kF32)[0];
    for (float &v : values)
      v *= factor;
  }
  capture.byParam[plan.buffers[kernel.inputs[0]].name] = std::move(values);
}

rt::Status writeDump(const rt::Executor &exec, const GradientCapture &captured,
                     const std::string &dir, float loss) {
  const std::map<std::string, std::vector<float>> &lastGrads = captured.byParam;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return failure("cannot create --dump-out directory " + dir + ": " + ec.message());
  for (const rt::PlanBuffer &b : exec.plan().buffers) {
    bool updated = b.role == rt::BufferRole::kParam || b.role == rt::BufferRole::kState;
    if (!updated && b.role != rt::BufferRole::kLoss)
      continue;
    // Every float buffer is written as float32, half precision widened.
    std::string bytes = exec.bytesOf(&b - exec.plan().buffers.data());
    if (b.role == rt::BufferRole::kLoss && b.dtype == rt::DType::kF32 &&
        bytes.size() == sizeof(float))
      std::memcpy(bytes.data(), &loss, sizeof(float));
    std::vector<float> widened;
    rt::DType dtype = b.dtype;
    if (rt::cpu::isHalf(dtype)) {
      widened = asFloats(bytes, dtype);
      dtype = rt::DType::kF32;
    }
    if (!widened.empty())
      bytes.assign(reinterpret_cast<const char *>(widened.data()),
                   widened.size() * sizeof(float));
    // Written in the order the model declares (a filter stored OHWI is
    // dumped OIHW), so dumps compare across layouts and with PyTorch.
    std::vector<int64_t> declared = rt::declaredShape(b);
    bytes = rt::toDeclaredOrder(b, bytes, rt::dtypeBytes(dtype));
    if (rt::Status s = rt::writeNpy(dir + "/" + b.name + ".npy", dtype, declared,
                                    bytes.data());
        !s.isOk())
      return failure(s.toString());
    auto grad = lastGrads.find(b.name);
    if (grad != lastGrads.end()) {
      std::string gradBytes = rt::toDeclaredOrder(
          b,
          std::string_view(reinterpret_cast<const char *>(grad->second.data()),
                           grad->second.size() * sizeof(float)),
          sizeof(float));
      if (rt::Status s = rt::writeNpy(dir + "/" + b.name + ".grad.npy",
                                      rt::DType::kF32, declared, gradBytes.data());
          !s.isOk())
        return failure(s.toString());
    }
  }
  if (!captured.relu)
    return rt::Status::ok();
  std::filesystem::create_directories(dir + "/relu", ec);
  if (ec)
    return failure("cannot create " + dir + "/relu: " + ec.message());
  // Numbered by their place among the plan's ReLU kernels, in the declared
  // order, as the gradients are.
  int64_t place = 0;
  const rt::Plan &plan = exec.plan();
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    if (plan.kernels[k].id != rt::OpId::kRelu)
      continue;
    if (auto values = captured.reluOutputs.find(k); values != captured.reluOutputs.end()) {
      const rt::PlanBuffer &out = plan.buffers[plan.kernels[k].outputs[0]];
      std::string bytes = rt::toDeclaredOrder(
          out,
          std::string_view(reinterpret_cast<const char *>(values->second.data()),
                           values->second.size() * sizeof(float)),
          sizeof(float));
      if (rt::Status s = rt::writeNpy(dir + "/relu/" + std::to_string(place) + ".npy",
                                      rt::DType::kF32, rt::declaredShape(out), bytes.data());
          !s.isOk())
        return failure(s.toString());
    }
    ++place;
  }
  return rt::Status::ok();
}

} // namespace dlc::bench
