//===- CodegenTest.cpp - generated CUDA kernels and their compiler --------===//
//
// The generator's text is deterministic and names its kernels by content;
// it refuses library ops with a reason; NVRTC's disk cache hits on a second
// compile; a broken source is an error naming the kernel with NVRTC's log.
// And the numbers: the generated kernel text also compiles as plain C++
// (the prelude's host layer), so each kernel form runs here, one thread,
// and is checked against the CPU reference kernels on random inputs.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Half.h"
#include "dlc/runtime/Device.h"
#include "dlc/runtime/RowStride.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/codegen/KernelCodegen.h"
#include "dlc/runtime/cuda/KernelCompiler.h"

#include "CodegenPlans.h"
#include "HostThreads.h"
#include "TestPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <utility>
#include <random>
#include <unistd.h>

using namespace dlc::rt;
using namespace dlc::rt::codegen;
using namespace dlc::rt::cuda;
using dlc_test::castCases;
using dlc_test::castsPlan;
using dlc_test::CastCase;
using dlc_test::formsPlan;
using dlc_test::inputGroup;
using dlc_test::kIn;
using dlc_test::kOut;
using PlanBuilder = dlc_test::GroupPlanBuilder;
using dlc_test::normBackwardPlan;
using dlc_test::rowPlan;
using dlc_test::transposePlan;

