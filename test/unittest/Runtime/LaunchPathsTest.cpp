//===- LaunchPathsTest.cpp - the CUDA backend's routing, without a GPU ----===//
//
// LaunchPaths decides every launch's device path from the plan alone; these
// run on any machine. A group no device kernel computes is split into its
// kernels, and each part then writes what its siblings read.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/codegen/KernelCodegen.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include "TestPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <tuple>

using namespace dlc::rt;
using namespace dlc::rt::cuda;

namespace {

constexpr BufferRole kIn = BufferRole::kInput, kTmp = BufferRole::kTemporary;

using Builder = dlc_test::PlanBuilder;

PlanAttrs group(int64_t id, const std::string &kind) {
  return {{"fusion.group", id}, {"fusion.kind", kind}};
}

TEST(LaunchPaths, RoutesEachOpToItsPath) {
  Builder b;
  const DType f = DType::kF32;
  int32_t x = b.add("x", f, {4, 8}, kIn), y = b.add("y", f, {4, 8}, kIn);
  int32_t s = b.add("s", f, {4, 8}, kTmp), r = b.add("r", f, {4, 8}, kTmp);
  int32_t w = b.add("w", f, {8, 16}, kIn), m = b.add("m", f, {4, 16}, kTmp);
  int32_t p = b.add("p", f, {4, 16}, kTmp);
  int32_t img = b.add("img", f, {2, 3, 8, 8}, kIn), filt = b.add("filt", f, {4, 3, 3, 3}, kIn);
  int32_t c = b.add("c", f, {2, 4, 8, 8}, kTmp);
  int32_t ids = b.add("ids", DType::kI32, {4, 8}, kIn), im = b.add("im", DType::kI32, {8, 16}, kIn);
  int32_t bad = b.add("bad", DType::kI32, {4, 16}, kTmp);
  b.kernel("add", {x, y}, {s}, group(0, "elewise_act"));
  b.kernel("relu", {s}, {r}, group(0, "elewise_act"));
  b.kernel("matmul", {r, w}, {m});
  b.kernel("softmax", {m}, {p}, {{"axis", int64_t(-1)}});
  b.kernel("conv2d", {img, filt}, {c},
           {{"stride", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1}}});
  b.kernel("matmul", {ids, im}, {bad}); // integer GEMMs: no cuBLASLt, no kernel

  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 5u);
  EXPECT_EQ(device[0].path, DevicePath::kGenerated);
  EXPECT_EQ(device[0].launch.kernels.size(), 2u);
  EXPECT_EQ(device[1].path, DevicePath::kCublasLt);
  EXPECT_EQ(device[2].path, DevicePath::kHandWritten);
  EXPECT_EQ(device[3].path, DevicePath::kCudnnConvolution);
  EXPECT_EQ(device[4].path, DevicePath::kHostFallback);
  EXPECT_NE(device[4].reason.find("cuBLASLt refuses it: operands of i32 and i32"),
            std::string::npos)
      << device[4].reason;
  std::map<std::string, int64_t> counts = countByPath(device);
  EXPECT_EQ(counts["generated"], 1);
  EXPECT_EQ(counts["host-fallback"], 1);
  EXPECT_EQ(counts.size(), devicePathNames().size());
  // Text output names the three cuDNN paths alike, and the collective nccl.
  EXPECT_STREQ(devicePathName(DevicePath::kCudnnConvolution), "cudnn");
  EXPECT_STREQ(devicePathName(DevicePath::kCudnnBatchNorm), "cudnn");
  EXPECT_STREQ(devicePathName(DevicePath::kCudnnFusedBatchNorm), "cudnn");
  EXPECT_STREQ(devicePathName(DevicePath::kCollective), "nccl");
  EXPECT_EQ(counts["cudnn"], 1);
}

// train.attention and its gradient take the flash kernels (hand-written)
// in every float type, f32 included, where cuDNN's SDPA does not take them
// (here: f32, and dropout); a head dimension past the kernels' tiles goes to
// the host, and dlc-kernels --paths says how many went where, and why.
TEST(LaunchPaths, AttentionTakesTheFlashKernels) {
  Builder b;
  const DType f = DType::kF32, h = DType::kBF16;
  int32_t q = b.add("q", f, {2, 12, 33, 64}, kIn), m = b.add("m", f, {2, 1, 1, 40}, kIn);
  int32_t k = b.add("k", f, {2, 12, 40, 64}, kIn), v = b.add("v", f, {2, 12, 40, 64}, kIn);
  int32_t o = b.add("o", f, {2, 12, 33, 64}, kTmp), lse = b.add("lse", f, {2, 12, 33}, kTmp);
  int32_t dq = b.add("dq", f, {2, 12, 33, 64}, kTmp), dk = b.add("dk", f, {2, 12, 40, 64}, kTmp),
          dv = b.add("dv", f, {2, 12, 40, 64}, kTmp);
  int32_t hq = b.add("hq", h, {4, 50, 128}, kIn), ho = b.add("ho", h, {4, 50, 128}, kTmp),
          hl = b.add("hl", f, {4, 50}, kTmp);
  int32_t wide = b.add("wide", f, {4, 10, 160}, kIn), wo = b.add("wo", f, {4, 10, 160}, kTmp),
          wl = b.add("wl", f, {4, 10}, kTmp);
  PlanAttrs attrs = {{"scale", 0.125}, {"dropout_rate", 0.1}, {"seed", int64_t(3)}};
  b.kernel("attention", {q, k, v, m}, {o, lse}, attrs);
  b.kernel("attention_backward", {q, k, v, o, o, lse, m}, {dq, dk, dv}, attrs);
  PlanAttrs bfAttrs = {{"causal", int64_t(1)}, {"dropout_rate", 0.1}};
  b.kernel("attention", {hq, hq, hq}, {ho, hl}, bfAttrs);
  b.kernel("attention", {wide, wide, wide}, {wo, wl});

  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(device[i].path, DevicePath::kHandWritten) << i << ": " << device[i].reason;
    EXPECT_EQ(device[i].threadsPerBlock, 128) << i;
  }
  EXPECT_NE(device[0].reason.find("not on cuDNN's SDPA: q of f32"), std::string::npos)
      << device[0].reason;
  EXPECT_NE(device[2].reason.find("not on cuDNN's SDPA: dropout"), std::string::npos)
      << device[2].reason;
  // A block per 32 queries forward, per 16 keys or queries backward.
  EXPECT_EQ(device[0].blocks, 2 * 12 * 2);
  EXPECT_EQ(device[1].blocks, 2 * 12 * 3);
  EXPECT_EQ(device[2].blocks, 4 * 2);
  EXPECT_EQ(device[3].path, DevicePath::kHostFallback);
  EXPECT_NE(device[3].reason.find("a head dimension past 128"), std::string::npos)
      << device[3].reason;
  EXPECT_EQ(fallbacksOf(device[0].path, device[0].launch),
            (std::vector<DevicePath>{DevicePath::kHandWritten, DevicePath::kHostFallback}));
  std::ostringstream paths;
  printLaunchPaths(paths, "t", b.plan, false);
  EXPECT_NE(paths.str().find("  attention: 0 on cuDNN's SDPA, 3 on the flash kernels, 1 on the "
                             "host (first on the flash kernels: launch #0, not on cuDNN's SDPA: "
                             "q of f32"),
            std::string::npos)
      << paths.str();
  EXPECT_NE(paths.str().find("(first: launch #3, "), std::string::npos) << paths.str();
}

