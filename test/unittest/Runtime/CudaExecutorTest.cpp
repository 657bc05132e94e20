//===- CudaExecutorTest.cpp - the CUDA backend against the CPU reference --===//
//
// Without a GPU, creating a CUDA executor must be a clean kUnavailable
// status. With one, a small hand-built plan that takes every path (a
// generated add + relu group, cuBLASLt matmuls and a linear, cuDNN's three
// convolutions, a hand-written softmax) must compute what the CPU
// executor computes from the same inputs, and a plan larger than the
// device must be refused with both sizes. A rank's executor with an NCCL
// communicator waits by polling and computes what one without computes.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Device.h"
#include "dlc/runtime/Half.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/codegen/KernelCodegen.h"
#include "dlc/runtime/cuda/LaunchPaths.h"
#include "dlc/runtime/cuda/Nccl.h"

#include "TestPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <random>

using namespace dlc::rt;

namespace {

using dlc_test::PlanBuilder;

/// One launch per path: add + relu fused (generated), matmul, matmul with
/// a transposed right operand and linear (cuBLASLt), conv2d with bias and
/// both its gradients (cuDNN), softmax (hand-written).
Plan everyPathPlan(DType t) {
  PlanBuilder p;
  p.plan.model = "cuda_paths";
  p.plan.batch = 4;
  p.plan.precision = t == DType::kF32 ? "fp32" : "fp16";
  p.plan.fusion = "paddle";
  const BufferRole in = BufferRole::kInput, tmp = BufferRole::kTemporary;
  int32_t x = p.add("x", t, {4, 8}, in), y = p.add("y", t, {4, 8}, in);
  int32_t s = p.add("s", t, {4, 8}, tmp), r = p.add("r", t, {4, 8}, tmp);
  int32_t w = p.add("w", t, {8, 16}, in), m = p.add("m", t, {4, 16}, tmp);
  int32_t wt = p.add("wt", t, {16, 8}, in), mt = p.add("mt", t, {4, 16}, tmp);
  int32_t bias = p.add("b", t, {16}, in), l = p.add("l", t, {4, 16}, tmp);
  int32_t prob = p.add("p", t, {4, 16}, tmp);
  int32_t img = p.add("img", t, {2, 3, 8, 8}, in), filt = p.add("filt", t, {4, 3, 3, 3}, in);
  int32_t cb = p.add("cb", t, {4}, in), c = p.add("c", t, {2, 4, 8, 8}, tmp);
  int32_t dy = p.add("dy", t, {2, 4, 8, 8}, in), dx = p.add("dx", t, {2, 3, 8, 8}, tmp);
  int32_t dw = p.add("dw", t, {4, 3, 3, 3}, tmp);
  PlanAttrs group = {{"fusion.group", int64_t(0)}, {"fusion.kind", std::string("elewise_act")}};
  p.kernel("add", {x, y}, {s}, group);
  p.kernel("relu", {s}, {r}, group);
  p.kernel("matmul", {r, w}, {m});
  p.kernel("matmul", {r, wt}, {mt}, {{"transpose_rhs", int64_t(1)}});
  p.kernel("linear", {r, wt, bias}, {l});
  p.kernel("softmax", {l}, {prob}, {{"axis", int64_t(-1)}});
  PlanAttrs conv = {{"stride", std::vector<int64_t>{1, 1}},
                    {"padding", std::vector<int64_t>{1, 1}},
                    {"dilation", std::vector<int64_t>{1, 1}},
                    {"groups", int64_t(1)}};
  p.kernel("conv2d", {img, filt, cb}, {c}, conv);
  p.kernel("conv2d_backward_data", {dy, filt}, {dx}, conv);
  p.kernel("conv2d_backward_filter", {dy, img}, {dw}, conv);
  return p.plan;
}

/// dlc-convert-layout's NHWC forms, all through cuDNN: conv2d with bias and
/// both its gradients (OHWI filters), batch norm and its gradient over the
/// last dimension (f32 statistics).
Plan nhwcPlan(DType t) {
  PlanBuilder p;
  p.plan.model = "cuda_nhwc";
  p.plan.batch = 2;
  p.plan.precision = t == DType::kF32 ? "fp32" : "amp";
  p.plan.fusion = "none";
  const BufferRole in = BufferRole::kInput, tmp = BufferRole::kTemporary;
  const DType f = DType::kF32;
  // No two of N, H, W and C alike, nor of the filter's O, KH, KW and I, so
  // that a dimension read from the wrong place cannot pass: [2, 6, 5, 3]
  // images, 5 filters of 3 x 2 (OHWI), padding 1 x 0: [2, 6, 4, 5] out.
  int32_t img = p.add("img", t, {2, 6, 5, 3}, in), filt = p.add("filt", t, {5, 3, 2, 3}, in);
  int32_t cb = p.add("cb", t, {5}, in), c = p.add("c", t, {2, 6, 4, 5}, tmp);
  int32_t dy = p.add("dy", t, {2, 6, 4, 5}, in), dx = p.add("dx", t, {2, 6, 5, 3}, tmp);
  int32_t dw = p.add("dw", t, {5, 3, 2, 3}, tmp);
  PlanAttrs conv = {{"stride", std::vector<int64_t>{1, 1}},
                    {"padding", std::vector<int64_t>{1, 0}},
                    {"dilation", std::vector<int64_t>{1, 1}},
                    {"groups", int64_t(1)},
                    {"layout", std::string("NHWC")}};
  p.kernel("conv2d", {img, filt, cb}, {c}, conv);
  p.kernel("conv2d_backward_data", {dy, filt}, {dx}, conv);
  p.kernel("conv2d_backward_filter", {dy, img}, {dw}, conv);
  int32_t scale = p.add("bn_scale", f, {5}, in), shift = p.add("bn_bias", f, {5}, in);
  int32_t mean = p.add("bn_mean", f, {5}, in), var = p.add("bn_var", f, {5}, in);
  int32_t y = p.add("bn_y", t, {2, 6, 4, 5}, tmp), newMean = p.add("bn_new_mean", f, {5}, tmp);
  int32_t newVar = p.add("bn_new_var", f, {5}, tmp), bdx = p.add("bn_dx", t, {2, 6, 4, 5}, tmp);
  int32_t dscale = p.add("bn_dscale", f, {5}, tmp), dbias = p.add("bn_dbias", f, {5}, tmp);
  PlanAttrs bn = {{"epsilon", 1e-5}, {"momentum", 0.1}, {"layout", std::string("NHWC")}};
  p.kernel("batch_norm", {c, scale, shift, mean, var}, {y, newMean, newVar}, bn);
  p.kernel("batch_norm_backward", {dy, c, scale}, {bdx, dscale, dbias}, bn);
  return p.plan;
}

/// PaddlePaddle's fused batch norm as cuDNN runs it: a bn_act group and its
/// gradient, a bn_add_act group and its gradient (which writes the
/// shortcut's gradient out), FP16 NHWC with f32 statistics.
Plan fusedBatchNormPlan() {
  PlanBuilder p;
  p.plan.model = "cuda_fused_bn";
  p.plan.batch = 2;
  p.plan.precision = "amp";
  p.plan.fusion = "paddle";
  const BufferRole in = BufferRole::kInput, tmp = BufferRole::kTemporary;
  const DType h = DType::kF16, f = DType::kF32;
  const std::vector<int64_t> shape = {2, 4, 4, 8};
  PlanAttrs bnAttrs = {{"epsilon", 1e-5}, {"momentum", 0.1}, {"layout", std::string("NHWC")}};
  int64_t group = 0;
  auto attrs = [&](PlanAttrs a, const char *kind) {
    a["fusion.group"] = group;
    a["fusion.kind"] = std::string(kind);
    return a;
  };
  for (bool add : {false, true}) {
    std::string s = add ? "add_" : "act_";
    int32_t x = p.add(s + "x", h, shape, in), z = add ? p.add(s + "z", h, shape, in) : -1;
    int32_t scale = p.add("bn_" + s + "scale", f, {8}, in), bias = p.add("bn_" + s + "bias", f, {8}, in);
    int32_t mean = p.add("bn_" + s + "mean", f, {8}, in), var = p.add("bn_" + s + "var", f, {8}, in);
    int32_t y = p.add("in_group_" + s + "y", h, shape, tmp);
    int32_t newMean = p.add("bn_" + s + "new_mean", f, {8}, tmp);
    int32_t newVar = p.add("bn_" + s + "new_var", f, {8}, tmp);
    int32_t sum = add ? p.add("in_group_" + s + "sum", h, shape, tmp) : -1;
    int32_t r = p.add("bn_" + s + "r", h, shape, tmp);
    const char *kind = add ? "bn_add_act" : "bn_act";
    p.kernel("batch_norm", {x, scale, bias, mean, var}, {y, newMean, newVar}, attrs(bnAttrs, kind));
    if (add)
      p.kernel("add", {y, z}, {sum}, attrs({}, kind));
    p.kernel("relu", {add ? sum : y}, {r}, attrs({}, kind));
    ++group;
    // The relu gradient leaves the group only in the add form.
    int32_t dr = p.add(s + "dr", h, shape, in);
    int32_t ds = p.add((add ? "bn_" : "in_group_") + s + "ds", h, shape, tmp);
    int32_t dx = p.add("bn_" + s + "dx", h, shape, tmp), dscale = p.add("bn_" + s + "dscale", f, {8}, tmp);
    int32_t dbias = p.add("bn_" + s + "dbias", f, {8}, tmp);
    const char *gradKind = add ? "bn_add_act_grad" : "bn_act_grad";
    p.kernel("relu_backward", {dr, r}, {ds}, attrs({}, gradKind));
    p.kernel("batch_norm_backward", {ds, x, scale}, {dx, dscale, dbias}, attrs(bnAttrs, gradKind));
    ++group;
    if (add) {
      // The shortcut reads the relu gradient: the group writes it out.
      // (Read after the step, as a gradient is: a temporary nobody reads
      // is dead, and the generator declines dead launches.)
      int32_t shortcut = p.add("bn_" + s + "shortcut", h, shape, BufferRole::kGradient);
      p.kernel("relu", {ds}, {shortcut});
    }
  }
  return p.plan;
}

/// Dropout-free attention and its gradient as cuDNN's SDPA takes them
/// (sdpaShapeOf), in `t` (f16 or bf16): [B, H, Sq, D] causal with fewer
/// queries than keys (cuDNN's bottom-right diagonal); and [B, H, S, D]
/// causal self-attention (top-left, Sq = Sk) with a [B, 1, S, S] additive
/// mask, a head dimension of 32 and 17 rows, not a multiple of any tile.
Plan attentionPlan(DType t) {
  PlanBuilder p;
  p.plan.model = "cuda_attention";
  p.plan.batch = 2;
  p.plan.precision = t == DType::kF16 ? "amp" : "amp-bf16";
  p.plan.fusion = "xla";
  const BufferRole in = BufferRole::kInput, tmp = BufferRole::kTemporary;
  const DType f = DType::kF32;
  int32_t q = p.add("q", t, {2, 4, 24, 64}, in), k = p.add("k", t, {2, 4, 40, 64}, in);
  int32_t v = p.add("v", t, {2, 4, 40, 64}, in), dO = p.add("do", t, {2, 4, 24, 64}, in);
  int32_t o = p.add("o", t, {2, 4, 24, 64}, tmp), lse = p.add("lse", f, {2, 4, 24}, tmp);
  int32_t dq = p.add("dq", t, {2, 4, 24, 64}, tmp), dk = p.add("dk", t, {2, 4, 40, 64}, tmp);
  int32_t dv = p.add("dv", t, {2, 4, 40, 64}, tmp);
  PlanAttrs attrs = {{"scale", 0.125}, {"causal", int64_t(1)}};
  p.kernel("attention", {q, k, v}, {o, lse}, attrs);
  p.kernel("attention_backward", {q, k, v, o, dO, lse}, {dq, dk, dv}, attrs);
  int32_t r = p.add("r", t, {2, 3, 17, 32}, in), rd = p.add("rdo", t, {2, 3, 17, 32}, in);
  int32_t m = p.add("m", t, {2, 1, 17, 17}, in);
  int32_t ro = p.add("ro", t, {2, 3, 17, 32}, tmp), rl = p.add("rl", f, {2, 3, 17}, tmp);
  int32_t rq = p.add("rdq", t, {2, 3, 17, 32}, tmp), rk = p.add("rdk", t, {2, 3, 17, 32}, tmp);
  int32_t rv = p.add("rdv", t, {2, 3, 17, 32}, tmp);
  PlanAttrs self = {{"scale", 0.17677669529663687}, {"causal", int64_t(1)}};
  p.kernel("attention", {r, r, r, m}, {ro, rl}, self);
  p.kernel("attention_backward", {r, r, r, ro, rd, rl, m}, {rq, rk, rv}, self);
  return p.plan;
}

std::vector<float> asFloats(const std::string &bytes, DType dtype) {
  size_t n = bytes.size() / dtypeBytes(dtype);
  std::vector<float> values(n);
  if (cpu::isHalf(dtype))
    cpu::widenToFloat(bytes.data(), dtype, values.data(), n);
  else
    std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

/// Writes the same N(0, 1) values (rounded to the buffer's type) into
/// every input of both executors.
void writeRandomInputs(Executor &a, Executor &b, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const PlanBuffer &buffer : a.plan().buffers) {
    if (buffer.role != BufferRole::kInput)
      continue;
    std::vector<float> values(buffer.numElements());
    for (float &v : values)
      v = normal(rng);
    std::string bytes(buffer.bytes, '\0');
    if (cpu::isHalf(buffer.dtype))
      cpu::roundFromFloat(values.data(), buffer.dtype, bytes.data(), buffer.numElements());
    else
      std::memcpy(bytes.data(), values.data(), bytes.size());
    ASSERT_TRUE(a.write(buffer.name, bytes.data(), bytes.size()).isOk());
    ASSERT_TRUE(b.write(buffer.name, bytes.data(), bytes.size()).isOk());
  }
}

/// Three steps on both backends; every result within `tolerance` of the CPU's
/// (`bnTolerance` for buffers named bn_*), relative to the largest
/// magnitude of the CPU's result; the launches on each path as `expected`.
void expectPlanMatchesCpu(const Plan &plan, const std::map<std::string, int64_t> &expected,
                          double tolerance, double bnTolerance) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  auto cpuExec = cpu::CpuExecutor::create(plan);
  ASSERT_TRUE(cpuExec.isOk()) << cpuExec.status().toString();
  auto gpuExec = cuda::CudaExecutor::create(plan);
  ASSERT_TRUE(gpuExec.isOk()) << gpuExec.status().toString();
  cuda::CudaExecutor &gpu = **gpuExec;
  for (const cuda::LaunchPath &l : gpu.launchPaths())
    std::cerr << "  " << l.path << ": " << l.label
              << (l.reason.empty() ? "" : " -- " + l.reason) << "\n";
  EXPECT_EQ(gpu.launchesByPath(), expected);