namespace {

/// Runs every kernel of the plan with the CPU reference; returns each
/// buffer's values.
std::vector<std::vector<float>> runReference(const Plan &plan,
                                             const std::vector<std::vector<float>> &inputs) {
  std::vector<std::vector<float>> values = inputs;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    values[i].resize(plan.buffers[i].numElements());
  for (const PlanKernel &k : plan.kernels) {
    std::vector<cpu::TensorRef> in, out;
    for (int32_t id : k.inputs)
      in.push_back({values[id].data(), DType::kF32, &plan.buffers[id].shape});
    for (int32_t id : k.outputs)
      out.push_back({values[id].data(), DType::kF32, &plan.buffers[id].shape});
    cpu::KernelContext context(k, in, out, 0);
    Status status = cpu::cpuKernels().at(k.id)(context);
    EXPECT_TRUE(status.isOk()) << status.toString();
  }
  return values;
}

std::string tempDir() {
  char pattern[] = "/tmp/dlc-codegen-XXXXXX";
  const char *dir = mkdtemp(pattern);
  return dir ? dir : "";
}

#ifdef DLC_HOST_CXX
/// (const table *, int segments, const long long *step): optimizer and
/// horizontal cast kernels.
using TableKernel = void (*)(const void *, int, const long long *);

/// Compiles a generated table kernel as plain C++ into a shared library in
/// `dir` and finds its entry point.
void compileTableKernelOnHost(const GeneratedKernel &g, const std::string &dir,
                              void *&library, TableKernel &kernel) {
  {
    std::ofstream(dir + "/table.cpp") << g.source;
  }
  std::string command = std::string(DLC_HOST_CXX) + " -std=c++17 -O1 -shared -fPIC -o " + dir +
                        "/table.so " + dir + "/table.cpp 2> " + dir + "/log.txt";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir + "/log.txt").rdbuf();
  library = dlopen((dir + "/table.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  kernel = reinterpret_cast<TableKernel>(dlsym(library, g.name.c_str()));
  ASSERT_NE(kernel, nullptr);
}
#endif

} // namespace

TEST(Codegen, EveryLaunchOfTheFormsPlanIsGenerated) {
  Plan plan = formsPlan();
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  PlanKernels all = generatePlanKernels(plan);
  for (const auto &[launch, reason] : all.refused)
    ADD_FAILURE() << "launch #" << launch.index << " refused: " << reason;
  // 5 groups and 8 single kernels: relu_backward, transpose, slice,
  // slice_backward, concat, broadcast_to, global_avg_pool, reduce_max.
  EXPECT_EQ(all.kernels.size(), 13u);
  std::map<KernelForm, int> forms;
  for (const GeneratedKernel &g : all.kernels)
    ++forms[g.form];
  // The lone transpose's 3 channels are too narrow for tiles (kNarrowTranspose):
  // a loop; transposePlan's wider ones are tiled.
  EXPECT_EQ(forms[KernelForm::kLoop], 9);
  EXPECT_EQ(forms[KernelForm::kReduction], 4);
  EXPECT_EQ(forms[KernelForm::kTranspose], 0);
  // The bias-gradient pattern, a sum over the outer dimension into 33
  // outputs, is tiled 32 outputs x 32 rows; global_avg_pool is not.
  for (const GeneratedKernel &g : all.kernels) {
    if (g.name.rfind("dlc_reduce_gelu_backward_sum_to_shape_", 0) == 0) {
      EXPECT_EQ(g.blockSize, 32);
      EXPECT_EQ(g.blockSizeY, 32);
      EXPECT_EQ(g.work, 2) << "two tiles of 32 outputs";
    }
    if (g.name.rfind("dlc_reduce_global_avg_pool_", 0) == 0) {
      EXPECT_EQ(g.blockSizeY, 1);
      EXPECT_EQ(g.work, 6) << "one block per (n, c)";
      EXPECT_EQ(g.blockSize, 32) << "16 elements per row need one warp";
    }
  }
}

TEST(Codegen, SourceIsDeterministicAndNamedByContent) {
  Plan plan = formsPlan();
  PlanKernels first = generatePlanKernels(plan), second = generatePlanKernels(plan);
  ASSERT_EQ(first.kernels.size(), second.kernels.size());
  for (size_t i = 0; i < first.kernels.size(); ++i) {
    EXPECT_EQ(first.kernels[i].name, second.kernels[i].name);
    EXPECT_EQ(first.kernels[i].source, second.kernels[i].source);
    EXPECT_NE(first.kernels[i].source.find(first.kernels[i].name), std::string::npos);
  }
  // Buffer names and offsets are the launch's business, not the kernel's:
  // the same computation elsewhere shares the name and the source.
  Plan renamed = plan;
  for (PlanBuffer &b : renamed.buffers) {
    b.name = "other_" + b.name;
    b.offset += 1 << 20;
  }
  renamed.arenaBytes += 1 << 20;
  PlanKernels third = generatePlanKernels(renamed);
  ASSERT_EQ(third.kernels.size(), first.kernels.size());
  for (size_t i = 0; i < first.kernels.size(); ++i)
    EXPECT_EQ(third.kernels[i].source, first.kernels[i].source) << first.kernels[i].name;
  // The header lists the fused ops with their types.
  const GeneratedKernel &group0 = first.kernels[0];
  EXPECT_NE(group0.source.find("// fuses 3 op(s):\n//   add(f32[3,5,7], f32[5,1]) -> f32[3,5,7]\n"
                               "//   relu(f32[3,5,7]) -> f32[3,5,7]\n"),
            std::string::npos)
      << group0.source.substr(0, 400);
  EXPECT_EQ(group0.name.rfind("dlc_loop_add_relu_mul_", 0), 0u) << group0.name;
}

TEST(Codegen, LibraryOpsInAGroupTakeTheLibraryPath) {
  PlanBuilder p;
  int32_t x = p.buffer("x", {2, 4, 3, 3}, kIn), gamma = p.buffer("g", {4}, BufferRole::kParam),
          beta = p.buffer("b", {4}, BufferRole::kParam),
          rm = p.buffer("rm", {4}, BufferRole::kState), rv = p.buffer("rv", {4}, BufferRole::kState);
  int32_t y = p.buffer("y", {2, 4, 3, 3});
  p.kernel("batch_norm", {x, gamma, beta, rm, rv},
           {y, p.buffer("rm'", {4}, BufferRole::kUpdate), p.buffer("rv'", {4}, BufferRole::kUpdate)},
           0);
  p.kernel("relu", {y}, {p.buffer("r", {2, 4, 3, 3}, kOut)}, 0);
  std::vector<Launch> launches = planLaunches(p.plan);
  ASSERT_EQ(launches.size(), 1u);
  GenerateDecision decision = isGeneratable(p.plan, launches[0]);
  EXPECT_FALSE(decision.ok);
  EXPECT_NE(decision.reason.find("batch_norm is a library op"), std::string::npos)
      << decision.reason;
  auto kernel = generateKernel(p.plan, launches[0]);
  ASSERT_FALSE(kernel.isOk());
  EXPECT_NE(kernel.status().message().find("launch #0 (loop, group 0"), std::string::npos)
      << kernel.status().message();
}

TEST(Codegen, AReductionResultReadInItsOwnLoopIsRefused) {
  // x - max(x) needs two passes over x: not one reduction kernel.
  PlanBuilder p;
  int32_t x = p.buffer("x", {4, 8}, kIn), mx = p.buffer("mx", {4, 1});
  p.kernel("reduce_max", {x}, {mx}, 0,
           {{"axes", std::vector<int64_t>{1}}, {"keep_dims", int64_t(1)}});
  p.kernel("sub", {x, mx}, {p.buffer("d", {4, 8}, kOut)}, 0);
  GenerateDecision decision = isGeneratable(p.plan, planLaunches(p.plan)[0]);
  EXPECT_FALSE(decision.ok);
  EXPECT_NE(decision.reason.find("reduce_max"), std::string::npos) << decision.reason;
}

TEST(Codegen, AStoreIntoPaddedRowsIsRefused) {
  // RowStride.h lets a generated launch only read padded rows; should a
  // plan ever route a write there, the emitter refuses rather than write
  // the dense index into padded storage.
  PlanBuilder p;
  int32_t x = p.buffer("x", {4, 10}, kIn), y = p.buffer("y", {4, 10});
  p.kernel("relu", {x}, {y});
  p.kernel("matmul", {y, x}, {p.buffer("z", {4, 4}, kOut)}, -1,
           {{"transpose_rhs", int64_t(1)}}); // reads y through its stride
  p.plan.buffers[y].init["row_stride"] = int64_t(12);
  GenerateDecision decision = isGeneratable(p.plan, planLaunches(p.plan)[0]);
  EXPECT_FALSE(decision.ok) << "generated despite a padded result";
  EXPECT_NE(decision.reason.find("writes 'y', whose rows are padded"), std::string::npos)
      << "[" << decision.reason << "]";
}

TEST(KernelCompiler, SecondCompileIsACacheHit) {
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  PlanKernels all = generatePlanKernels(formsPlan());
  ASSERT_FALSE(all.kernels.empty());
  const GeneratedKernel &g = all.kernels.front();
  KernelCompiler compiler(dir + "/cache");
  auto cold = compiler.compile(g.name, g.source, "sm_80");
  ASSERT_TRUE(cold.isOk()) << cold.status().toString();
  EXPECT_EQ(compiler.cacheMisses(), 1);
  EXPECT_EQ(compiler.cacheHits(), 0);
  EXPECT_EQ(cold->compare(0, 4, "\x7f" "ELF"), 0) << "a cubin is an ELF file";
  // Another compiler on the same directory: a later run of the tool.
  KernelCompiler later(dir + "/cache");
  auto warm = later.compile(g.name, g.source, "sm_80");
  ASSERT_TRUE(warm.isOk()) << warm.status().toString();
  EXPECT_EQ(later.cacheHits(), 1);
  EXPECT_EQ(later.cacheMisses(), 0);
  EXPECT_EQ(*warm, *cold);
  // Another architecture is another entry.
  auto sm90 = later.compile(g.name, g.source, "sm_90");
  ASSERT_TRUE(sm90.isOk()) << sm90.status().toString();
  EXPECT_EQ(later.cacheMisses(), 1);
  EXPECT_NE(*sm90, *cold);
  std::system(("rm -rf " + dir).c_str());
}

TEST(KernelCompiler, HalfTypesLoadAsFloatAndCompile) {
  // amp's pattern: f16 in, float math, f16 and bf16 out, 8 halves per access.
  PlanBuilder p;
  int32_t x = p.buffer("x", {4, 64}, kIn, DType::kF16);
  int32_t f = p.buffer("f", {4, 64}), r = p.buffer("r", {4, 64});
  int32_t h = p.buffer("h", {4, 64}, kOut, DType::kF16),
          bf = p.buffer("bf", {4, 64}, kOut, DType::kBF16);
  p.kernel("cast", {x}, {f}, 0, {{"to", std::string("f32")}});
  p.kernel("relu", {f}, {r}, 0);
  p.kernel("cast", {r}, {h}, 0, {{"to", std::string("f16")}});
  p.kernel("cast", {r}, {bf}, 0, {{"to", std::string("bf16")}});
  PlanKernels all = generatePlanKernels(p.plan);
  ASSERT_TRUE(all.refused.empty()) << all.refused[0].second;
  ASSERT_EQ(all.kernels.size(), 1u);
  const std::string &source = all.kernels[0].source;
  EXPECT_NE(source.find("#include <cuda_fp16.h>"), std::string::npos);
  EXPECT_NE(source.find("#include <cuda_bf16.h>"), std::string::npos);
  EXPECT_NE(source.find("const __half *__restrict__ in0"), std::string::npos) << source;
  EXPECT_NE(source.find("dlc_ldv<8>(in0, base, in0_v);"), std::string::npos) << source;
  EXPECT_NE(source.find("dlc_round_f16("), std::string::npos) << source;
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  KernelCompiler compiler("");
  for (const char *arch : {"sm_80", "sm_90"}) {
    auto cubin = compiler.compile(all.kernels[0].name, source, arch);
    EXPECT_TRUE(cubin.isOk()) << cubin.status().toString();
  }
}

TEST(KernelCompiler, ABrokenSourceNamesTheKernelWithNvrtcsLog) {
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  KernelCompiler compiler("");
  auto cubin = compiler.compile("dlc_loop_broken",
                                "extern \"C\" __global__ void dlc_loop_broken(float *p) {\n"
                                "  p[0] = undeclared_value;\n}\n",
                                "sm_90");
  ASSERT_FALSE(cubin.isOk());
  const std::string &message = cubin.status().message();
  EXPECT_EQ(cubin.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("kernel 'dlc_loop_broken' for sm_90"), std::string::npos) << message;
  EXPECT_NE(message.find("undeclared_value"), std::string::npos) << message;
  EXPECT_NE(message.find("dlc_loop_broken.cu(2)"), std::string::npos) << message;
}

#ifdef DLC_HOST_CXX
/// Compiles the generated kernels' text as host C++ (the prelude's host
/// layer) into a shared library in `dir` and opens it; null on failure,
/// with the compiler's log as a test failure.
void *loadOnHost(const std::vector<GeneratedKernel> &kernels, const std::string &dir) {
  std::set<std::string> names;
  {
    std::ofstream tu(dir + "/kernels.cpp");
    for (const GeneratedKernel &g : kernels)
      if (names.insert(g.name).second)
        tu << g.source << "\n";
  }
  std::string command = std::string(DLC_HOST_CXX) + " -std=c++17 -O1 -shared -fPIC -o " + dir +
                        "/kernels.so " + dir + "/kernels.cpp 2> " + dir + "/log.txt";
  if (std::system(command.c_str()) != 0) {
    std::ifstream log(dir + "/log.txt");
    ADD_FAILURE() << "the host compiler refused the generated kernels:\n" << log.rdbuf();
    return nullptr;
  }
  void *library = dlopen((dir + "/kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(library, nullptr) << dlerror();
  return library;
}

/// Runs generated kernel `g` of `library` on one host thread, its arguments
/// bound to `data` by buffer id.
void runOnHost(void *library, const GeneratedKernel &g, std::vector<std::vector<float>> &data) {
  void *symbol = dlsym(library, g.name.c_str());
  ASSERT_NE(symbol, nullptr) << g.name;
  std::vector<void *> a;
  for (int32_t id : g.args)
    a.push_back(data[id].data());
  switch (a.size()) {
  case 2: reinterpret_cast<void (*)(void *, void *)>(symbol)(a[0], a[1]); break;
  case 3: reinterpret_cast<void (*)(void *, void *, void *)>(symbol)(a[0], a[1], a[2]); break;
  case 4:
    reinterpret_cast<void (*)(void *, void *, void *, void *)>(symbol)(a[0], a[1], a[2], a[3]);
    break;
  case 5:
    reinterpret_cast<void (*)(void *, void *, void *, void *, void *)>(symbol)(a[0], a[1], a[2],
                                                                             a[3], a[4]);
    break;
  default: FAIL() << g.name << " has " << a.size() << " arguments";
  }
}

/// Runs every generated launch of `plan`, compiled as host C++, and checks
/// each of its `outputs` output buffers against the CPU reference. Inputs
/// are N(0, 1) draws but where `given` (by buffer id) gives their values.
void expectGeneratedMatchesReference(const Plan &plan, int outputs,
                                     const std::map<int32_t, std::vector<float>> &given = {}) {
  PlanKernels all = generatePlanKernels(plan);
  ASSERT_TRUE(all.refused.empty());
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  void *library = loadOnHost(all.kernels, dir);
  ASSERT_NE(library, nullptr);

  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<std::vector<float>> inputs(plan.buffers.size());
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].role == kIn)
      for (int64_t e = 0; e < plan.buffers[i].numElements(); ++e)
        inputs[i].push_back(given.count(i) ? given.at(i).at(e) : normal(rng));
  std::vector<std::vector<float>> expected = runReference(plan, inputs);

  // The generated kernels, launch by launch, on buffers of their own.
  std::vector<std::vector<float>> got = inputs;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    got[i].resize(plan.buffers[i].numElements(), NAN);
  for (const GeneratedKernel &g : all.kernels)
    runOnHost(library, g, got);
  int checked = 0;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    if (plan.buffers[i].role != kOut)
      continue;
    ++checked;
    for (size_t e = 0; e < expected[i].size(); ++e) {
      float want = expected[i][e], have = got[i][e];
      if (!std::isfinite(want)) {
        ASSERT_TRUE(std::isnan(want) ? std::isnan(have) : have == want)
            << plan.buffers[i].name << "[" << e << "]: " << have << ", want " << want;
        continue;
      }
      // float math against the reference's double accumulation.
      ASSERT_NEAR(have, want, 2e-5f * (1.f + std::fabs(want)))
          << plan.buffers[i].name << "[" << e << "]";
    }
  }
  EXPECT_EQ(checked, outputs);
  dlclose(library);
  std::system(("rm -rf " + dir).c_str());
}
#endif

TEST(Codegen, GeneratedKernelsMatchTheCpuReferenceOnTheHost) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  expectGeneratedMatchesReference(formsPlan(), 14);
#endif
}