// Dropout-free f16 / bf16 attention and its gradient take cuDNN's SDPA
// graph, with the flash kernels and the host behind it; what the graph
// cannot take (a broadcast over the queries, causal rows that see no key,
// a head dimension not a multiple of 8, a mask of another type) stays on
// the flash kernels with the reason, and DLC_CUDA_ATTENTION=flash keeps
// every attention off cuDNN.
TEST(LaunchPaths, DropoutFreeHalfAttentionTakesCudnnSdpa) {
  Builder b;
  const DType h = DType::kF16, bf = DType::kBF16, f = DType::kF32;
  // [B, H, S, D] with a [B, 1, Sq, Sk] mask: cuDNN's bias [b, 1, Sq, Sk].
  int32_t q = b.add("q", h, {2, 4, 24, 64}, kIn), k = b.add("k", h, {2, 4, 40, 64}, kIn);
  int32_t v = b.add("v", h, {2, 4, 40, 64}, kIn), m = b.add("m", h, {2, 1, 24, 40}, kIn);
  int32_t o = b.add("o", h, {2, 4, 24, 64}, kTmp), lse = b.add("lse", f, {2, 4, 24}, kTmp);
  int32_t dq = b.add("dq", h, {2, 4, 24, 64}, kTmp), dk = b.add("dk", h, {2, 4, 40, 64}, kTmp),
          dv = b.add("dv", h, {2, 4, 40, 64}, kTmp);
  PlanAttrs attrs = {{"scale", 0.125}};
  b.kernel("attention", {q, k, v, m}, {o, lse}, attrs);
  b.kernel("attention_backward", {q, k, v, o, o, lse, m}, {dq, dk, dv}, attrs);
  // Rank 3, bf16, no mask: [H, S, D] is b = 1, h = 6.
  int32_t r = b.add("r", bf, {6, 17, 32}, kIn), ro = b.add("ro", bf, {6, 17, 32}, kTmp),
          rl = b.add("rl", f, {6, 17}, kTmp);
  b.kernel("attention", {r, r, r}, {ro, rl});
  // Refused: a mask broadcast over the queries (BERT's padding mask).
  int32_t pm = b.add("pm", h, {2, 1, 1, 40}, kIn), po = b.add("po", h, {2, 4, 24, 64}, kTmp),
          pl = b.add("pl", f, {2, 4, 24}, kTmp);
  b.kernel("attention", {q, k, v, pm}, {po, pl});
  // Refused: causal with more queries than keys.
  int32_t cq = b.add("cq", h, {2, 4, 50, 64}, kIn), co = b.add("co", h, {2, 4, 50, 64}, kTmp),
          cl = b.add("cl", f, {2, 4, 50}, kTmp);
  b.kernel("attention", {cq, k, v}, {co, cl}, {{"causal", int64_t(1)}});
  // Refused: head dimension 20.
  int32_t nq = b.add("nq", h, {3, 9, 20}, kIn), no = b.add("no", h, {3, 9, 20}, kTmp),
          nl = b.add("nl", f, {3, 9}, kTmp);
  b.kernel("attention", {nq, nq, nq}, {no, nl});
  // Refused: an f32 mask with f16 operands.
  int32_t fm = b.add("fm", f, {24, 40}, kIn), fo = b.add("fo", h, {2, 4, 24, 64}, kTmp),
          fl = b.add("fl", f, {2, 4, 24}, kTmp);
  b.kernel("attention", {q, k, v, fm}, {fo, fl});
  // Refused: causal with Sq < Sk and a mask.
  int32_t bo = b.add("bo", h, {2, 4, 24, 64}, kTmp), bl = b.add("bl", f, {2, 4, 24}, kTmp);
  b.kernel("attention", {q, k, v, m}, {bo, bl}, {{"causal", int64_t(1)}});

  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 8u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(device[i].path, DevicePath::kCudnnAttention) << i << ": " << device[i].reason;
    EXPECT_STREQ(devicePathName(device[i].path), "cudnn");
    EXPECT_EQ(fallbacksOf(device[i].path, device[i].launch),
              (std::vector<DevicePath>{DevicePath::kCudnnAttention, DevicePath::kHandWritten,
                                       DevicePath::kHostFallback}));
  }
  const char *why[] = {"a mask broadcast over the queries or keys",
                       "causal with more queries than keys", "head dimension 20",
                       "a mask of f32", "causal with Sq != Sk and a mask"};
  for (int i = 3; i < 8; ++i) {
    EXPECT_EQ(device[i].path, DevicePath::kHandWritten) << i << ": " << device[i].reason;
    EXPECT_NE(device[i].reason.find(std::string("not on cuDNN's SDPA: ") + why[i - 3]),
              std::string::npos)
        << i << ": " << device[i].reason;
  }
  // The graph's view of the first kernel: b 2, h 4, bias [2, 1, 24, 40].
  auto shape = sdpaShapeOf(b.plan, b.plan.kernels[0]);
  ASSERT_TRUE(shape.isOk()) << shape.status().toString();
  EXPECT_EQ(std::make_tuple(shape->b, shape->h, shape->sq, shape->sk, shape->d),
            std::make_tuple(int64_t(2), int64_t(4), int64_t(24), int64_t(40), int64_t(64)));
  EXPECT_EQ(std::make_tuple(shape->maskB, shape->maskH, shape->mask, shape->causal),
            std::make_tuple(int64_t(2), int64_t(1), m, false));
  auto rank3 = sdpaShapeOf(b.plan, b.plan.kernels[2]);
  ASSERT_TRUE(rank3.isOk());
  EXPECT_EQ(std::make_pair(rank3->b, rank3->h), std::make_pair(int64_t(1), int64_t(6)));
  std::ostringstream paths;
  printLaunchPaths(paths, "t", b.plan, false);
  EXPECT_NE(paths.str().find("  attention: 3 on cuDNN's SDPA, 5 on the flash kernels, 0 on the "
                             "host"),
            std::string::npos)
      << paths.str();