  writeRandomInputs(**cpuExec, gpu, 7);
  // Three steps (the plans' inputs stay, so each computes the same): the
  // first launches kernel by kernel, the second captures the CUDA graph
  // and the third replays it, so every path is checked replayed too.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*cpuExec)->step().isOk());
    Status stepped = gpu.step();
    ASSERT_TRUE(stepped.isOk()) << "step " << i << ": " << stepped.toString();
  }
  ASSERT_TRUE(gpu.synchronize().isOk());
  EXPECT_TRUE(gpu.replaysCudaGraph()) << gpu.cudaGraphNote();
  auto ms = gpu.stepMs();
  ASSERT_TRUE(ms.isOk()) << ms.status().toString();
  EXPECT_GT(*ms, 0.0f);
  EXPECT_EQ(gpu.stepsRun(), 3);

  for (size_t id = 0; id < plan.buffers.size(); ++id) {
    const PlanBuffer &b = plan.buffers[id];
    if (b.role != BufferRole::kTemporary || b.name == "s" || b.name.rfind("in_group_", 0) == 0)
      continue; // values inside a fused group: never written to memory
    std::vector<float> want = asFloats((*cpuExec)->bytesOf(id), b.dtype);
    std::vector<float> got = asFloats(gpu.bytesOf(id), b.dtype);
    ASSERT_EQ(got.size(), want.size()) << b.name;
    double scale = 1e-30, worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      scale = std::max(scale, std::fabs(double(want[i])));
      worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
    }
    EXPECT_LE(worst / scale, b.name.rfind("bn_", 0) == 0 ? bnTolerance : tolerance)
        << b.name << ": largest difference " << worst << " against magnitude " << scale;
  }
}