/// Reductions over buffers whose rows the plan padded (RowStride.h: BERT's
/// MLM bias gradient over the loss gradient): x [3, 4, 37] with rows 40
/// apart summed to a bias gradient [37] (the CUDA form's column tiles), to
/// [4, 37] and to row sums [3, 4, 1]; y [6, 10] with rows 12 apart summed
/// to [10] (a block per output). Buffers: x 0, y 1, o0-o3 2-5.
Plan paddedReductionsPlan(bool padded) {
  PlanBuilder p;
  int32_t x = p.buffer("x", {3, 4, 37}, kIn), y = p.buffer("y", {6, 10}, kIn);
  std::vector<std::vector<int64_t>> sums = {{37}, {4, 37}, {3, 4, 1}};
  for (size_t i = 0; i < sums.size(); ++i)
    p.kernel("sum_to_shape", {x}, {p.buffer("o" + std::to_string(i), sums[i], kOut)}, -1,
             {{"shape", sums[i]}});
  p.kernel("sum_to_shape", {y}, {p.buffer("o3", {10}, kOut)}, -1,
           {{"shape", std::vector<int64_t>{10}}});
  if (padded) {
    p.plan.buffers[x].init["row_stride"] = int64_t(40);
    p.plan.buffers[y].init["row_stride"] = int64_t(12);
  }
  return p.plan;
}

TEST(Codegen, ReductionsReadPaddedRowsOnTheHost) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  Plan dense = paddedReductionsPlan(false), padded = paddedReductionsPlan(true);
  PlanKernels all = generatePlanKernels(padded);
  ASSERT_TRUE(all.refused.empty()) << all.refused[0].second;
  ASSERT_EQ(all.kernels.size(), 4u);
  // A column sum over one row's elements starts row r at r * stride; the
  // others find an element's row by a division.
  EXPECT_NE(all.kernels[0].source.find("r * 40LL + o"), std::string::npos) << all.kernels[0].source;
  EXPECT_NE(all.kernels[3].source.find("r * 12LL + o"), std::string::npos) << all.kernels[3].source;
  EXPECT_NE(all.kernels[1].source.find("/ 37LL * 3LL"), std::string::npos) << all.kernels[1].source;
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  void *library = loadOnHost(all.kernels, dir);
  ASSERT_NE(library, nullptr);

  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<std::vector<float>> values(dense.buffers.size());
  for (int32_t id : {0, 1})
    for (int64_t e = 0; e < dense.buffers[id].numElements(); ++e)
      values[id].push_back(normal(rng));
  std::vector<std::vector<float>> expected = runReference(dense, values);
  // The padded storage: each row's elements, then NaN where nothing lives,
  // so a sum that reads the padding or a dense index is NaN or wrong.
  std::vector<std::vector<float>> got(padded.buffers.size());
  for (int32_t id : {0, 1}) {
    const PlanBuffer &b = padded.buffers[id];
    int64_t last = b.shape.back(), stride = rowStride(b);
    got[id].assign(paddedRows(b) * stride, NAN);
    for (int64_t e = 0; e < b.numElements(); ++e)
      got[id][e / last * stride + e % last] = values[id][e];
  }
  for (int32_t id = 2; id < 6; ++id)
    got[id].assign(padded.buffers[id].numElements(), NAN);
  for (const GeneratedKernel &g : all.kernels)
    runOnHost(library, g, got);
  for (int32_t id = 2; id < 6; ++id)
    for (size_t e = 0; e < expected[id].size(); ++e)
      ASSERT_NEAR(got[id][e], expected[id][e], 2e-5f * (1.f + std::fabs(expected[id][e])))
          << padded.buffers[id].name << "[" << e << "]";
  dlclose(library);
  std::system(("rm -rf " + dir).c_str());
#endif
}

/// Each element-wise op alone, with one operand or two (the binary ops and
/// the activations' gradients): a new activation's expression is checked
/// against its reference kernel here.
TEST(Codegen, EveryElementwiseOpMatchesTheCpuReferenceOnTheHost) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  PlanBuilder p;
  int32_t x = p.buffer("x", {3, 5, 7}, kIn), y = p.buffer("y", {3, 5, 7}, kIn);
  int outputs = 0;
  for (size_t i = 0; i < kNumOps; ++i) {
    OpId id = static_cast<OpId>(i);
    std::string op(opName(id));
    if (opClassOf(id) != OpClass::kElementwise || id == OpId::kCast)
      continue;
    bool binary = op.find("_backward") != std::string::npos || op == "add" || op == "sub" ||
                  op == "mul" || op == "div";
    std::vector<int32_t> in = binary ? std::vector<int32_t>{x, y} : std::vector<int32_t>{x};
    p.kernel(op, in, {p.buffer(op + ".out", {3, 5, 7}, kOut)});
    ++outputs;
  }
  expectGeneratedMatchesReference(p.plan, outputs);
#endif
}

/// The piecewise activations and their gradients at every piece's ends, the
/// infinities and NaN, where a comparison written the other way round
/// (x < 6 for !(x >= 6)) would differ from the reference.
TEST(Codegen, PiecewiseActivationsMatchTheCpuReferenceAtTheirBoundaries) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  std::vector<float> xs = {NAN,  -INFINITY, -6.f, -3.5f, -3.f, -2.5f, -0.f, 0.f, 0.5f,
                           2.9f, 3.f,       3.1f, 5.9f,  6.f,  6.5f,  9.f, INFINITY};
  int64_t n = static_cast<int64_t>(xs.size());
  PlanBuilder p;
  int32_t x = p.buffer("x", {n}, kIn), dy = p.buffer("dy", {n}, kIn);
  int outputs = 0;
  for (const char *op : {"relu6", "hardswish", "hardsigmoid"}) {
    p.kernel(op, {x}, {p.buffer(std::string(op) + ".out", {n}, kOut)});
    p.kernel(std::string(op) + "_backward", {dy, x},
             {p.buffer(std::string(op) + "_backward.out", {n}, kOut)});
    outputs += 2;
  }
  expectGeneratedMatchesReference(p.plan, outputs, {{x, xs}});
#endif
}

TEST(Codegen, OptimizerTableMatchesTheCpuReferenceOnTheHost) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  PlanBuilder p;
  int32_t status = addSgdAndAdamwUpdates(p);
  PlanKernels all = generatePlanKernels(p.plan);
  ASSERT_EQ(all.kernels.size(), 1u);
  const GeneratedKernel &g = all.kernels[0];
  ASSERT_EQ(g.form, KernelForm::kOptimizer);
  ASSERT_EQ(g.segments.size(), 2u);
  std::string dir = tempDir();
  void *library = nullptr;
  TableKernel kernel = nullptr;
  ASSERT_NO_FATAL_FAILURE(compileTableKernelOnHost(g, dir, library, kernel));

  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<std::vector<float>> state(p.plan.buffers.size());
  for (size_t i = 0; i < state.size(); ++i)
    for (int64_t e = 0; e < p.plan.buffers[i].numElements(); ++e)
      state[i].push_back(std::fabs(normal(rng)));
  // SGD's first step starts the momentum buffer at the gradient; the
  // second overflowed and is skipped; the third unscales by 1/4.
  const float statuses[3][2] = {{0.5f, 0.f}, {0.5f, 1.f}, {0.25f, 0.f}};
  std::vector<std::vector<float>> mine = state;
  for (int64_t step = 0; step < 3; ++step) {
    state[status] = mine[status] = {statuses[step][0], statuses[step][1]};
    std::string table = packOptimizerTable(g.segments, [&](int32_t id) {
      return reinterpret_cast<uint64_t>(mine[id].data());
    });
    long long counter = step; // the kernel reads it from memory, as from the device's
    kernel(table.data(), static_cast<int>(g.segments.size()), &counter);
    std::vector<std::vector<float>> reference = state;
    for (const PlanKernel &k : p.plan.kernels) {
      std::vector<cpu::TensorRef> in, out;
      for (int32_t id : k.inputs)
        in.push_back({state[id].data(), DType::kF32, &p.plan.buffers[id].shape});
      for (int32_t id : k.outputs)
        out.push_back({state[id].data(), DType::kF32, &p.plan.buffers[id].shape});
      cpu::KernelContext context(k, in, out, step);
      ASSERT_TRUE(cpu::cpuKernels().at(k.id)(context).isOk());
    }
    for (size_t i = 0; i < state.size(); ++i)
      for (size_t e = 0; e < state[i].size(); ++e)
        ASSERT_NEAR(mine[i][e], state[i][e], 1e-5f * (1.f + std::fabs(state[i][e])))
            << p.plan.buffers[i].name << "[" << e << "] at step " << step;
    // The updates become the next step's inputs.
    const std::vector<std::pair<std::string, std::string>> next = {
        {"w'", "w"}, {"mw'", "mw"}, {"v'", "v"}, {"m1'", "m1"}, {"m2'", "m2"}};
    for (const auto &[from, to] : next) {
      int32_t f = -1, t = -1;
      for (size_t i = 0; i < p.plan.buffers.size(); ++i) {
        if (p.plan.buffers[i].name == from) f = static_cast<int32_t>(i);
        if (p.plan.buffers[i].name == to) t = static_cast<int32_t>(i);
      }
      state[t] = state[f];
      mine[t] = mine[f];
    }
  }
  dlclose(library);
  std::system(("rm -rf " + dir).c_str());
#endif
}