#if DLC_ENABLE_CUDA
  // The frontend's rule behind one of sdpaShapeOf's refusals: the first
  // kernel made causal (Sq 24 < Sk 40, with its mask).
  SdpaShape wrong = *shape;
  wrong.causal = true;
  EXPECT_NE(cudnn::sdpaGraphProblem(wrong, 90).find("Bottom right causal mask is only supported "
                                                    "with is_bias=False"),
            std::string::npos)
      << cudnn::sdpaGraphProblem(wrong, 90);
#endif

  setenv("DLC_CUDA_ATTENTION", "flash", 1);
  std::vector<DeviceLaunch> flash = planDeviceLaunches(b.plan);
  unsetenv("DLC_CUDA_ATTENTION");
  for (const DeviceLaunch &d : flash) {
    EXPECT_EQ(d.path, DevicePath::kHandWritten) << d.launch.index;
    EXPECT_NE(d.reason.find("DLC_CUDA_ATTENTION=flash"), std::string::npos) << d.reason;
  }
}

#if DLC_ENABLE_CUDA
// Routing never hands cuDNN a graph the frontend's own validation refuses
// for an A100 (sm80) or an H100 (sm90): every attention sdpaShapeOf takes,
// over types, ranks, sequence lengths (fewer, as many and more queries than
// keys), head dimensions, causality, dropout and masks of every broadcast,
// forward and backward, passes it; what the frontend would refuse,
// sdpaShapeOf refuses first. Checked on the host (Graph::set_sm_version),
// where otherwise a lent GPU would be the first to find it.
TEST(LaunchPaths, EveryAttentionRoutedToCudnnPassesTheFrontendsValidation) {
  int taken = 0, refused = 0;
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32})
    for (int rank : {3, 4})
      for (auto [sq, sk] : {std::pair<int64_t, int64_t>{24, 40}, {40, 40}, {50, 40}})
        for (int64_t d : {16, 32, 64, 128, 20})
          for (int causal : {0, 1})
            for (double rate : {0.0, 0.1})
              for (int maskForm : {0, 1, 2, 3, 4, 5})
                for (bool backward : {false, true}) {
                  Builder b;
                  const DType f = DType::kF32;
                  std::vector<int64_t> lead = rank == 4 ? std::vector<int64_t>{2, 3}
                                                        : std::vector<int64_t>{3};
                  auto shaped = [&](std::vector<int64_t> tail) {
                    std::vector<int64_t> s = lead;
                    s.insert(s.end(), tail.begin(), tail.end());
                    return s;
                  };
                  int32_t q = b.add("q", t, shaped({sq, d}), kIn);
                  int32_t k = b.add("k", t, shaped({sk, d}), kIn);
                  int32_t v = b.add("v", t, shaped({sk, d}), kIn);
                  // 0: none; 1: [Sq, Sk]; 2: [B.., Sq, Sk] of every batch
                  // dimension; 3: [B, 1, Sq, Sk]; 4: [B, 1, 1, Sk]; 5: f32.
                  std::vector<int64_t> ms;
                  if (maskForm == 1 || maskForm == 5)
                    ms = {sq, sk};
                  else if (maskForm == 2)
                    ms = shaped({sq, sk});
                  else if (maskForm == 3 && rank == 4)
                    ms = {2, 1, sq, sk};
                  else if (maskForm == 4 && rank == 4)
                    ms = {2, 1, 1, sk};
                  else if (maskForm != 0)
                    continue;
                  int32_t m = ms.empty() ? -1 : b.add("m", maskForm == 5 ? f : t, ms, kIn);
                  std::vector<int64_t> lseShape = shaped({sq});
                  PlanAttrs attrs = {{"scale", 0.125}, {"causal", int64_t(causal)},
                                     {"dropout_rate", rate}};
                  if (!backward) {
                    int32_t o = b.add("o", t, shaped({sq, d}), kTmp);
                    int32_t l = b.add("l", f, lseShape, kTmp);
                    std::vector<int32_t> in = {q, k, v};
                    if (m >= 0)
                      in.push_back(m);
                    b.kernel("attention", in, {o, l}, attrs);
                  } else {
                    int32_t o = b.add("o", t, shaped({sq, d}), kIn);
                    int32_t l = b.add("l", f, lseShape, kIn);
                    int32_t dq = b.add("dq", t, shaped({sq, d}), kTmp);
                    int32_t dk = b.add("dk", t, shaped({sk, d}), kTmp);
                    int32_t dv = b.add("dv", t, shaped({sk, d}), kTmp);
                    std::vector<int32_t> in = {q, k, v, o, o, l};
                    if (m >= 0)
                      in.push_back(m);
                    b.kernel("attention_backward", in, {dq, dk, dv}, attrs);
                  }
                  auto sdpa = sdpaShapeOf(b.plan, b.plan.kernels[0]);
                  if (!sdpa.isOk()) {
                    ++refused;
                    continue;
                  }
                  ++taken;
                  for (int sm : {80, 90})
                    EXPECT_EQ(cudnn::sdpaGraphProblem(*sdpa, sm), "")
                        << dtypeName(t) << " rank " << rank << " sq " << sq << " sk " << sk
                        << " d " << d << " causal " << causal << " mask form " << maskForm
                        << (backward ? " backward" : " forward") << ", sm" << sm;
                }
  // Both sides are exercised.
  EXPECT_GT(taken, 50);
  EXPECT_GT(refused, 50);
}
#endif

TEST(LaunchPaths, AGroupNoKernelComputesIsSplitAndItsPartsExportWhatSiblingsRead) {
  // An xla-style input fusion: add feeding softmax, in one group. The
  // generator's row form normalizes the last axis only, and this softmax
  // is over the first, so the group splits; `s` was internal to the group
  // and must now be written by the add part.
  Builder b;
  const DType f = DType::kF32;
  int32_t x = b.add("x", f, {4, 8}, kIn), y = b.add("y", f, {4, 8}, kIn);
  int32_t s = b.add("s", f, {4, 8}, kTmp), p = b.add("p", f, {4, 8}, kTmp);
  int32_t q = b.add("q", f, {4, 8}, BufferRole::kGradient); // read after the step
  b.kernel("add", {x, y}, {s}, group(0, "input"));
  b.kernel("softmax", {s}, {p}, {{"axis", int64_t(0)}, {"fusion.group", int64_t(0)},
                                  {"fusion.kind", std::string("input")}});
  b.kernel("relu", {p}, {q});

  // Against the plan's own launches the add is internal: nothing leaves it.
  std::vector<Launch> original = planLaunches(b.plan);
  ASSERT_EQ(original.size(), 2u);
  EXPECT_FALSE(isGeneratable(b.plan, original[0]).ok);

  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 3u);
  EXPECT_TRUE(device[0].splitFromGroup);
  EXPECT_TRUE(device[1].splitFromGroup);
  EXPECT_FALSE(device[2].splitFromGroup);
  EXPECT_EQ(device[0].path, DevicePath::kGenerated);
  EXPECT_EQ(device[1].path, DevicePath::kHandWritten);
  EXPECT_EQ(device[2].path, DevicePath::kGenerated);
  EXPECT_EQ(device[0].launch.group, 0);
  // The add generated, the softmax hand-written: one call and one kernel,
  // counted as such rather than as a split.
  EXPECT_TRUE(device[0].callPlusKernel);
  EXPECT_TRUE(device[1].callPlusKernel);
  EXPECT_FALSE(device[2].callPlusKernel);
  EXPECT_NE(device[0].reason.find("call + kernel ("), std::string::npos) << device[0].reason;
  EXPECT_NE(device[0].reason.find("softmax"), std::string::npos) << device[0].reason;
  for (size_t i = 0; i < device.size(); ++i)
    EXPECT_EQ(device[i].launch.index, i);

  auto part = generateKernel(b.plan, device[0].launch, launchesOf(device));
  ASSERT_TRUE(part.isOk()) << part.status().toString();
  EXPECT_NE(std::find(part->args.begin(), part->args.end(), s), part->args.end())
      << "the add part must write s, which the softmax part reads";
}