void expectMatchesCpu(DType dtype, double tolerance) {
  expectPlanMatchesCpu(everyPathPlan(dtype),
                       {{"generated", 1}, {"cublaslt", 3}, {"cudnn", 3}, {"hand-written", 1},
                        {"nccl", 0}, {"host-fallback", 0}},
                       tolerance, tolerance);
}

/// cuDNN's f32 batch norm was 7.6e-5 from the CPU on an H100 (NCHW; see
/// HandKernelsTest), hence its own bound in f32.
void expectNhwcMatchesCpu(DType dtype, double tolerance, double bnTolerance) {
  expectPlanMatchesCpu(nhwcPlan(dtype),
                       {{"generated", 0}, {"cublaslt", 0}, {"cudnn", 5}, {"hand-written", 0},
                        {"nccl", 0}, {"host-fallback", 0}},
                       tolerance, bnTolerance);
}

} // namespace

TEST(CudaExecutor, WithoutAGpuCreateIsUnavailable) {
  auto devices = listCudaDevices();
  if (devices.isOk())
    GTEST_SKIP() << "a CUDA device is present: " << devices->front().name;
  auto exec = cuda::CudaExecutor::create(everyPathPlan(DType::kF32));
  ASSERT_FALSE(exec.isOk());
  EXPECT_EQ(exec.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(exec.status().message().rfind("no CUDA device", 0), 0u)
      << exec.status().toString();
  // Exactly listCudaDevices' status, unchanged.
  EXPECT_EQ(exec.status().message(), devices.status().message());
}

// Runs everywhere: the test plan's launches are the ones the GPU tests
// expect on each path (only the generated group is the generator's).
TEST(CudaExecutor, TheTestPlanHasOneLaunchPerOp) {
  for (DType dtype : {DType::kF32, DType::kF16}) {
    Plan plan = everyPathPlan(dtype);
    ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
    std::vector<Launch> launches = planLaunches(plan);
    ASSERT_EQ(launches.size(), 8u);
    EXPECT_EQ(launches[0].kernels.size(), 2u);
    codegen::GenerateDecision group = codegen::isGeneratable(plan, launches[0]);
    EXPECT_TRUE(group.ok) << group.reason;
    EXPECT_FALSE(codegen::isGeneratable(plan, launches[4]).ok) << "softmax";
    EXPECT_TRUE(cpu::CpuExecutor::create(plan).isOk());
  }
}

/// Runs everywhere: `plan` is valid, the CPU steps it, and the CUDA backend
/// would route `onCudnn` launches to cuDNN and none to `never`.
void expectValidAndOnCudnn(const Plan &plan, int64_t onCudnn, const char *never) {
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  auto cpu = cpu::CpuExecutor::create(plan);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  EXPECT_TRUE((*cpu)->step().isOk());
  std::map<std::string, int64_t> paths = cuda::countByPath(cuda::planDeviceLaunches(plan));
  EXPECT_EQ(paths["cudnn"], onCudnn) << plan.precision;
  EXPECT_EQ(paths[never], 0) << plan.precision;
}

// The NHWC plan: all five launches on cuDNN.
TEST(CudaExecutor, TheNhwcTestPlanIsValidAndAllCudnn) {
  for (DType dtype : {DType::kF32, DType::kF16})
    expectValidAndOnCudnn(nhwcPlan(dtype), 5, "host-fallback");
}

// The SDPA plan: all four attention launches on cuDNN, none on the flash
// kernels.
TEST(CudaExecutor, TheAttentionTestPlanIsValidAndAllCudnn) {
  for (DType dtype : {DType::kF16, DType::kBF16})
    expectValidAndOnCudnn(attentionPlan(dtype), 4, "hand-written");
}

TEST(CudaExecutor, EveryPathMatchesTheCpuFp32) { expectMatchesCpu(DType::kF32, 1e-5); }

TEST(CudaExecutor, NhwcConvolutionsAndBatchNormMatchTheCpuFp32) {
  expectNhwcMatchesCpu(DType::kF32, 1e-5, 2e-4);
}

TEST(CudaExecutor, CudnnFusedBatchNormMatchesTheCpu) {
  expectPlanMatchesCpu(fusedBatchNormPlan(),
                       {{"generated", 1}, {"cublaslt", 0}, {"cudnn", 4}, {"hand-written", 0},
                        {"nccl", 0}, {"host-fallback", 0}},
                       1e-2, 1e-2);
}

// cuDNN's SDPA forward and backward against the CPU backend, f16 and bf16
// (p and ds enter the products rounded to the operands' type, as in
// FlashAttention-2: a few units of the type against the largest value).
// A graph cuDNN refused would show here as launches on the flash kernels,
// with cuDNN's reason printed above the failure.
TEST(CudaExecutor, CudnnSdpaMatchesTheCpuF16) {
  expectPlanMatchesCpu(attentionPlan(DType::kF16),
                       {{"generated", 0}, {"cublaslt", 0}, {"cudnn", 4}, {"hand-written", 0},
                        {"nccl", 0}, {"host-fallback", 0}},
                       1e-2, 1e-2);
}

TEST(CudaExecutor, CudnnSdpaMatchesTheCpuBf16) {
  expectPlanMatchesCpu(attentionPlan(DType::kBF16),
                       {{"generated", 0}, {"cublaslt", 0}, {"cudnn", 4}, {"hand-written", 0},
                        {"nccl", 0}, {"host-fallback", 0}},
                       3e-2, 3e-2);
}

// The same plan on the tensor-core flash kernels (DLC_CUDA_ATTENTION=flash),
// which is what a graph cuDNN refuses falls back to.
TEST(CudaExecutor, FlashAttentionOfTheSdpaPlanMatchesTheCpu) {
  setenv("DLC_CUDA_ATTENTION", "flash", 1);
  expectPlanMatchesCpu(attentionPlan(DType::kF16),
                       {{"generated", 0}, {"cublaslt", 0}, {"cudnn", 0}, {"hand-written", 4},
                        {"nccl", 0}, {"host-fallback", 0}},
                       1e-2, 1e-2);
  unsetenv("DLC_CUDA_ATTENTION");
}

TEST(CudaExecutor, NhwcConvolutionsAndBatchNormMatchTheCpuFp16) {
  expectNhwcMatchesCpu(DType::kF16, 1e-2, 1e-2);
}

TEST(CudaExecutor, EveryPathMatchesTheCpuFp16) { expectMatchesCpu(DType::kF16, 1e-2); }

TEST(CudaExecutor, InitializesParametersAsTheCpuDoes) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  PlanBuilder p;
  p.plan.model = "init";
  int32_t w = p.add("w", DType::kF32, {64, 32}, BufferRole::kParam);
  int32_t h = p.add("h", DType::kF16, {64, 32}, BufferRole::kParam);
  for (int32_t id : {w, h})
    p.plan.buffers[id].init = {{"init", std::string("kaiming_uniform")}};
  int32_t out = p.add("out", DType::kF32, {64, 32}, BufferRole::kTemporary);
  p.kernel("relu", {w}, {out});
  auto cpuExec = cpu::CpuExecutor::create(p.plan);
  ASSERT_TRUE(cpuExec.isOk()) << cpuExec.status().toString();
  auto gpuExec = cuda::CudaExecutor::create(p.plan);
  ASSERT_TRUE(gpuExec.isOk()) << gpuExec.status().toString();
  ASSERT_TRUE((*cpuExec)->initialize(3).isOk());
  Status initialized = (*gpuExec)->initialize(3);
  ASSERT_TRUE(initialized.isOk()) << initialized.toString();
  for (int32_t id : {w, h})
    EXPECT_EQ((*gpuExec)->bytesOf(id), (*cpuExec)->bytesOf(id)) << p.plan.buffers[id].name;
}