// Mixed precision: a horizontal update group holding the casts of its
// half-precision gradients reads the half values and widens them itself;
// on the host it matches the CPU reference run on the widened gradients.
TEST(Codegen, OptimizerWidensFusedGradientCastsOnTheHost) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  PlanBuilder p;
  int32_t w = p.buffer("w", {37}, BufferRole::kParam), mw = p.buffer("mw", {37}, BufferRole::kOptimizerState);
  int32_t gh = p.buffer("gh", {37}, BufferRole::kTemporary, DType::kF16);
  int32_t gw = p.buffer("gw", {37});
  int32_t v = p.buffer("v", {5}, BufferRole::kParam), mv = p.buffer("mv", {5}, BufferRole::kOptimizerState);
  int32_t gb = p.buffer("gb", {5}, BufferRole::kTemporary, DType::kBF16);
  int32_t gv = p.buffer("gv", {5});
  int32_t nw = p.buffer("w'", {37}, BufferRole::kUpdate), nmw = p.buffer("mw'", {37}, BufferRole::kUpdate);
  int32_t nv = p.buffer("v'", {5}, BufferRole::kUpdate), nmv = p.buffer("mv'", {5}, BufferRole::kUpdate);
  p.kernel("cast", {gh}, {gw}, 0, {{"to", std::string("f32")}});
  p.kernel("sgd_update", {w, gw, mw}, {nw, nmw}, 0, {{"lr", 0.1}, {"momentum", 0.9}});
  p.kernel("cast", {gb}, {gv}, 0, {{"to", std::string("f32")}});
  p.kernel("sgd_update", {v, gv, mv}, {nv, nmv}, 0, {{"lr", 0.1}, {"momentum", 0.9}});
  PlanKernels all = generatePlanKernels(p.plan);
  ASSERT_EQ(all.kernels.size(), 1u) << (all.refused.empty() ? "" : all.refused[0].second);
  const GeneratedKernel &g = all.kernels[0];
  ASSERT_EQ(g.form, KernelForm::kOptimizer);
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_EQ(g.segments[0].grad, gh);
  EXPECT_EQ(g.segments[0].gradDtype, 1);
  EXPECT_EQ(g.segments[1].grad, gb);
  EXPECT_EQ(g.segments[1].gradDtype, 2);
  std::string dir = tempDir();
  void *library = nullptr;
  TableKernel kernel = nullptr;
  ASSERT_NO_FATAL_FAILURE(compileTableKernelOnHost(g, dir, library, kernel));

  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<std::vector<float>> f(p.plan.buffers.size());
  for (size_t i = 0; i < f.size(); ++i)
    for (int64_t e = 0; e < p.plan.buffers[i].numElements(); ++e)
      f[i].push_back(normal(rng));
  // The half gradients as the kernel reads them, and widened for the
  // reference (subnormals and a large value included).
  f[gh][0] = 3e-6f;
  f[gh][1] = -60000.f;
  std::vector<uint16_t> halfBits(37), bfBits(5);
  for (int e = 0; e < 37; ++e) {
    halfBits[e] = floatToHalf(f[gh][e]);
    f[gw][e] = halfToFloat(halfBits[e]);
  }
  for (int e = 0; e < 5; ++e) {
    bfBits[e] = floatToBfloat16(f[gb][e]);
    f[gv][e] = bfloat16ToFloat(bfBits[e]);
  }
  std::vector<std::vector<float>> mine = f;
  std::string table = packOptimizerTable(g.segments, [&](int32_t id) {
    if (id == gh) return reinterpret_cast<uint64_t>(halfBits.data());
    if (id == gb) return reinterpret_cast<uint64_t>(bfBits.data());
    return reinterpret_cast<uint64_t>(mine[id].data());
  });
  long long counter = 1;
  kernel(table.data(), 2, &counter);
  for (const PlanKernel &k : p.plan.kernels) {
    if (k.id == OpId::kCast)
      continue; // the widened values are in place already
    std::vector<cpu::TensorRef> in, out;
    for (int32_t id : k.inputs)
      in.push_back({f[id].data(), DType::kF32, &p.plan.buffers[id].shape});
    for (int32_t id : k.outputs)
      out.push_back({f[id].data(), DType::kF32, &p.plan.buffers[id].shape});
    cpu::KernelContext context(k, in, out, 1);
    ASSERT_TRUE(cpu::cpuKernels().at(k.id)(context).isOk());
  }
  for (int32_t id : {nw, nmw, nv, nmv})
    for (size_t e = 0; e < f[id].size(); ++e)
      ASSERT_NEAR(mine[id][e], f[id][e], 1e-5f * (1.f + std::fabs(f[id][e])))
          << p.plan.buffers[id].name << "[" << e << "]";
  dlclose(library);
  std::system(("rm -rf " + dir).c_str());
#endif
}

TEST(Codegen, IndependentCastsOfDifferentShapesAreOneHorizontalLaunch) {
  Plan plan = castsPlan();
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  std::vector<Launch> launches = planLaunches(plan);
  ASSERT_EQ(launches[0].kernels.size(), castCases().size());
  GenerateDecision decision = isGeneratable(plan, launches[0]);
  ASSERT_TRUE(decision.ok) << decision.reason;
  auto g = generateKernel(plan, launches[0]);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  EXPECT_EQ(g->form, KernelForm::kHorizontalCast);
  EXPECT_TRUE(walksSegmentTable(g->form));
  EXPECT_EQ(g->name.rfind("dlc_horizontal_cast_", 0), 0u) << g->name;
  ASSERT_EQ(g->castSegments.size(), castCases().size());
  EXPECT_EQ(g->tableSegments(), castCases().size());
  int64_t vectors = 0;
  for (size_t i = 0; i < castCases().size(); ++i) {
    const CastSegment &seg = g->castSegments[i];
    EXPECT_EQ(plan.buffers[seg.input].name, "w" + std::to_string(i));
    EXPECT_EQ(seg.from, castCases()[i].from);
    EXPECT_EQ(seg.to, castCases()[i].to);
    int64_t v = 16 / std::min(dtypeBytes(seg.from), dtypeBytes(seg.to));
    vectors += (seg.elements + v - 1) / v;
  }
  EXPECT_EQ(g->work, vectors) << "one thread per vector of every segment";
  EXPECT_EQ(g->blockSize, 256);
  // 48 bytes per segment, as DlcCastSegment.
  std::string table = packSegmentTable(*g, [](int32_t id) { return uint64_t(id) << 8; });
  EXPECT_EQ(table.size(), 48 * castCases().size());
  EXPECT_EQ(table, packCastTable(g->castSegments, [](int32_t id) { return uint64_t(id) << 8; }));
  // Another plan's cast group (other shapes, other names) shares the kernel.
  PlanBuilder other;
  other.kernel("cast", {other.buffer("a", {3}, BufferRole::kParam)},
               {other.buffer("a16", {3}, kOut, DType::kF16)}, 0);
  other.kernel("cast", {other.buffer("b", {2, 9}, BufferRole::kParam)},
               {other.buffer("b16", {2, 9}, kOut, DType::kBF16)}, 0);
  auto shared = generateKernel(other.plan, planLaunches(other.plan)[0]);
  ASSERT_TRUE(shared.isOk()) << shared.status().toString();
  EXPECT_EQ(shared->name, g->name);
  EXPECT_EQ(shared->source, g->source);
}

TEST(Codegen, DependentCastsOfDifferentShapesAreRefused) {
  // b reads a, a cast of the same launch: not a horizontal group.
  PlanBuilder p;
  int32_t x = p.buffer("x", {5}, BufferRole::kParam), y = p.buffer("y", {7}, BufferRole::kParam);
  int32_t a = p.buffer("a", {5}, BufferRole::kTemporary, DType::kF16);
  p.kernel("cast", {x}, {a}, 0);
  p.kernel("cast", {a}, {p.buffer("b", {5}, kOut)}, 0);
  p.kernel("cast", {y}, {p.buffer("c", {7}, kOut, DType::kBF16)}, 0);
  GenerateDecision decision = isGeneratable(p.plan, planLaunches(p.plan)[0]);
  EXPECT_FALSE(decision.ok);
  EXPECT_NE(decision.reason.find("kernel #1 reads 'a', the result of kernel #0 in the same "
                                 "launch: the casts are not independent"),
            std::string::npos)
      << decision.reason;
  // A cast and another element-wise op of different shapes: no loop and
  // no horizontal cast group either.
  PlanBuilder mixed;
  int32_t u = mixed.buffer("u", {5}, BufferRole::kParam), v = mixed.buffer("v", {7}, kIn);
  mixed.kernel("cast", {u}, {mixed.buffer("u16", {5}, kOut, DType::kF16)}, 0);
  mixed.kernel("relu", {v}, {mixed.buffer("r", {7}, kOut)}, 0);
  decision = isGeneratable(mixed.plan, planLaunches(mixed.plan)[0]);
  EXPECT_FALSE(decision.ok);
  EXPECT_NE(decision.reason.find("is not a horizontal group of independent casts"),
            std::string::npos)
      << decision.reason;
  // Independent casts of one shape stay one loop.
  PlanBuilder same;
  int32_t s = same.buffer("s", {6, 5}, BufferRole::kParam);
  same.kernel("cast", {s}, {same.buffer("s16", {6, 5}, kOut, DType::kF16)}, 0);
  same.kernel("cast", {s}, {same.buffer("sb16", {6, 5}, kOut, DType::kBF16)}, 0);
  auto loop = generateKernel(same.plan, planLaunches(same.plan)[0]);
  ASSERT_TRUE(loop.isOk()) << loop.status().toString();
  EXPECT_EQ(loop->form, KernelForm::kLoop);
}