TEST(LaunchPaths, LibraryRefusalsNameTheProblem) {
  Builder b;
  int32_t v = b.add("v", DType::kF32, {8}, kIn), w = b.add("w", DType::kF32, {8, 4}, kIn);
  int32_t o = b.add("o", DType::kF32, {4}, kTmp);
  b.kernel("matmul", {v, w}, {o});
  EXPECT_EQ(gemmRefusal(b.plan, b.plan.kernels[0]), "an operand of rank below 2");
  int32_t h = b.add("h", DType::kF16, {2, 3, 8, 8}, kIn), k = b.add("k", DType::kF32, {4, 3, 3, 3}, kIn);
  int32_t c = b.add("c", DType::kF16, {2, 4, 6, 6}, kTmp);
  b.kernel("conv2d", {h, k}, {c});
  EXPECT_EQ(convRefusal(b.plan, b.plan.kernels[1]),
            "operands of mixed or unsupported types (f16, f32, f16)");
  int32_t i3 = b.add("i3", DType::kF32, {2, 3, 8}, kIn), k3 = b.add("k3", DType::kF32, {4, 3, 3}, kIn);
  int32_t c3 = b.add("c3", DType::kF32, {2, 4, 6}, kTmp);
  b.kernel("conv2d", {i3, k3}, {c3});
  EXPECT_EQ(convRefusal(b.plan, b.plan.kernels[2]), "operands that are not 4-d (NCHW or NHWC)");

  // Batch norm on cuDNN: f32 or f16 data, f32 statistics (mixed precision).
  for (DType data : {DType::kF32, DType::kF16, DType::kBF16}) {
    Builder n;
    int32_t x = n.add("x", data, {2, 3, 4, 4}, kIn), y = n.add("y", data, {2, 3, 4, 4}, kTmp);
    std::vector<int32_t> stats;
    for (const char *name : {"scale", "bias", "mean", "var", "new_mean", "new_var"})
      stats.push_back(n.add(name, DType::kF32, {3}, kIn));
    n.kernel("batch_norm", {x, stats[0], stats[1], stats[2], stats[3]}, {y, stats[4], stats[5]},
             {{"epsilon", 1e-5}, {"momentum", 0.1}});
    std::string refusal = batchNormRefusal(n.plan, n.plan.kernels[0]);
    if (data == DType::kBF16) {
      EXPECT_EQ(refusal, "data of bf16 (cuDNN's batch norm: f32 or f16)");
      EXPECT_EQ(planDeviceLaunches(n.plan)[0].path, DevicePath::kHandWritten);
    } else {
      EXPECT_EQ(refusal, "") << dtypeName(data);
      EXPECT_EQ(planDeviceLaunches(n.plan)[0].path, DevicePath::kCudnnBatchNorm);
    }
    // The experiment switch sends every batch norm to the hand-written kernel.
    setenv("DLC_CUDA_BATCH_NORM", "hand-written", 1);
    EXPECT_EQ(batchNormRefusal(n.plan, n.plan.kernels[0]), "DLC_CUDA_BATCH_NORM=hand-written");
    EXPECT_EQ(planDeviceLaunches(n.plan)[0].path, DevicePath::kHandWritten);
    unsetenv("DLC_CUDA_BATCH_NORM");
    n.plan.buffers[stats[0]].dtype = data; // pure half statistics: not cuDNN's
    if (data == DType::kF16) {
      EXPECT_EQ(batchNormRefusal(n.plan, n.plan.kernels[0]),
                "'scale' is not one f32 value per channel");
    }
  }
}

// NHWC (dlc-convert-layout's): convolutions and batch norm go to cuDNN with
// the channel count from the last dimension; the hand-written batch norm,
// which is NCHW, says so; an unknown layout is refused by name.
TEST(LaunchPaths, NhwcGoesToCudnnOrTheHandWrittenBatchNorm) {
  Builder b;
  const DType h = DType::kF16;
  int32_t x = b.add("x", h, {2, 8, 8, 3}, kIn), w = b.add("w", h, {4, 3, 3, 3}, kIn);
  int32_t y = b.add("y", h, {2, 8, 8, 4}, kTmp), by = b.add("by", h, {2, 8, 8, 4}, kTmp);
  std::vector<int32_t> stats;
  for (const char *name : {"scale", "bias", "mean", "var", "new_mean", "new_var"})
    stats.push_back(b.add(name, DType::kF32, {4}, kIn));
  PlanAttrs nhwc = {{"padding", std::vector<int64_t>{1, 1}}, {"layout", std::string("NHWC")}};
  b.kernel("conv2d", {x, w}, {y}, nhwc);
  b.kernel("batch_norm", {y, stats[0], stats[1], stats[2], stats[3]}, {by, stats[4], stats[5]},
           {{"layout", std::string("NHWC")}});
  EXPECT_EQ(convRefusal(b.plan, b.plan.kernels[0]), "");
  EXPECT_EQ(batchNormChannels(b.plan, b.plan.kernels[1]), 4);
  EXPECT_EQ(batchNormRefusal(b.plan, b.plan.kernels[1]), "");
  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 2u);
  EXPECT_EQ(device[0].path, DevicePath::kCudnnConvolution);
  EXPECT_EQ(device[1].path, DevicePath::kCudnnFusedBatchNorm);

  // The hand-written batch norm runs channels last too (it once sent
  // NHWC to the host).
  setenv("DLC_CUDA_BATCH_NORM", "hand-written", 1);
  device = planDeviceLaunches(b.plan);
  unsetenv("DLC_CUDA_BATCH_NORM");
  EXPECT_EQ(device[1].path, DevicePath::kHandWritten) << device[1].reason;

  // amp-bf16's NHWC batch norm: cuDNN's takes f32 or f16 data, so the
  // hand-written one runs it, not the host.
  for (int32_t id : {x, w, y, by})
    b.plan.buffers[id].dtype = DType::kBF16;
  EXPECT_NE(batchNormRefusal(b.plan, b.plan.kernels[1]).find("data of bf16"), std::string::npos);
  device = planDeviceLaunches(b.plan);
  EXPECT_EQ(device[1].path, DevicePath::kHandWritten) << device[1].reason;

  b.plan.kernels[0].attrs["layout"] = std::string("CHWN");
  EXPECT_EQ(convRefusal(b.plan, b.plan.kernels[0]), "layout 'CHWN'");
}

