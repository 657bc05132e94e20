//===- NanPropagationTest.cpp - NaN through max-like CPU kernels ----------===//
//
// A NaN in a batch must reach the loss, as in PyTorch: relu, max-pool and
// max reductions keep it (std::max and `x > 0 ? x : 0` drop it), and relu's
// gradient passes through it. Each kernel's output is compared with
// Debian's PyTorch on the same values.
//
//===----------------------------------------------------------------------===//

#include "TestPlan.h"

#include "dlc/runtime/cpu/CpuExecutor.h"

#include "RunPython.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

using namespace dlc::rt;

namespace {

using dlc_test::runPython;

/// Values printed as Python prints a list of floats: "[nan, 0.0, 2.0]".
std::string pyList(const std::vector<float> &values) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < values.size(); ++i) {
    out << (i ? ", " : "");
    if (std::isnan(values[i]))
      out << "nan";
    else
      out << values[i] << (values[i] == std::floor(values[i]) ? ".0" : "");
  }
  out << "]\n";
  return out.str();
}

TEST(NanPropagation, ReluMaxPoolAndReduceMaxMatchTorch) {
  using dlc_test::appendBuffer;
  Plan plan;
  plan.model = "nan_test";
  auto in = BufferRole::kInput, out = BufferRole::kGradient;
  int32_t x = appendBuffer(plan, "x", DType::kF32, {2, 3}, in);
  int32_t dy = appendBuffer(plan, "dy", DType::kF32, {2, 3}, in);
  int32_t img = appendBuffer(plan, "img", DType::kF32, {1, 1, 2, 4}, in);
  int32_t relu = appendBuffer(plan, "relu", DType::kF32, {2, 3}, out);
  int32_t dx = appendBuffer(plan, "dx", DType::kF32, {2, 3}, out);
  int32_t mx = appendBuffer(plan, "mx", DType::kF32, {2}, out);
  int32_t pool = appendBuffer(plan, "pool", DType::kF32, {1, 1, 1, 2}, out);
  plan.kernels = {
      dlc_test::makeKernel("relu", {x}, {relu}),
      dlc_test::makeKernel("relu_backward", {dy, x}, {dx}),
      dlc_test::makeKernel("reduce_max", {x}, {mx}, {{"axes", std::vector<int64_t>{1}}}),
      dlc_test::makeKernel("max_pool2d", {img}, {pool},
                           {{"kernel_size", std::vector<int64_t>{2, 2}},
                            {"stride", std::vector<int64_t>{2, 2}},
                            {"padding", std::vector<int64_t>{0, 0}}})};
  auto cpu = cpu::CpuExecutor::create(plan);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  // The NaN comes after the row's maximum, where a running std::max loses it.
  std::vector<float> xs = {-1.f, 2.f, NAN, 3.f, -4.f, 0.5f}, ones(6, 1.f),
                     image = {1.f, 5.f, 2.f, 2.f, 3.f, NAN, 4.f, 1.f};
  ASSERT_TRUE((*cpu)->write("x", xs.data(), 24).isOk());
  ASSERT_TRUE((*cpu)->write("dy", ones.data(), 24).isOk());
  ASSERT_TRUE((*cpu)->write("img", image.data(), 32).isOk());
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    ASSERT_TRUE((*cpu)->runKernel(k, 0).isOk()) << plan.kernels[k].op;
  auto read = [&](const char *name, size_t n) {
    std::vector<float> v(n);
    EXPECT_TRUE((*cpu)->read(name, v.data(), n * 4).isOk());
    return v;
  };
  std::string torch = runPython(
      "import torch; nan = float('nan'); "
      "x = torch.tensor([[-1., 2., nan], [3., -4., 0.5]], requires_grad=True); "
      "y = torch.relu(x); y.backward(torch.ones(2, 3)); "
      "print(y.flatten().tolist()); print(x.grad.flatten().tolist()); "
      "print(torch.amax(x.detach(), dim=1).tolist()); "
      "img = torch.tensor([[[[1., 5., 2., 2.], [3., nan, 4., 1.]]]]); "
      "print(torch.nn.functional.max_pool2d(img, 2, 2).flatten().tolist())");
  std::string ours = pyList(read("relu", 6)) + pyList(read("dx", 6)) +
                     pyList(read("mx", 2)) + pyList(read("pool", 2));
  EXPECT_EQ(ours, torch);
  EXPECT_EQ(ours, "[0.0, 2.0, nan, 3.0, 0.0, 0.5]\n[0.0, 1.0, 1.0, 1.0, 0.0, 1.0]\n"
                  "[nan, 3.0]\n[nan, 4.0]\n");
}

} // namespace