TEST(Codegen, HorizontalCastsMatchTheCpuBitForBitOnTheHost) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  Plan plan = castsPlan();
  const Launch launch = planLaunches(plan)[0];
  auto g = generateKernel(plan, launch);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  ASSERT_EQ(g->form, KernelForm::kHorizontalCast);
  std::string dir = tempDir();
  void *library = nullptr;
  TableKernel kernel = nullptr;
  ASSERT_NO_FATAL_FAILURE(compileTableKernelOnHost(*g, dir, library, kernel));

  auto cpu = cpu::CpuExecutor::create(plan);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  // Random values over many binades, and the cases rounding must get
  // right: ties to even (f16 and bf16), subnormals, overflow to inf, inf,
  // NaN, signed zero.
  const float special[] = {1.f + 1.f / 2048,        1.f + 3.f / 2048,  1.f + 1.f / 256,
                           1.f + 3.f / 256,         3e-6f,             -6e-8f,
                           2.98e-8f,                65504.f,           65519.f,
                           65520.f,                 -1e6f,             INFINITY,
                           -INFINITY,               NAN,               -NAN,
                           -0.f,                    1e-40f,            3.4e38f};
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> binade(-30, 20);
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer &b = plan.buffers[i];
    if (b.role != BufferRole::kParam)
      continue;
    std::string bytes;
    for (int64_t e = 0; e < b.numElements(); ++e) {
      float f = e < int64_t(std::size(special)) && e % 2 == 0
                    ? special[(e / 2 + i) % std::size(special)]
                    : std::ldexp(normal(rng), binade(rng));
      uint32_t f32 = floatToBits(f);
      uint16_t h = b.dtype == DType::kF16 ? floatToHalf(f) : floatToBfloat16(f);
      bytes.append(reinterpret_cast<const char *>(b.dtype == DType::kF32 ? (void *)&f32 : &h),
                   dtypeBytes(b.dtype));
    }
    ASSERT_TRUE((*cpu)->write(b.name, bytes.data(), bytes.size()).isOk());
  }
  for (size_t k : launch.kernels)
    ASSERT_TRUE((*cpu)->runKernel(k, 0).isOk());

  // The kernel on a copy of the arena: at its planned (256-byte) offsets,
  // where every full vector is one 16-byte access, and shifted by 4 bytes,
  // where none is aligned and every element goes alone.
  for (size_t shift : {size_t(0), size_t(4)}) {
    std::vector<unsigned char> storage(plan.arenaBytes + 512, 0xa5);
    unsigned char *arena =
        storage.data() + (256 - reinterpret_cast<uintptr_t>(storage.data()) % 256) + shift;
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      if (plan.buffers[i].role == BufferRole::kParam) {
        std::string bytes = (*cpu)->bytesOf(static_cast<int32_t>(i));
        std::memcpy(arena + plan.buffers[i].offset, bytes.data(), bytes.size());
      }
    std::string table = packSegmentTable(*g, [&](int32_t id) {
      return reinterpret_cast<uint64_t>(arena + plan.buffers[id].offset);
    });
    long long counter = 0;
    kernel(table.data(), static_cast<int>(g->tableSegments()), &counter);
    for (const CastSegment &seg : g->castSegments) {
      const PlanBuffer &out = plan.buffers[seg.output];
      std::string want = (*cpu)->bytesOf(seg.output);
      std::string have(reinterpret_cast<const char *>(arena + out.offset), out.bytes);
      for (int64_t e = 0; e < out.numElements(); ++e) {
        size_t w = dtypeBytes(out.dtype);
        ASSERT_EQ(have.substr(e * w, w), want.substr(e * w, w))
            << out.name << "[" << e << "] (" << dtypeName(out.dtype) << "), arena shifted by "
            << shift;
      }
      // Nothing written past the result, in the padding up to the next
      // 256-byte boundary.
      for (int64_t at = out.offset + out.bytes; at % 256 != 0; ++at)
        ASSERT_EQ(arena[at], 0xa5) << out.name << ": byte " << at - out.offset;
    }
  }
  dlclose(library);
  std::system(("rm -rf " + dir).c_str());
#endif
}

TEST(KernelCompiler, HorizontalCastsCompile) {
  Plan plan = castsPlan();
  PlanKernels all = generatePlanKernels(plan);
  ASSERT_TRUE(all.refused.empty()) << all.refused[0].second;
  const GeneratedKernel *casts = nullptr;
  for (const GeneratedKernel &g : all.kernels)
    if (g.form == KernelForm::kHorizontalCast)
      casts = &g;
  ASSERT_NE(casts, nullptr);
  EXPECT_NE(casts->source.find("#include <cuda_fp16.h>"), std::string::npos);
  EXPECT_NE(casts->source.find("DlcPack<A, V>"), std::string::npos) << "16-byte vectors";
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  KernelCompiler compiler("");
  for (const char *arch : {"sm_80", "sm_90"}) {
    auto cubin = compiler.compile(casts->name, casts->source, arch);
    EXPECT_TRUE(cubin.isOk()) << cubin.status().toString();
  }
}

//===----------------------------------------------------------------------===//
// The row form: element-wise producers, one softmax / layer_norm /
// softmax_backward, element-wise consumers, in one launch.
//===----------------------------------------------------------------------===//

namespace {

/// Calls a generated pointer-parameter kernel.
template <size_t... I>
void callWith(void *symbol, const std::vector<void *> &a, std::index_sequence<I...>) {
  reinterpret_cast<void (*)(decltype((void)I, (void *)nullptr)...)>(symbol)(a[I]...);
}
void callKernel(void *symbol, const std::vector<void *> &a) {
  switch (a.size()) {
  case 1: callWith(symbol, a, std::make_index_sequence<1>()); break;
  case 2: callWith(symbol, a, std::make_index_sequence<2>()); break;
  case 3: callWith(symbol, a, std::make_index_sequence<3>()); break;
  case 4: callWith(symbol, a, std::make_index_sequence<4>()); break;
  case 5: callWith(symbol, a, std::make_index_sequence<5>()); break;
  case 6: callWith(symbol, a, std::make_index_sequence<6>()); break;
  case 7: callWith(symbol, a, std::make_index_sequence<7>()); break;
  case 8: callWith(symbol, a, std::make_index_sequence<8>()); break;
  case 9: callWith(symbol, a, std::make_index_sequence<9>()); break;
  case 10: callWith(symbol, a, std::make_index_sequence<10>()); break;
  case 11: callWith(symbol, a, std::make_index_sequence<11>()); break;
  case 12: callWith(symbol, a, std::make_index_sequence<12>()); break;
  default: ADD_FAILURE() << a.size() << " arguments"; break;
  }
}

/// The HandKernelsTest simulator's layer for generated kernels: each
/// block's threads run at once as std::threads, __syncthreads() a barrier,
/// __shared__ arrays statics (one block at a time), blocks one after
/// another; the prelude's DLC_HOST_THREADS block reductions combine them.
const std::string kThreadedLayer =
    std::string("#define DLC_HOST_THREADS 1\n") + dlc_test::kHostThreadLayer;
const char *const kThreadedLaunch = R"src(#include "threads.h"
extern "C" void dlc_sim_launch(void (*body)(void *), void *context, unsigned grid,
                               unsigned block, unsigned blockY) {
  dlc_sim_grid(body, context, grid, block, blockY);
}
)src";
using SimLaunch = void (*)(void (*)(void *), void *, unsigned, unsigned, unsigned);

/// cuda_fp16.h and cuda_bf16.h for the host: the types as their bits,
/// converted as the CPU converts them (Half.h), so that generated kernels
/// touching half types run here too.
const char *const kHostHalfHeaders = R"src(#pragma once
#include <string.h>
struct __half { unsigned short x; };
struct __nv_bfloat16 { unsigned short x; };
inline float dlc_host_bits(unsigned b) { float f; memcpy(&f, &b, 4); return f; }
inline unsigned dlc_host_float_bits(float f) { unsigned b; memcpy(&b, &f, 4); return b; }
inline float __half2float(__half v) {
  unsigned h = v.x, sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return dlc_host_bits(sign | 0x7f800000u | (m << 13));
  if (e == 0) { float f = (float)m * (1.0f / 16777216.0f); return sign ? -f : f; }
  return dlc_host_bits(sign | ((e + 112) << 23) | (m << 13));
}
inline __half __float2half_rn(float f) {
  unsigned bits = dlc_host_float_bits(f), sign = (bits >> 16) & 0x8000u, a = bits & 0x7fffffffu;
  if (a >= 0x7f800000u) return {(unsigned short)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u))};
  if (a >= 0x477ff000u) return {(unsigned short)(sign | 0x7c00u)};
  if (a < 0x38800000u) {
    float scaled = dlc_host_bits(a) * 16777216.0f;
    unsigned whole = (unsigned)scaled;
    float rest = scaled - (float)whole;
    if (rest > 0.5f || (rest == 0.5f && (whole & 1))) ++whole;
    return {(unsigned short)(sign | whole)};
  }
  unsigned e = (a >> 23) - 112, m = a & 0x7fffffu, h = (e << 10) | (m >> 13), rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;
  return {(unsigned short)(sign | h)};
}
inline float __bfloat162float(__nv_bfloat16 v) { return dlc_host_bits((unsigned)v.x << 16); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  unsigned bits = dlc_host_float_bits(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return {(unsigned short)((bits >> 16) | 0x40u)};
  return {(unsigned short)((bits + 0x7fffu + ((bits >> 16) & 1)) >> 16)};
}
)src";