/// bn_act and its gradient over [2, 4, 4, channels] `data` with the layout,
/// as groups of `forwardKind` and `backwardKind` (paddle's, by default).
Plan bnActPair(DType data, const std::string &layout, int64_t channels,
               const std::string &forwardKind = "bn_act",
               const std::string &backwardKind = "bn_act_grad") {
  Builder b;
  const DType f = DType::kF32;
  std::vector<int64_t> shape = {2, 4, 4, channels};
  int32_t x = b.add("x", data, shape, kIn), y = b.add("y", data, shape, kTmp);
  int32_t r = b.add("r", data, shape, kTmp), dr = b.add("dr", data, shape, kIn);
  int32_t ds = b.add("ds", data, shape, kTmp), dx = b.add("dx", data, shape, kTmp);
  std::vector<int32_t> c;
  for (const char *name : {"scale", "bias", "mean", "var", "new_mean", "new_var", "dscale", "dbias"})
    c.push_back(b.add(name, f, {channels}, kIn));
  PlanAttrs bn = group(0, forwardKind);
  bn["layout"] = layout;
  b.kernel("batch_norm", {x, c[0], c[1], c[2], c[3]}, {y, c[4], c[5]}, bn);
  b.kernel("relu", {y}, {r}, group(0, forwardKind));
  PlanAttrs bnGrad = group(1, backwardKind);
  bnGrad["layout"] = layout;
  b.kernel("relu_backward", {dr, r}, {ds}, group(1, backwardKind));
  b.kernel("batch_norm_backward", {ds, x, c[0]}, {dx, c[6], c[7]}, bnGrad);
  return b.plan;
}

// PaddlePaddle's bn_act groups run as cuDNN's fused batch norm when cuDNN's
// persistent NHWC kernels take them (FP16 NHWC, channels a multiple of 4);
// otherwise they are split, and the reason says which condition failed.
TEST(LaunchPaths, BatchNormActGroupsAreOneCudnnCallInFp16Nhwc) {
  Plan fused = bnActPair(DType::kF16, "NHWC", 8);
  std::vector<DeviceLaunch> device = planDeviceLaunches(fused);
  ASSERT_EQ(device.size(), 2u);
  EXPECT_EQ(device[0].path, DevicePath::kCudnnFusedBatchNorm);
  EXPECT_EQ(device[1].path, DevicePath::kCudnnFusedBatchNorm);
  std::vector<Launch> launches = launchesOf(device);
  auto forward = fusedBatchNormFor(fused, launches[0], launches);
  auto backward = fusedBatchNormFor(fused, launches[1], launches);
  ASSERT_TRUE(forward.isOk()) << forward.status().toString();
  ASSERT_TRUE(backward.isOk()) << backward.status().toString();
  EXPECT_FALSE(forward->backward);
  EXPECT_TRUE(backward->backward);
  EXPECT_EQ(forward->x, backward->x);
  EXPECT_EQ(forward->y, backward->y) << "the gradient reads the relu output the forward wrote";
  EXPECT_EQ(backward->bias, forward->bias) << "cuDNN's gradient reads the forward's bias";
  EXPECT_EQ(backward->forwardLaunch, 0u);

  auto refusedFor = [](const Plan &plan, size_t i) {
    std::vector<DeviceLaunch> d = planDeviceLaunches(plan);
    std::vector<Launch> l = launchesOf(d);
    // Split: batch_norm, relu, relu_backward, batch_norm_backward.
    EXPECT_EQ(d.size(), 4u);
    EXPECT_TRUE(d[0].splitFromGroup);
    return d[i].splitReason;
  };
  EXPECT_NE(refusedFor(bnActPair(DType::kF32, "NHWC", 8), 0)
                .find("cuDNN's fused batch norm runs f16 data; this is f32"),
            std::string::npos);
  EXPECT_NE(refusedFor(bnActPair(DType::kF16, "NCHW", 8), 0)
                .find("cuDNN's fused batch norm runs NHWC data; this is NCHW"),
            std::string::npos);
  EXPECT_NE(refusedFor(bnActPair(DType::kF16, "NHWC", 6), 0)
                .find("channels a multiple of 4; this has 6"),
            std::string::npos);

  // cuDNN's fused gradient reads the forward's bias, which its kernels do
  // not list: a temporary bias (its bytes reusable in between) is refused.
  Plan temporaryBias = bnActPair(DType::kF16, "NHWC", 8);
  temporaryBias.buffers[temporaryBias.kernels[0].inputs[2]].role = BufferRole::kTemporary;
  std::vector<DeviceLaunch> split = planDeviceLaunches(temporaryBias);
  EXPECT_EQ(split.front().path, DevicePath::kCudnnFusedBatchNorm) << "the forward group still fuses";
  EXPECT_NE(split.back().splitReason.find("reads the forward's bias 'bias', a temporary buffer"),
            std::string::npos)
      << split.back().splitReason;

  // A gradient group without its forward group has no reserve space to read.
  Plan orphan = bnActPair(DType::kF16, "NHWC", 8);
  for (size_t k : {0u, 1u})
    orphan.kernels[k].attrs.erase("fusion.group");
  std::vector<DeviceLaunch> d = planDeviceLaunches(orphan);
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d.back().splitReason.find("no bn_act group of the same input and output runs "
                                      "before it"),
            std::string::npos)
      << d.back().splitReason;
}

