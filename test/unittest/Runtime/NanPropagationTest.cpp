//===- NanPropagationTest.cpp - NaN through max-like CPU kernels ----------===//
//
// A NaN in a batch must reach the loss, as in PyTorch: relu, max-pool and
// max reductions keep it (std::max and `x > 0 ? x : 0` drop it), and relu's
// gradient passes through it; relu6, hardswish and hardsigmoid keep their
// gradients' boundaries and NaN rules. Each kernel's output is compared
// with Debian's PyTorch on the same values.
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

/// Values as Python's '%.9g' prints them, space-separated: every float32
/// exactly, NaN as "nan" whatever its sign bit.
std::string g9List(const std::vector<float> &values) {
  std::string out;
  for (float v : values) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.9g", v);
    out += (out.empty() ? "" : " ") + (std::isnan(v) ? std::string("nan") : std::string(text));
  }
  return out + "\n";
}

/// relu6, hardswish, hardsigmoid and their gradients at each piece's ends,
/// at the infinities and at NaN, against PyTorch element by element: one
/// element at a time runs PyTorch's scalar loop, the rule its CUDA kernels
/// follow too (its vectorized CPU loop differs at NaN and at hardswish's 3).
TEST(NanPropagation, PiecewiseActivationsMatchTorchAtTheirBoundaries) {
  using dlc_test::appendBuffer;
  const std::vector<float> xs = {NAN, -INFINITY, -4.f, -3.f, -1.f, 0.f,
                                 1.5f, 3.f, 5.f, 6.f, 7.f, INFINITY};
  const int64_t n = static_cast<int64_t>(xs.size());
  Plan plan;
  plan.model = "piecewise_test";
  int32_t x = appendBuffer(plan, "x", DType::kF32, {n}, BufferRole::kInput);
  int32_t dy = appendBuffer(plan, "dy", DType::kF32, {n}, BufferRole::kInput);
  const std::vector<std::string> ops = {"relu6", "hardswish", "hardsigmoid"};
  for (const std::string &op : ops) {
    int32_t y = appendBuffer(plan, op, DType::kF32, {n}, BufferRole::kGradient);
    int32_t dx = appendBuffer(plan, op + "_dx", DType::kF32, {n}, BufferRole::kGradient);
    plan.kernels.push_back(dlc_test::makeKernel(op, {x}, {y}));
    plan.kernels.push_back(dlc_test::makeKernel(op + "_backward", {dy, x}, {dx}));
  }
  auto cpu = cpu::CpuExecutor::create(plan);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  // dy = 0.75 shows where the gradient passes dy (not 1) and scales it.
  std::vector<float> dys(xs.size(), 0.75f);
  ASSERT_TRUE((*cpu)->write("x", xs.data(), xs.size() * 4).isOk());
  ASSERT_TRUE((*cpu)->write("dy", dys.data(), dys.size() * 4).isOk());
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    ASSERT_TRUE((*cpu)->runKernel(k, 0).isOk()) << plan.kernels[k].op;
  std::string ours;
  for (const std::string &op : ops)
    for (const std::string &name : {op, op + "_dx"}) {
      std::vector<float> v(xs.size());
      ASSERT_TRUE((*cpu)->read(name, v.data(), v.size() * 4).isOk());
      ours += g9List(v);
    }
  std::string values = g9List(xs);
  values.pop_back();
  std::string torch = runPython(
      "import torch, torch.nn.functional as F\n"
      "xs = [float(v) for v in '" + values + "'.split()]\n"
      "g9 = lambda vs: ' '.join('nan' if v != v else '%.9g' % v for v in vs)\n"
      "for fn in (F.relu6, F.hardswish, F.hardsigmoid):\n"
      "  ys, gs = [], []\n"
      "  for v in xs:\n"
      "    t = torch.tensor([v], requires_grad=True)\n"
      "    y = fn(t); y.backward(torch.full((1,), 0.75))\n"
      "    ys.append(y.item()); gs.append(t.grad.item())\n"
      "  print(g9(ys)); print(g9(gs))\n");
  EXPECT_EQ(ours, torch);
  // relu6's gradient as TrainGradOps.td states it (dy at NaN, 0 at 0 and
  // 6), should another PyTorch change its scalar loop.
  EXPECT_NE(ours.find("\n0.75 0 0 0 0 0 0.75 0.75 0.75 0 0 0\n"), std::string::npos) << ours;
}

} // namespace