struct SimCall {
  void *symbol;
  std::vector<void *> args;
};
void simBody(void *context) {
  SimCall *call = static_cast<SimCall *>(context);
  callKernel(call->symbol, call->args);
}

/// Runs `plan`'s generated kernels as plain C++ on an arena and compares
/// every output (role kOut) with the CPU executor's: float32 within 1e-5
/// relative, half types within one unit of their last place. `threads` 0:
/// the prelude's one-thread layer; otherwise that many threads a block and
/// up to 3 blocks. Dropouts draw data-parallel rank `rank`'s masks: the
/// CPU's from its communicator, the kernels' from the dropout counter the
/// CUDA executor passes them (the step plus the rank's offset).
void checkAgainstCpu(const Plan &plan, unsigned threads, int64_t step, int rank = 0) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  PlanKernels all = generatePlanKernels(plan);
  for (const auto &[launch, reason] : all.refused)
    ADD_FAILURE() << "launch #" << launch.index << " refused: " << reason;
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  // Each kernel its own translation unit, as NVRTC compiles it (the
  // prelude's helpers depend on the half types the kernel touches).
  std::string files;
  {
    std::ofstream(dir + "/cuda_fp16.h") << kHostHalfHeaders;
    std::ofstream(dir + "/cuda_bf16.h") << "#include \"cuda_fp16.h\"\n";
    std::ofstream(dir + "/threads.h") << "#pragma once\n" << kThreadedLayer;
    if (threads) {
      std::ofstream(dir + "/launch.cpp") << kThreadedLaunch;
      files += " " + dir + "/launch.cpp";
    }
    std::set<std::string> names;
    for (const GeneratedKernel &g : all.kernels)
      if (names.insert(g.name).second) {
        std::ofstream(dir + "/" + g.name + ".cpp")
            << (threads ? "#include \"threads.h\"\n" : "") << g.source;
        files += " " + dir + "/" + g.name + ".cpp";
      }
  }
  std::string command = std::string(DLC_HOST_CXX) + " -std=c++17 -O1 -shared -fPIC -I " + dir +
                        " " + (threads ? "-pthread " : "") + "-o " + dir + "/kernels.so" +
                        files + " 2> " + dir + "/log.txt";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir + "/log.txt").rdbuf();
  void *library = dlopen((dir + "/kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  SimLaunch launch = threads ? reinterpret_cast<SimLaunch>(dlsym(library, "dlc_sim_launch"))
                             : nullptr;
  ASSERT_TRUE(!threads || launch);

  auto cpu = cpu::CpuExecutor::create(plan);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  auto group = createThreadRankGroup(rank + 1);
  cpu.value()->setCommunicator(group[rank].get());
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.f, 2.f);
  for (const PlanBuffer &b : plan.buffers) {
    if (b.role != kIn && b.role != BufferRole::kParam)
      continue;
    std::string bytes;
    for (int64_t e = 0; e < b.numElements(); ++e) {
      float f = normal(rng);
      uint16_t half = b.dtype == DType::kF16 ? floatToHalf(f) : floatToBfloat16(f);
      bytes.append(reinterpret_cast<const char *>(b.dtype == DType::kF32 ? (void *)&f : &half),
                   dtypeBytes(b.dtype));
    }
    ASSERT_TRUE(cpu.value()->write(b.name, bytes.data(), bytes.size()).isOk());
  }
  std::vector<unsigned char> arena(plan.arenaBytes, 0);
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].role == kIn || plan.buffers[i].role == BufferRole::kParam) {
      std::string bytes = cpu.value()->bytesOf(static_cast<int32_t>(i));
      std::memcpy(arena.data() + plan.buffers[i].offset, bytes.data(), bytes.size());
    }
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    ASSERT_TRUE(cpu.value()->runKernel(k, step).isOk());

  // The kernels read it from memory, as from the device's.
  long long counter =
      static_cast<long long>(static_cast<uint64_t>(step) + dropoutStepOffset(rank));
  for (const GeneratedKernel &g : all.kernels) {
    SimCall call{dlsym(library, g.name.c_str()), {}};
    ASSERT_NE(call.symbol, nullptr) << g.name;
    for (int32_t id : g.args)
      call.args.push_back(arena.data() + plan.buffers[id].offset);
    if (g.readsStep)
      call.args.push_back(&counter);
    // Zeroed, as the executors give it; the kernel leaves its counter at 0.
    std::vector<uint64_t> scratch(static_cast<size_t>((g.scratchBytes + 7) / 8), 0);
    if (g.scratchBytes > 0)
      call.args.push_back(scratch.data());
    // A column reduction's block is a tile of columns (blockDim.x, at most
    // 32) by rows of threads that split each sum (blockDim.y): 4 here.
    if (threads)
      launch(simBody, &call, static_cast<unsigned>(std::min<int64_t>(g.work, 3)),
             g.blockSizeY > 1 ? std::min(threads, 32u) : threads, g.blockSizeY > 1 ? 4 : 1);
    else
      callKernel(call.symbol, call.args);
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer &b = plan.buffers[i];
    if (b.role != kOut)
      continue;
    std::string want = cpu.value()->bytesOf(static_cast<int32_t>(i));
    const unsigned char *have = arena.data() + b.offset;
    for (int64_t e = 0; e < b.numElements(); ++e) {
      if (b.dtype == DType::kF32) {
        float w, h;
        std::memcpy(&w, want.data() + 4 * e, 4);
        std::memcpy(&h, have + 4 * e, 4);
        ASSERT_NEAR(h, w, 1e-5f * std::max(1.f, std::fabs(w)))
            << b.name << "[" << e << "], " << threads << " threads";
      } else {
        uint16_t w, h;
        std::memcpy(&w, want.data() + 2 * e, 2);
        std::memcpy(&h, have + 2 * e, 2);
        ASSERT_LE(std::abs(int(w) - int(h)), 1)
            << b.name << "[" << e << "] (" << dtypeName(b.dtype) << "), " << threads
            << " threads";
      }
    }
  }
  dlclose(library);
  std::system(("rm -rf " + dir).c_str());
#endif
}

} // namespace

TEST(Codegen, RowGroupsAreOneLaunchEach) {
  Plan plan = rowPlan();
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  PlanKernels all = generatePlanKernels(plan);
  for (const auto &[launch, reason] : all.refused)
    ADD_FAILURE() << "launch #" << launch.index << " refused: " << reason;
  std::map<KernelForm, int> forms;
  for (const GeneratedKernel &g : all.kernels)
    ++forms[g.form];
  EXPECT_EQ(forms[KernelForm::kRow], 8);
  EXPECT_EQ(forms[KernelForm::kLoop], 2) << "the exported sum's reader, the dropout loop";
  EXPECT_EQ(forms[KernelForm::kReduction], 1);
  for (const GeneratedKernel &g : all.kernels) {
    if (g.form != KernelForm::kRow)
      continue;
    EXPECT_STREQ(kernelFormName(g.form), "row");
    EXPECT_EQ(g.name.rfind("dlc_row_", 0), 0u) << g.name;
    EXPECT_NE(g.source.find("dlc_block_allreduce<"), std::string::npos) << g.name;
    // One block per row.
    const PlanKernel &first = plan.kernels[g.kernels.front()];
    const PlanBuffer &in = plan.buffers[first.inputs[0]];
    EXPECT_EQ(g.work, in.numElements() / in.shape.back()) << g.name;
    EXPECT_EQ(g.readsStep, g.source.find("dlc_step_counter") != std::string::npos) << g.name;
  }
  // The layer_norm group writes the sum, which the relu outside reads, and
  // its result; the 1000-long row takes the largest block.
  const GeneratedKernel &ln = all.kernels[0];
  ASSERT_EQ(ln.form, KernelForm::kRow);
  EXPECT_TRUE(ln.readsStep);
  EXPECT_EQ(ln.args.size(), 6u) << "lin, res, g, b; then sum and ln";
  EXPECT_EQ(ln.blockSize, 256);
  EXPECT_NE(ln.source.find("const long long *__restrict__ dlc_step_counter"), std::string::npos);
}

TEST(Codegen, RowGroupsExportSlicesOfWholeRows) {
  // rowPlan's last group: the first token of a layer_norm's result and a
  // strided slice of a consumer's batch rows, stored in the last pass.
  Plan plan = rowPlan();
  for (KernelTarget target : {KernelTarget::kCuda, KernelTarget::kHost}) {
    PlanKernels all = generatePlanKernels(plan, target);
    ASSERT_TRUE(all.refused.empty()) << all.refused[0].second;
    const GeneratedKernel &g = all.kernels.back();
    ASSERT_EQ(g.form, KernelForm::kRow) << g.name;
    EXPECT_EQ(g.work, 20) << "4 x 5 rows of 48";
    EXPECT_EQ(g.args.size(), 7u) << "px, pr, pg, pb; then pln, pfirst, podd";
    EXPECT_NE(g.source.find("dlc_st(out5, sr"), std::string::npos) << g.source;
    EXPECT_NE(g.source.find("dlc_st(out6, sr"), std::string::npos) << g.source;
  }
}