// xla's input groups of exactly batch_norm -> relu and relu_backward ->
// batch_norm_backward are the same patterns: they run as cuDNN's fused calls
// too, not split into a lone batch norm and a generated relu (ResNet-50 AMP
// on an H100: xla 57.8 ms a step against paddle's 54.9, 2026-11-26). Where
// cuDNN cannot take them they split as before.
TEST(LaunchPaths, XlaInputGroupsOfTheBatchNormPatternsRunAsCudnnFusedCalls) {
  Plan xla = bnActPair(DType::kF16, "NHWC", 8, "input", "input");
  std::vector<DeviceLaunch> device = planDeviceLaunches(xla);
  ASSERT_EQ(device.size(), 2u);
  for (const DeviceLaunch &d : device) {
    EXPECT_EQ(d.path, DevicePath::kCudnnFusedBatchNorm) << d.reason;
    EXPECT_FALSE(d.splitFromGroup);
    EXPECT_EQ(d.launch.kind, "input") << "the strategy's group keeps its name";
  }
  EXPECT_EQ(device[0].launch.fusion, FusionKind::kBnAct);
  EXPECT_EQ(device[1].launch.fusion, FusionKind::kBnActGrad);
  std::vector<Launch> launches = launchesOf(device);
  auto backward = fusedBatchNormFor(xla, launches[1], launches);
  ASSERT_TRUE(backward.isOk()) << backward.status().toString();
  EXPECT_EQ(backward->forwardLaunch, 0u);

  // fp32: no fused call, so the groups split as before.
  std::vector<DeviceLaunch> split = planDeviceLaunches(bnActPair(DType::kF32, "NHWC", 8, "input", "input"));
  EXPECT_EQ(split.size(), 4u);
  EXPECT_EQ(split[0].launch.fusion, FusionKind::kInput);

  // A group with another op beside the pattern is not the pattern.
  Plan more = bnActPair(DType::kF16, "NHWC", 8, "input", "input");
  int32_t r = more.kernels[1].outputs[0];
  more.buffers.push_back(more.buffers[r]);
  more.buffers.back().name = "r2";
  int32_t r2 = static_cast<int32_t>(more.buffers.size()) - 1;
  PlanKernel again = more.kernels[1]; // a second relu, of the first's output
  again.inputs = {r};
  again.outputs = {r2};
  more.kernels.insert(more.kernels.begin() + 2, again);
  device = planDeviceLaunches(more);
  EXPECT_NE(device[0].launch.fusion, FusionKind::kBnAct);
  EXPECT_TRUE(device[0].splitFromGroup);

  // A gradient group with more than the pattern (xla's add -> relu_backward
  // -> batch_norm_backward) splits, and its lone batch-norm gradient needs
  // a lone forward for the saved statistics: the forward group is then not
  // recognised either, so that no batch norm lands on the plain calls.
  Plan unpaired = bnActPair(DType::kF16, "NHWC", 8, "input", "input");
  size_t dact = 2; // relu_backward(dr, r)
  int32_t dr = unpaired.kernels[dact].inputs[0];
  unpaired.buffers.push_back(unpaired.buffers[dr]);
  unpaired.buffers.back().name = "dr2";
  unpaired.buffers.back().role = kTmp;
  int32_t dr2 = static_cast<int32_t>(unpaired.buffers.size()) - 1;
  PlanKernel before = unpaired.kernels[1]; // a relu, in the gradient's group
  before.inputs = {dr};
  before.outputs = {dr2};
  before.attrs = group(1, "input");
  unpaired.kernels[dact].inputs[0] = dr2;
  unpaired.kernels.insert(unpaired.kernels.begin() + dact, before);
  device = planDeviceLaunches(unpaired);
  std::vector<Launch> all = launchesOf(device);
  for (const DeviceLaunch &d : device) {
    if (!holdsBatchNorm(unpaired, d.launch))
      continue;
    EXPECT_EQ(d.path, DevicePath::kCudnnFusedBatchNorm) << d.reason;
    EXPECT_TRUE(fusedBatchNormFor(unpaired, d.launch, all).isOk())
        << "launch #" << d.launch.index << " would take cuDNN's plain calls";
  }
  EXPECT_EQ(device[0].launch.fusion, FusionKind::kInput) << "the forward group stays split";
}

// A lone FP16 NHWC batch norm runs on the same cuDNN calls without the
// activation (the legacy calls are 10-60x slower over NHWC data); its
// gradient finds the forward whose saved statistics it reads. fp32 or NCHW
// keeps the plain calls.
TEST(LaunchPaths, LoneNhwcHalfBatchNormIsAFusedCallWithoutActivation) {
  auto lonePair = [](DType data, const std::string &layout) {
    Builder b;
    const DType f = DType::kF32;
    std::vector<int64_t> shape = {2, 4, 4, 8};
    int32_t x = b.add("x", data, shape, kIn), y = b.add("y", data, shape, kTmp);
    int32_t dy = b.add("dy", data, shape, kIn), dx = b.add("dx", data, shape, kTmp);
    std::vector<int32_t> c;
    for (const char *name :
         {"scale", "bias", "mean", "var", "new_mean", "new_var", "dscale", "dbias"})
      c.push_back(b.add(name, f, {8}, kIn));
    PlanAttrs attrs = {{"layout", layout}};
    b.kernel("batch_norm", {x, c[0], c[1], c[2], c[3]}, {y, c[4], c[5]}, attrs);
    b.kernel("batch_norm_backward", {dy, x, c[0]}, {dx, c[6], c[7]}, attrs);
    return b.plan;
  };
  Plan plan = lonePair(DType::kF16, "NHWC");
  std::vector<DeviceLaunch> device = planDeviceLaunches(plan);
  ASSERT_EQ(device.size(), 2u);
  EXPECT_EQ(device[0].path, DevicePath::kCudnnFusedBatchNorm);
  EXPECT_EQ(device[1].path, DevicePath::kCudnnFusedBatchNorm);
  std::vector<Launch> launches = launchesOf(device);
  auto forward = fusedBatchNormFor(plan, launches[0], launches);
  auto backward = fusedBatchNormFor(plan, launches[1], launches);
  ASSERT_TRUE(forward.isOk()) << forward.status().toString();
  ASSERT_TRUE(backward.isOk()) << backward.status().toString();
  EXPECT_FALSE(forward->act);
  EXPECT_FALSE(backward->act);
  EXPECT_TRUE(backward->backward);
  EXPECT_EQ(forward->y, plan.kernels[0].outputs[0]);
  EXPECT_EQ(backward->x, forward->x);
  EXPECT_EQ(backward->y, forward->y) << "(x, y) keys the forward's reserve slice";
  EXPECT_EQ(backward->dy, plan.kernels[1].inputs[0]);
  EXPECT_EQ(backward->forwardLaunch, 0u);

  for (auto [data, layout, why] :
       {std::tuple{DType::kF32, "NHWC", "runs f16 data"}, {DType::kF16, "NCHW", "runs NHWC data"}}) {
    Plan other = lonePair(data, layout);
    std::vector<DeviceLaunch> d = planDeviceLaunches(other);
    std::vector<Launch> l = launchesOf(d);
    auto refused = fusedBatchNormFor(other, l[0], l);
    ASSERT_FALSE(refused.isOk()) << layout;
    if (data == DType::kF32) {
      EXPECT_EQ(d[0].path, DevicePath::kCudnnBatchNorm) << "the plain calls";
      EXPECT_EQ(d[1].path, DevicePath::kCudnnBatchNorm) << "the plain calls";
    }
    EXPECT_NE(refused.status().message().find(why), std::string::npos)
        << refused.status().message();
  }
  // A gradient with no lone forward of its input before it is refused.
  Plan orphan = lonePair(DType::kF16, "NHWC");
  orphan.kernels[0].inputs[0] = orphan.kernels[1].inputs[0]; // forward normalizes dy
  std::vector<DeviceLaunch> d = planDeviceLaunches(orphan);
  std::vector<Launch> l = launchesOf(d);
  auto noForward = fusedBatchNormFor(orphan, l[1], l);
  ASSERT_FALSE(noForward.isOk());
  EXPECT_NE(noForward.status().message().find("no lone batch_norm of the same input"),
            std::string::npos);
}

} // namespace