TEST(CudaExecutor, AnArenaLargerThanTheDeviceNamesBothSizes) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  PlanBuilder p;
  p.plan.model = "too_big";
  int32_t x = p.add("x", DType::kF32, {16}, BufferRole::kInput);
  int32_t y = p.add("y", DType::kF32, {16}, BufferRole::kTemporary);
  p.kernel("relu", {x}, {y});
  p.plan.arenaBytes = static_cast<int64_t>(devices->front().totalMemoryBytes) * 2;
  auto exec = cuda::CudaExecutor::create(p.plan);
  ASSERT_FALSE(exec.isOk());
  EXPECT_EQ(exec.status().code(), StatusCode::kResourceExhausted);
  const std::string &message = exec.status().message();
  EXPECT_NE(message.find("planned peak " + std::to_string(p.plan.arenaBytes) + " bytes"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("bytes free of"), std::string::npos) << message;
}

// The step counter lives on the device and a captured graph replays the
// step: three steps replayed, three launched one by one and three on the
// CPU give the same AdamW parameters (bias correction by step) and the same
// dropout masks (seeded by step).
TEST(CudaExecutor, AGraphReplayAdvancesTheStepAsLaunchingDoes) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  PlanBuilder p;
  p.plan.model = "graph";
  p.plan.batch = 4;
  p.plan.precision = "fp32";
  p.plan.fusion = "none";
  const DType f = DType::kF32;
  int32_t x = p.add("x", f, {4, 256}, BufferRole::kInput);
  int32_t d = p.add("d", f, {4, 256}, BufferRole::kGradient);
  int32_t w = p.add("w", f, {256}, BufferRole::kParam);
  p.plan.buffers[w].init = {{"init", std::string("normal")}, {"std", 0.02}};
  int32_t g = p.add("g", f, {256}, BufferRole::kInput);
  int32_t m = p.add("m", f, {256}, BufferRole::kOptimizerState);
  int32_t v = p.add("v", f, {256}, BufferRole::kOptimizerState);
  p.plan.buffers[m].init = p.plan.buffers[v].init = {{"init", std::string("zeros")}};
  // The updates write their inputs' storage, as compiled plans do.
  int32_t w2 = p.add("w'", f, {256}, BufferRole::kUpdate);
  int32_t m2 = p.add("m'", f, {256}, BufferRole::kUpdate);
  int32_t v2 = p.add("v'", f, {256}, BufferRole::kUpdate);
  p.plan.buffers[w2].offset = p.plan.buffers[w].offset;
  p.plan.buffers[m2].offset = p.plan.buffers[m].offset;
  p.plan.buffers[v2].offset = p.plan.buffers[v].offset;
  p.kernel("dropout", {x}, {d}, {{"rate", 0.5}, {"seed", int64_t(3)}});
  p.kernel("adamw_update", {w, g, m, v}, {w2, m2, v2}, {{"lr", 1e-2}, {"weight_decay", 0.1}});
  ASSERT_TRUE(validatePlan(p.plan).isOk()) << validatePlan(p.plan).toString();

  auto cpuExec = cpu::CpuExecutor::create(p.plan);
  ASSERT_TRUE(cpuExec.isOk()) << cpuExec.status().toString();
  cuda::CudaOptions eager;
  eager.cudaGraph = false;
  auto replayed = cuda::CudaExecutor::create(p.plan);
  auto launched = cuda::CudaExecutor::create(p.plan, eager);
  ASSERT_TRUE(replayed.isOk()) << replayed.status().toString();
  ASSERT_TRUE(launched.isOk()) << launched.status().toString();
  for (Executor *e : std::initializer_list<Executor *>{cpuExec->get(), replayed->get(),
                                                       launched->get()})
    ASSERT_TRUE(e->initialize(11).isOk());
  writeRandomInputs(**cpuExec, **replayed, 5);
  writeRandomInputs(**cpuExec, **launched, 5);
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE((*cpuExec)->step().isOk());
    Status a = (*replayed)->step(), b = (*launched)->step();
    ASSERT_TRUE(a.isOk()) << a.toString();
    ASSERT_TRUE(b.isOk()) << b.toString();
  }
  ASSERT_TRUE((*replayed)->synchronize().isOk());
  ASSERT_TRUE((*launched)->synchronize().isOk());
  EXPECT_TRUE((*replayed)->replaysCudaGraph()) << (*replayed)->cudaGraphNote();
  EXPECT_FALSE((*launched)->replaysCudaGraph());
  EXPECT_EQ((*launched)->cudaGraphNote(), "disabled (--no-cuda-graph)");
  for (int32_t id : {d, w}) {
    std::vector<float> want = asFloats((*cpuExec)->bytesOf(id), f);
    for (cuda::CudaExecutor *gpu : {replayed->get(), launched->get()}) {
      std::vector<float> got = asFloats(gpu->bytesOf(id), f);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5 * std::max(1.0f, std::fabs(want[i])))
            << p.plan.buffers[id].name << "[" << i << "], graph "
            << gpu->replaysCudaGraph();
    }
  }
}