TEST(Codegen, RowGroupsRefuseSlicesOfARowsElements) {
  // A slice along the normalized axis keeps parts of rows: still refused,
  // with its reason; so is a slice whose bytes are an input's.
  PlanBuilder p;
  int32_t x = p.buffer("x", {3, 16}, BufferRole::kInput), n = p.buffer("n", {3, 16});
  p.kernel("layer_norm", {x, p.buffer("g", {16}, BufferRole::kParam),
                          p.buffer("b", {16}, BufferRole::kParam)}, {n});
  p.kernel("slice", {n}, {p.buffer("part", {3, 8}, BufferRole::kGradient)}, -1,
           {{"axis", int64_t(1)}, {"start", int64_t(0)}, {"step", int64_t(2)}});
  inputGroup(p, 0, 0);
  ASSERT_TRUE(validatePlan(p.plan).isOk()) << validatePlan(p.plan).toString();
  PlanKernels all = generatePlanKernels(p.plan);
  ASSERT_EQ(all.refused.size(), 1u);
  EXPECT_NE(all.refused[0].second.find("exports 'part' (f32[3,8]), not of the shape of the rows "
                                       "of its layer_norm [3,16], and a slice of the rows' "
                                       "elements, not of whole rows"),
            std::string::npos)
      << all.refused[0].second;
  // Whole rows, but in the bytes of the input: a block would store into
  // another block's rows before it reads them.
  p.plan.kernels[1].attrs["axis"] = int64_t(0);
  p.plan.kernels[1].attrs["step"] = int64_t(1);
  PlanBuffer &part = p.plan.buffers[p.plan.kernels[1].outputs[0]];
  part.shape = {2, 16};
  part.bytes = 2 * 16 * 4;
  part.offset = p.plan.buffers[x].offset;
  all = generatePlanKernels(p.plan);
  ASSERT_EQ(all.refused.size(), 1u);
  EXPECT_NE(all.refused[0].second.find("exports the slice 'part', which shares arena bytes with "
                                       "input 'x': the row form stores it to other rows"),
            std::string::npos)
      << all.refused[0].second;
}

TEST(Codegen, RowKernelsMatchTheCpuReferenceOnTheHost) {
  Plan plan = rowPlan();
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(plan, 0, 5));
}

TEST(Codegen, RowKernelsMatchTheCpuReferenceWithManyThreadsOnTheHost) {
  // 16 threads a block and up to 3 blocks: every row statistic is a
  // block-wide reduction, rows longer than the block take several elements
  // per thread, and blocks stride over the rows.
  Plan plan = rowPlan();
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(plan, 16, 5));
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(plan, 32, 2));
}

TEST(Codegen, EachRanksDropoutMasksAreTheCpuRanksOnTheHost) {
  // The row plan's dropouts (BERT's, GPT-2's attention and its gradient)
  // draw rank 2's masks on both sides, bit for bit.
  Plan plan = rowPlan();
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(plan, 0, 4, /*rank=*/2));
  // Not vacuous: rank 2's masks are not rank 0's.
  // A rank through its communicator, or through setRank alone (the CUDA
  // backend's host fallback, which has no communicator).
  auto maskOf = [&](int rank, bool communicator = true) {
    auto exec = cpu::CpuExecutor::create(plan);
    EXPECT_TRUE(exec.isOk());
    auto group = createThreadRankGroup(rank + 1);
    if (communicator)
      (*exec)->setCommunicator(group[rank].get());
    else
      (*exec)->setRank(rank);
    for (const PlanBuffer &b : plan.buffers)
      if (b.role == kIn && b.dtype == DType::kF32) {
        std::vector<float> x(b.numElements(), 1.0f);
        EXPECT_TRUE((*exec)->write(b.name, x.data(), x.size() * 4).isOk());
      }
    std::string outputs;
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      EXPECT_TRUE((*exec)->runKernel(k, 4).isOk());
      if (plan.kernels[k].id == OpId::kDropout)
        outputs += (*exec)->bytesOf(plan.kernels[k].outputs[0]);
    }
    return outputs;
  };
  std::string rank0 = maskOf(0), rank2 = maskOf(2);
  EXPECT_FALSE(rank0.empty());
  EXPECT_NE(rank0, rank2);
  EXPECT_EQ(maskOf(2, /*communicator=*/false), rank2);
  EXPECT_EQ(maskOf(0, /*communicator=*/false), rank0);
}

TEST(Codegen, EveryFormMatchesTheCpuWithManyThreadsOnTheHost) {
  // The forms plan (loops, column and row reductions, the bias-gradient
  // tiles) with 16-thread blocks, column tiles 16 x 4 threads: the rows of
  // threads of a column tile combine through shared memory as on a GPU.
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(formsPlan(), 16, 0));
}

TEST(Codegen, TransposesAreTiledAndMatchTheCpuWithManyThreadsOnTheHost) {
  Plan plan = transposePlan();
  PlanKernels all = generatePlanKernels(plan);
  ASSERT_TRUE(all.refused.empty()) << all.refused[0].second;
  std::map<KernelForm, int> forms;
  for (const GeneratedKernel &g : all.kernels)
    ++forms[g.form];
  EXPECT_EQ(forms[KernelForm::kTranspose], 6);
  EXPECT_EQ(forms[KernelForm::kLoop], 2) << "the 5-d permutation and the 3-channel image";
  for (const GeneratedKernel &g : all.kernels)
    if (g.form == KernelForm::kTranspose) {
      // [2][37][45] as 2 x 2 x 2 tiles of 32 x 32, or [2][45][37] likewise.
      EXPECT_EQ(g.work, 8) << g.name;
      EXPECT_EQ(g.blockSize, 32);
      EXPECT_EQ(g.blockSizeY, 8);
    }
  // Blocks of 16 x 4 threads, three of them walking all eight tiles: every
  // element lands where the CPU's transpose puts it, bit for bit.
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(plan, 16, 0));
}

TEST(Codegen, RowGroupsTheRowFormDoesNotCoverAreRefused) {
  auto reason = [](const Plan &plan) {
    GenerateDecision d = isGeneratable(plan, planLaunches(plan)[0]);
    EXPECT_FALSE(d.ok);
    return d.reason;
  };
  {
    // Two row ops in one launch.
    PlanBuilder p;
    int32_t x = p.buffer("x", {4, 8}, kIn), s = p.buffer("s", {4, 8});
    p.kernel("softmax", {x}, {s}, 0);
    p.kernel("layer_norm", {s, p.buffer("g", {8}, kIn), p.buffer("b", {8}, kIn)},
             {p.buffer("y", {4, 8}, kOut)}, 0);
    EXPECT_NE(reason(p.plan).find("holds 2 row ops (softmax and layer_norm)"),
              std::string::npos)
        << reason(p.plan);
  }
  {
    // A softmax over a leading axis.
    PlanBuilder p;
    int32_t x = p.buffer("x", {4, 8}, kIn), t = p.buffer("t", {4, 8});
    p.kernel("relu", {x}, {t}, 0);
    p.kernel("softmax", {t}, {p.buffer("y", {4, 8}, kOut)}, 0, {{"axis", int64_t(0)}});
    EXPECT_NE(reason(p.plan).find("softmax over axis 0 of a rank-2 input: the row form "
                                  "normalizes the last axis only"),
              std::string::npos)
        << reason(p.plan);
  }
  {
    // A row op and a reduction; a row result read broadcast; a value of
    // another shape exported.
    PlanBuilder p;
    int32_t x = p.buffer("x", {4, 8}, kIn), y = p.buffer("y", {4, 8});
    p.kernel("softmax", {x}, {y}, 0);
    p.kernel("sum_to_shape", {y}, {p.buffer("s", {1, 8}, kOut)}, 0,
             {{"shape", std::vector<int64_t>{1, 8}}});
    EXPECT_NE(reason(p.plan).find("holds a row op (softmax) and a reduction (sum_to_shape)"),
              std::string::npos)
        << reason(p.plan);
    PlanBuilder q;
    int32_t a = q.buffer("a", {4, 8}, kIn), b = q.buffer("b", {4, 8});
    q.kernel("softmax", {a}, {b}, 0);
    q.kernel("broadcast_to", {b}, {q.buffer("c", {2, 4, 8}, kOut)}, 0);
    EXPECT_NE(reason(q.plan).find("exports 'c' (f32[2,4,8]), not of the shape of the rows"),
              std::string::npos)
        << reason(q.plan);
  }
  {
    // layer_norm_backward whose column sum an op of the launch reads; a
    // lone one (its own kernel takes it).
    PlanBuilder p;
    int32_t dy = p.buffer("dy", {4, 8}, kIn), x = p.buffer("x", {4, 8}, kIn),
            g = p.buffer("g", {8}, kIn), dg = p.buffer("dg", {8});
    p.kernel("layer_norm_backward", {dy, x, g},
             {p.buffer("dx", {4, 8}, kOut), dg, p.buffer("db", {8}, kOut)}, 0);
    p.kernel("relu", {dg}, {p.buffer("r", {8}, kOut)}, 0);
    EXPECT_NE(reason(p.plan).find("with its column sum 'dg' read in the launch"),
              std::string::npos)
        << reason(p.plan);
    PlanBuilder q;
    q.kernel("layer_norm_backward",
             {q.buffer("dy", {4, 8}, kIn), q.buffer("x", {4, 8}, kIn), q.buffer("g", {8}, kIn)},
             {q.buffer("dx", {4, 8}, kOut), q.buffer("dg", {8}, kOut), q.buffer("db", {8}, kOut)});
    EXPECT_NE(reason(q.plan).find("a lone layer_norm_backward takes its own kernel"),
              std::string::npos)
        << reason(q.plan);
  }
  {
    // Other hand-written ops keep the library path.
    PlanBuilder p;
    int32_t l = p.buffer("l", {4, 8}, kIn), t = p.buffer("t", {4, 8});
    p.kernel("relu", {l}, {t}, 0);
    p.kernel("softmax_cross_entropy", {t, p.buffer("y", {4}, kIn, DType::kI32)},
             {p.buffer("loss", {}, kOut)}, 0);
    EXPECT_NE(reason(p.plan).find("softmax_cross_entropy is a hand-written op, not one the "
                                  "generator covers"),
              std::string::npos)
        << reason(p.plan);
  }
}