namespace {

/// linear(x, w, b) -> pre -> act -> y; `keepPre`: a later kernel reads pre
/// (as GELU's gradient does).
Plan gemmBiasAct(const std::string &act, const std::string &approximate, bool keepPre) {
  Builder b;
  const DType f = DType::kF32;
  int32_t x = b.add("x", f, {8, 16}, kIn), w = b.add("w", f, {32, 16}, kIn);
  int32_t bias = b.add("b", f, {32}, kIn), pre = b.add("pre", f, {8, 32}, kTmp);
  int32_t y = b.add("y", f, {8, 32}, kTmp), z = b.add("z", f, {8, 32}, BufferRole::kGradient);
  PlanAttrs g = group(0, "gemm_bias_act");
  b.kernel("linear", {x, w, bias}, {pre}, g);
  PlanAttrs a = g;
  if (!approximate.empty())
    a["approximate"] = approximate;
  b.kernel(act, {pre}, {y}, a);
  b.kernel("add", {y, keepPre ? pre : y}, {z});
  return b.plan;
}

} // namespace

TEST(LaunchPaths, GemmEpiloguesFollowTheActivationAndWhatIsReadLater) {
  struct Expect {
    const char *act, *approximate;
    bool keepPre;
    const char *epilogue; // "" when refused
    const char *refusal;
  } cases[] = {
      {"relu", "", false, "relu_bias", ""},
      {"relu", "", true, "", "cuBLASLt's RELU_AUX keeps only a bitmask"},
      {"gelu", "tanh", false, "gelu_bias", ""},
      {"gelu", "tanh", true, "gelu_aux_bias", ""},
      {"gelu", "none", false, "", "an exact (erf) GELU"},
  };
  for (const Expect &c : cases) {
    Plan plan = gemmBiasAct(c.act, c.approximate, c.keepPre);
    std::vector<Launch> launches = planLaunches(plan);
    ASSERT_EQ(launches.size(), 2u);
    auto e = gemmEpilogueFor(plan, launches[0]);
    std::vector<DeviceLaunch> device = planDeviceLaunches(plan);
    std::string label = std::string(c.act) + " " + c.approximate + (c.keepPre ? " kept" : "");
    if (*c.epilogue) {
      ASSERT_TRUE(e.isOk()) << label << ": " << e.status().toString();
      EXPECT_EQ(e->epilogue, c.epilogue) << label;
      EXPECT_EQ(e->gemm, 0u);
      EXPECT_EQ(plan.buffers[e->output].name, "y");
      EXPECT_EQ(e->aux >= 0 ? plan.buffers[e->aux].name : "", c.keepPre ? "pre" : "") << label;
      // The whole group is one cuBLASLt launch.
      ASSERT_EQ(device.size(), 2u) << label;
      EXPECT_EQ(device[0].path, DevicePath::kCublasLt) << label;
      EXPECT_EQ(device[0].launch.kernels.size(), 2u);
    } else {
      ASSERT_FALSE(e.isOk()) << label;
      EXPECT_NE(e.status().message().find(c.refusal), std::string::npos)
          << label << ": " << e.status().message();
      // Split: the GEMM on cuBLASLt, the activation generated.
      ASSERT_EQ(device.size(), 3u) << label;
      EXPECT_EQ(device[0].path, DevicePath::kCublasLt);
      EXPECT_EQ(device[1].path, DevicePath::kGenerated);
      EXPECT_NE(device[0].splitReason.find("no cuBLASLt epilogue"), std::string::npos);
    }
  }
}

TEST(LaunchPaths, DgeluWithTheBiasGradientIsOneEpilogue) {
  Builder b;
  const DType f = DType::kF32;
  int32_t dy = b.add("dy", f, {8, 32}, kIn), w = b.add("w", f, {32, 16}, kIn);
  int32_t pre = b.add("pre", f, {8, 16}, kIn), g = b.add("g", f, {8, 16}, kTmp);
  int32_t dpre = b.add("dpre", f, {8, 16}, BufferRole::kGradient);
  int32_t db = b.add("db", f, {16}, BufferRole::kGradient);
  PlanAttrs grp = group(0, "gemm_dact_bgrad");
  b.kernel("matmul", {dy, w}, {g}, grp);
  PlanAttrs tanh = grp;
  tanh["approximate"] = std::string("tanh");
  b.kernel("gelu_backward", {g, pre}, {dpre}, tanh);
  b.kernel("sum_to_shape", {dpre}, {db}, grp);
  auto e = gemmEpilogueFor(b.plan, planLaunches(b.plan)[0]);
  ASSERT_TRUE(e.isOk()) << e.status().toString();
  EXPECT_EQ(e->epilogue, "dgelu_bgrad");
  EXPECT_EQ(e->output, dpre);
  EXPECT_EQ(e->aux, pre);
  EXPECT_EQ(e->biasGrad, db);
  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 1u);
  EXPECT_EQ(device[0].path, DevicePath::kCublasLt);

  // ReLU's gradient has no epilogue without the forward's bitmask.
  b.plan.kernels[1].setOp(OpId::kReluBackward);
  auto relu = gemmEpilogueFor(b.plan, planLaunches(b.plan)[0]);
  ASSERT_FALSE(relu.isOk());
  EXPECT_NE(relu.status().message().find("bitmask"), std::string::npos);
  // Split: the GEMM on cuBLASLt, the gradient and its bias sum one
  // generated reduction.
  std::vector<DeviceLaunch> split = planDeviceLaunches(b.plan);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].path, DevicePath::kCublasLt);
  EXPECT_EQ(split[1].path, DevicePath::kGenerated);
  EXPECT_EQ(split[1].launch.kernels.size(), 2u);
  EXPECT_TRUE(split[1].splitFromGroup);
}

TEST(LaunchPaths, GeluAuxRowsNotAMultipleOf8AreSplit) {
  // cuBLASLt's EPILOGUE_AUX_LD (the result's last dimension) must be
  // divisible by 8: the group is split rather than refused on the device.
  Builder b;
  const DType f = DType::kF32;
  int32_t dy = b.add("dy", f, {8, 32}, kIn), w = b.add("w", f, {32, 12}, kIn);
  int32_t pre = b.add("pre", f, {8, 12}, kIn), g = b.add("g", f, {8, 12}, kTmp);
  int32_t dpre = b.add("dpre", f, {8, 12}, BufferRole::kGradient);
  PlanAttrs grp = group(0, "gemm_dact_bgrad");
  b.kernel("matmul", {dy, w}, {g}, grp);
  PlanAttrs tanh = grp;
  tanh["approximate"] = std::string("tanh");
  b.kernel("gelu_backward", {g, pre}, {dpre}, tanh);
  auto e = gemmEpilogueFor(b.plan, planLaunches(b.plan)[0]);
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.status().message().find("multiple of 8"), std::string::npos)
      << e.status().message();
  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 2u);
  EXPECT_EQ(device[0].path, DevicePath::kCublasLt);
}