// A rank's executor waits by polling its communicator beside the stream
// (NcclCommunicator::wait) where one without blocks: on one GPU, one rank
// launches, captures and replays the step and reads back what an executor
// without a communicator computes.
TEST(CudaExecutor, ARankWithACommunicatorWaitsByPolling) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  if (auto version = cuda::ncclVersion(); !version.isOk())
    GTEST_SKIP() << "needs NCCL: " << version.status().toString();
  Plan plan = everyPathPlan(DType::kF32);
  // Declared first, destroyed last: the communicator outlives the executor.
  auto group = cuda::createNcclGroup({devices->front().ordinal});
  ASSERT_TRUE(group.isOk()) << group.status().toString();
  auto polled = cuda::CudaExecutor::create(plan);
  auto blocked = cuda::CudaExecutor::create(plan);
  ASSERT_TRUE(polled.isOk()) << polled.status().toString();
  ASSERT_TRUE(blocked.isOk()) << blocked.status().toString();
  (*polled)->setCommunicator(group->front().get());
  writeRandomInputs(**blocked, **polled, 7);
  for (int i = 0; i < 3; ++i) {
    Status a = (*polled)->step(), b = (*blocked)->step();
    ASSERT_TRUE(a.isOk()) << "step " << i << ": " << a.toString();
    ASSERT_TRUE(b.isOk()) << "step " << i << ": " << b.toString();
  }
  Status synced = (*polled)->synchronize();
  ASSERT_TRUE(synced.isOk()) << synced.toString();
  ASSERT_TRUE((*blocked)->synchronize().isOk());
  EXPECT_TRUE((*polled)->replaysCudaGraph()) << (*polled)->cudaGraphNote();
  auto ms = (*polled)->stepMs();
  ASSERT_TRUE(ms.isOk()) << ms.status().toString();
  EXPECT_GT(*ms, 0.0f);
  for (size_t id = 0; id < plan.buffers.size(); ++id) {
    const PlanBuffer &b = plan.buffers[id];
    if (b.role != BufferRole::kTemporary || b.name == "s" || b.name.rfind("in_group_", 0) == 0)
      continue; // values inside a fused group: never written to memory
    std::vector<float> want = asFloats((*blocked)->bytesOf(id), b.dtype);
    std::vector<float> got = asFloats((*polled)->bytesOf(id), b.dtype);
    ASSERT_FALSE(got.empty()) << b.name << ": the polled read failed";
    ASSERT_EQ(got.size(), want.size()) << b.name;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-5 * std::max(1.0f, std::fabs(want[i])))
          << b.name << "[" << i << "]";
  }
  EXPECT_TRUE(group->front()->asyncError().isOk()) << group->front()->asyncError().toString();
}