//===----------------------------------------------------------------------===//
// layer_norm_backward in the row form: producers, dx, consumers, and the
// column sums as a reduction epilogue, in one launch.
//===----------------------------------------------------------------------===//

TEST(Codegen, NormBackwardGroupsAreOneLaunchEach) {
  Plan plan = normBackwardPlan();
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  for (KernelTarget target : {KernelTarget::kCuda, KernelTarget::kHost}) {
    PlanKernels all = generatePlanKernels(plan, target);
    for (const auto &[launch, reason] : all.refused)
      ADD_FAILURE() << "launch #" << launch.index << " refused: " << reason;
    ASSERT_EQ(all.kernels.size(), 3u);
    // Rows in min(rows, 256) chunks; 2 d doubles of partials a chunk after
    // the 16-byte counter.
    const int64_t chunks[] = {35, 256, 3}, d[] = {200, 20, 300};
    for (size_t i = 0; i < 3; ++i) {
      const GeneratedKernel &g = all.kernels[i];
      EXPECT_EQ(g.form, KernelForm::kRow) << g.name;
      EXPECT_EQ(g.work, chunks[i]) << g.name;
      EXPECT_EQ(g.scratchBytes, 16 + 2 * d[i] * chunks[i] * 8) << g.name;
      EXPECT_NE(g.source.find("dlc_last_arrival((unsigned *)dlc_scratch"), std::string::npos);
      EXPECT_NE(g.source.find("unsigned char *__restrict__ dlc_scratch"), std::string::npos);
    }
    EXPECT_TRUE(all.kernels[0].readsStep) << "the dropout after it";
    EXPECT_EQ(all.kernels[0].args.size(), 9u) << "mh, res, x, g; dx, dx16, dxd, dg, db";
  }
}

TEST(Codegen, NormBackwardKernelsMatchTheCpuReferenceOnTheHost) {
  Plan plan = normBackwardPlan();
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(plan, 0, 5));
  // Several threads a block, up to 3 blocks striding over the chunks: the
  // last to arrive sums the partials.
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(plan, 16, 5));
  ASSERT_NO_FATAL_FAILURE(checkAgainstCpu(plan, 32, 2));
}

// Every kernel of `plan` compiled with NVRTC for sm_80 and sm_90; returns
// how many compiles of a `form` kernel succeeded (any form: -1).
static int compileForAmpereAndHopper(const Plan &plan, int form = -1) {
  PlanKernels all = generatePlanKernels(plan);
  EXPECT_TRUE(all.refused.empty()) << all.refused[0].second;
  KernelCompiler compiler("");
  int compiled = 0;
  for (const GeneratedKernel &g : all.kernels)
    for (const char *arch : {"sm_80", "sm_90"}) {
      auto cubin = compiler.compile(g.name, g.source, arch);
      EXPECT_TRUE(cubin.isOk()) << g.name << " " << arch << ": " << cubin.status().toString();
      compiled += cubin.isOk() && (form < 0 || g.form == static_cast<KernelForm>(form));
    }
  return compiled;
}

TEST(KernelCompiler, NormBackwardKernelsCompile) {
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  EXPECT_EQ(compileForAmpereAndHopper(normBackwardPlan()), 6);
}

TEST(KernelCompiler, ReductionsOverPaddedRowsCompile) {
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  EXPECT_EQ(compileForAmpereAndHopper(paddedReductionsPlan(true)), 8);
}

TEST(KernelCompiler, RowKernelsCompile) {
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  EXPECT_EQ(compileForAmpereAndHopper(rowPlan(), static_cast<int>(KernelForm::kRow)), 16);
}

// compileInParallel fills the cache a later compiler reads: each distinct
// source compiles once, whatever the threads, and the counts add up.
TEST(KernelCompiler, ParallelCompilesFillTheCacheOncePerSource) {
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  PlanKernels all = generatePlanKernels(formsPlan());
  ASSERT_GE(all.kernels.size(), 2u);
  std::vector<KernelSource> sources;
  for (const GeneratedKernel &g : all.kernels)
    sources.push_back({g.name, g.source});
  sources.push_back(sources.front()); // a repeat compiles once
  std::set<std::string> distinct;
  for (const KernelSource &k : sources)
    distinct.insert(k.source);
  int64_t hits = 0, misses = 0;
  Status cold = compileInParallel(sources, "sm_90", 3, dir + "/cache", &hits, &misses);
  ASSERT_TRUE(cold.isOk()) << cold.toString();
  EXPECT_EQ(misses, static_cast<int64_t>(distinct.size()));
  EXPECT_EQ(hits, 0);
  KernelCompiler later(dir + "/cache");
  for (const GeneratedKernel &g : all.kernels)
    ASSERT_TRUE(later.compile(g.name, g.source, "sm_90").isOk());
  EXPECT_EQ(later.cacheMisses(), 0);
  EXPECT_EQ(later.cacheHits(), static_cast<int64_t>(all.kernels.size()));
  // A source NVRTC refuses is reported, named.
  Status broken = compileInParallel({{"dlc_broken", "extern \"C\" __global__ void f( {"}},
                                    "sm_90", 2, dir + "/cache");
  ASSERT_FALSE(broken.isOk());
  EXPECT_NE(broken.message().find("dlc_broken"), std::string::npos) << broken.toString();
  std::system(("rm -rf " + dir).c_str());
}

// On a GPU: every generated form (loop, reduction, optimizer, horizontal
// cast, row) through the CUDA executor against the CPU backend on the same
// random inputs; each output within 1e-5 (float32) or 1e-2 (half types) of
// the CPU's, relative to the largest magnitude of the CPU's output.
TEST(Codegen, EveryFormMatchesTheCpuOnTheGpu) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  for (const Plan &plan : {formsPlan(), castsPlan(), rowPlan(), normBackwardPlan()}) {
    SCOPED_TRACE(plan.model);
    auto cpuExec = cpu::CpuExecutor::create(plan);
    ASSERT_TRUE(cpuExec.isOk()) << cpuExec.status().toString();
    auto gpuExec = cuda::CudaExecutor::create(plan);
    ASSERT_TRUE(gpuExec.isOk()) << gpuExec.status().toString();
    for (const cuda::LaunchPath &l : (*gpuExec)->launchPaths())
      EXPECT_NE(l.path, "host-fallback") << l.label << ": " << l.reason;
    std::mt19937 rng(13);
    std::normal_distribution<float> normal(0.f, 1.f);
    for (const PlanBuffer &b : plan.buffers) {
      if (b.role != kIn && b.role != BufferRole::kParam)
        continue;
      std::vector<float> values(b.numElements());
      for (float &v : values)
        v = normal(rng);
      std::string bytes(b.bytes, '\0');
      if (cpu::isHalf(b.dtype))
        cpu::roundFromFloat(values.data(), b.dtype, bytes.data(), b.numElements());
      else
        std::memcpy(bytes.data(), values.data(), bytes.size());
      ASSERT_TRUE((*cpuExec)->write(b.name, bytes.data(), bytes.size()).isOk()) << b.name;
      ASSERT_TRUE((*gpuExec)->write(b.name, bytes.data(), bytes.size()).isOk()) << b.name;
    }
    ASSERT_TRUE((*cpuExec)->step().isOk());
    Status stepped = (*gpuExec)->step();
    ASSERT_TRUE(stepped.isOk()) << stepped.toString();
    ASSERT_TRUE((*gpuExec)->synchronize().isOk());
    for (size_t id = 0; id < plan.buffers.size(); ++id) {
      const PlanBuffer &b = plan.buffers[id];
      if (b.role != kOut)
        continue;
      auto widen = [&](const std::string &bytes) {
        std::vector<float> v(b.numElements());
        if (cpu::isHalf(b.dtype))
          cpu::widenToFloat(bytes.data(), b.dtype, v.data(), v.size());
        else
          std::memcpy(v.data(), bytes.data(), std::min(bytes.size(), v.size() * 4));
        return v;
      };
      std::string gpuBytes = (*gpuExec)->bytesOf(static_cast<int32_t>(id));
      ASSERT_EQ(gpuBytes.size(), static_cast<size_t>(b.bytes)) << b.name;
      std::vector<float> want = widen((*cpuExec)->bytesOf(static_cast<int32_t>(id)));
      std::vector<float> got = widen(gpuBytes);
      double scale = 1e-30, worst = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        scale = std::max(scale, std::fabs(double(want[i])));
        worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
      }
      EXPECT_LE(worst / scale, cpu::isHalf(b.dtype) ? 1e-2 : 1e-5)
          << b.name << ": largest difference " << worst << " against magnitude " << scale;
    }
  }
}