// A split group keeps its runs of element-wise kernels (dropout included)
// together: one generated launch each, the op the generator refuses alone.
// What the executor tries when a library refuses a shape at run time:
// every chain starts on the routed path and ends on a checked one (the
// hand-written kernel for a single op, the host for every launch).
TEST(LaunchPaths, EveryLibraryPathFallsBackToACheckedPath) {
  Launch lone, group;
  lone.kernels = {0};
  group.kernels = {0, 1};
  using P = DevicePath;
  EXPECT_EQ(fallbacksOf(P::kCublasLt, lone),
            (std::vector<P>{P::kCublasLt, P::kHandWritten, P::kHostFallback}));
  EXPECT_EQ(fallbacksOf(P::kCublasLt, group), (std::vector<P>{P::kCublasLt, P::kHostFallback}));
  EXPECT_EQ(fallbacksOf(P::kCudnnConvolution, lone),
            (std::vector<P>{P::kCudnnConvolution, P::kHandWritten, P::kHostFallback}));
  EXPECT_EQ(fallbacksOf(P::kCudnnBatchNorm, lone),
            (std::vector<P>{P::kCudnnBatchNorm, P::kHandWritten, P::kHostFallback}));
  EXPECT_EQ(fallbacksOf(P::kCudnnFusedBatchNorm, lone),
            (std::vector<P>{P::kCudnnFusedBatchNorm, P::kCudnnBatchNorm, P::kHandWritten,
                            P::kHostFallback}));
  EXPECT_EQ(fallbacksOf(P::kCudnnFusedBatchNorm, group),
            (std::vector<P>{P::kCudnnFusedBatchNorm, P::kHostFallback}));
  EXPECT_EQ(fallbacksOf(P::kCudnnAttention, lone),
            (std::vector<P>{P::kCudnnAttention, P::kHandWritten, P::kHostFallback}));
  EXPECT_EQ(fallbacksOf(P::kHandWritten, lone),
            (std::vector<P>{P::kHandWritten, P::kHostFallback}));
  for (P path : {P::kGenerated, P::kCollective, P::kHostFallback})
    EXPECT_EQ(fallbacksOf(path, lone), std::vector<P>{path}) << devicePathName(path);
}

TEST(LaunchPaths, ASplitGroupKeepsItsElementwiseRunsTogether) {
  Builder b;
  const DType f = DType::kF32;
  int32_t x = b.add("x", f, {4, 8}, kIn), c0 = b.add("c0", f, {4, 8}, kTmp);
  int32_t s = b.add("s", f, {4, 8}, kTmp), c1 = b.add("c1", f, {4, 8}, kTmp);
  int32_t d = b.add("d", f, {4, 8}, BufferRole::kGradient);
  PlanAttrs g = group(0, "input");
  b.kernel("relu", {x}, {c0}, g);
  PlanAttrs axis0 = g;
  axis0["axis"] = int64_t(0); // the row form takes the last axis only
  b.kernel("softmax", {c0}, {s}, axis0);
  b.kernel("scale", {s}, {c1}, g);
  PlanAttrs drop = g;
  drop["rate"] = 0.1;
  drop["seed"] = int64_t(1);
  b.kernel("dropout", {c1}, {d}, drop);
  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 3u);
  EXPECT_EQ(device[0].path, DevicePath::kGenerated);
  EXPECT_EQ(device[1].path, DevicePath::kHandWritten);
  EXPECT_EQ(device[2].path, DevicePath::kGenerated);
  EXPECT_EQ(device[2].launch.kernels.size(), 2u) << "scale and dropout, one launch";
  // Two generated kernels around the call: a split, not a call + kernel.
  for (const DeviceLaunch &l : device) {
    EXPECT_TRUE(l.splitFromGroup);
    EXPECT_FALSE(l.callPlusKernel);
    EXPECT_EQ(l.splitReason.rfind("split from its group (", 0), 0u) << l.splitReason;
  }
  // The run writes only what leaves it: d, not c1.
  auto run = generateKernel(b.plan, device[2].launch, launchesOf(device));
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(std::find(run->args.begin(), run->args.end(), c1), run->args.end());
  EXPECT_NE(std::find(run->args.begin(), run->args.end(), d), run->args.end());
}

// A split group is a call + kernel pair when its parts are one call and at
// most one kernel; two kernels around the call, two calls, or a part on
// the host fallback leave it split.
TEST(LaunchPaths, OneCallAndOneKernelIsAPairNotASplit) {
  using P = codegen::PartPath;
  auto mark = [](const std::vector<int64_t> &groups, const std::vector<P> &paths) {
    std::vector<Launch> launches(groups.size());
    std::vector<std::string> reasons;
    for (size_t i = 0; i < groups.size(); ++i) {
      launches[i].group = groups[i];
      reasons.push_back(groups[i] < 0 ? "" : "split from its group (why)");
    }
    std::vector<bool> pair;
    codegen::markCallPlusKernel(launches, [&](size_t i) { return paths[i]; }, reasons, pair);
    return std::make_pair(pair, reasons);
  };
  // call + kernel, then a launch of no group, then kernel + call.
  auto [pair, reasons] = mark({3, 3, -1, 4, 4},
                              {P::kCall, P::kGenerated, P::kGenerated, P::kGenerated, P::kCall});
  EXPECT_EQ(pair, (std::vector<bool>{true, true, false, true, true}));
  EXPECT_EQ(reasons[0], "call + kernel (why)");
  EXPECT_EQ(reasons[2], "");
  for (const std::vector<P> &split :
       {std::vector<P>{P::kGenerated, P::kCall, P::kGenerated},
        std::vector<P>{P::kCall, P::kCall, P::kGenerated},
        std::vector<P>{P::kOther, P::kGenerated, P::kGenerated}}) {
    auto [p, r] = mark({7, 7, 7}, split);
    EXPECT_EQ(p, (std::vector<bool>{false, false, false}));
    EXPECT_EQ(r[1], "split from its group (why)");
  }
  // Two groups side by side are judged apart.
  EXPECT_EQ(mark({1, 1, 2, 2, 2}, {P::kCall, P::kGenerated, P::kGenerated, P::kCall,
                                   P::kGenerated})
                .first,
            (std::vector<bool>{true, true, false, false, false}));
}
