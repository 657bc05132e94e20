//===- HostKernelsTest.cpp - the CPU backend's fast mode ------------------===//
//
// The fast mode (generated launches compiled for the host) against the
// reference mode on whole plans: every kernel form, split groups, half
// types, optimizer tables, a data-parallel rank's dropout masks; the same
// bytes for every thread count; one shared object per plan, cached; a
// compiler failure that names the source and the log.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Half.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cpu/HostKernels.h"

#include "CodegenPlans.h"
#include "TestPlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <tuple>

using namespace dlc::rt;
using dlc_test::kIn;
using dlc_test::kOut;
using PlanBuilder = dlc_test::GroupPlanBuilder;

namespace {

/// A kernel cache of the test's own, removed afterwards.
struct TempCache {
  std::string dir;
  TempCache() {
    char pattern[] = "/tmp/dlc-host-kernels-test-XXXXXX";
    dir = mkdtemp(pattern) ? pattern : "";
  }
  ~TempCache() {
    if (!dir.empty())
      std::system(("rm -rf " + dir).c_str());
  }
};

cpu::CpuExecutor::Options fastOptions(const TempCache &cache, int threads = 0) {
  cpu::CpuExecutor::Options o;
  o.generatedLaunches = true;
  o.kernelCacheDir = cache.dir;
  o.threads = threads;
  o.partElements = 1; // cut even these small launches into parts
  return o;
}

std::unique_ptr<cpu::CpuExecutor> makeExecutor(const Plan &plan,
                                               const cpu::CpuExecutor::Options &options) {
  auto exec = cpu::CpuExecutor::create(plan, options);
  EXPECT_TRUE(exec.isOk()) << exec.status().toString();
  return exec.isOk() ? std::move(*exec) : nullptr;
}

/// Every float buffer random (the same bytes for every executor), so that
/// inputs, parameters and gradients no kernel of the plan writes have values.
void fillAll(const Plan &plan, cpu::CpuExecutor &exec, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 2.f);
  for (const PlanBuffer &b : plan.buffers) {
    if (b.dtype != DType::kF32 && b.dtype != DType::kF16 && b.dtype != DType::kBF16)
      continue;
    std::string bytes;
    for (int64_t e = 0; e < b.numElements(); ++e) {
      float f = normal(rng);
      if (b.name == "status") // a loss scale's {multiplier, skip}
        f = e == 0 ? 0.5f : 0.f;
      uint16_t half = b.dtype == DType::kF16 ? floatToHalf(f) : floatToBfloat16(f);
      bytes.append(reinterpret_cast<const char *>(b.dtype == DType::kF32 ? (void *)&f : &half),
                   dtypeBytes(b.dtype));
    }
    ASSERT_TRUE(exec.write(b.name, bytes.data(), bytes.size()).isOk());
  }
}

/// Buffers a step leaves for later: all but the temporaries, which a fused
/// launch keeps in registers.
bool compared(const PlanBuffer &b) { return b.role != BufferRole::kTemporary; }

/// `steps` steps of the reference and the fast mode from the same bytes:
/// float32 within 1e-5 relative, half types within one unit in the last
/// place. Returns the fast executor.
std::unique_ptr<cpu::CpuExecutor> expectSameAsReference(const Plan &plan, const TempCache &cache,
                                                        int steps = 2, int rank = 0) {
  auto reference = makeExecutor(plan, cpu::CpuExecutor::Options());
  auto fast = makeExecutor(plan, fastOptions(cache));
  if (!reference || !fast)
    return nullptr;
  for (cpu::CpuExecutor *e : {reference.get(), fast.get()}) {
    fillAll(plan, *e, 17);
    e->setRank(rank);
  }
  for (int s = 0; s < steps; ++s) {
    EXPECT_TRUE(reference->step().isOk());
    Status ran = fast->step();
    EXPECT_TRUE(ran.isOk()) << ran.toString();
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer &b = plan.buffers[i];
    if (!compared(b))
      continue;
    std::string want = reference->bytesOf(int32_t(i)), have = fast->bytesOf(int32_t(i));
    for (int64_t e = 0; e < b.numElements(); ++e) {
      if (b.dtype == DType::kF32) {
        float w, h;
        std::memcpy(&w, want.data() + 4 * e, 4);
        std::memcpy(&h, have.data() + 4 * e, 4);
        if (std::isnan(w) && std::isnan(h))
          continue;
        EXPECT_NEAR(h, w, 1e-5f * std::max(1.f, std::fabs(w))) << b.name << "[" << e << "]";
      } else if (b.dtype == DType::kF16 || b.dtype == DType::kBF16) {
        uint16_t w, h;
        std::memcpy(&w, want.data() + 2 * e, 2);
        std::memcpy(&h, have.data() + 2 * e, 2);
        EXPECT_LE(std::abs(int(w) - int(h)), 1) << b.name << "[" << e << "]";
      }
      if (::testing::Test::HasFailure())
        return nullptr;
    }
  }
  return fast;
}

/// The fast mode ran every launch of the plan as a generated kernel.
void expectAllGenerated(const cpu::CpuExecutor &fast) {
  const cpu::HostKernelStats *stats = fast.hostKernelStats();
  ASSERT_NE(stats, nullptr);
  EXPECT_GT(stats->generated, 0u);
  EXPECT_EQ(stats->generated, stats->launches);
  EXPECT_EQ(stats->kernels, fast.plan().kernels.size());
}

/// SGD with momentum and AdamW in one horizontal group under a loss
/// scale, and SGD on half-precision gradients whose casts the group fuses.
Plan optimizerPlan() {
  PlanBuilder p;
  p.plan.model = "host_optimizer";
  addSgdAndAdamwUpdates(p);
  int32_t u = p.buffer("u", {300}, BufferRole::kParam),
          mu = p.buffer("mu", {300}, BufferRole::kOptimizerState);
  int32_t gh = p.buffer("gh", {300}, BufferRole::kTemporary, DType::kF16), gu = p.buffer("gu", {300});
  p.kernel("cast", {gh}, {gu}, 1, {{"to", std::string("f32")}});
  p.kernel("sgd_update", {u, gu, mu},
           {p.buffer("u'", {300}, BufferRole::kUpdate), p.buffer("mu'", {300}, BufferRole::kUpdate)},
           1, {{"lr", 0.1}, {"momentum", 0.9}});
  // AdamW with other betas, then the defaults again: the kernel keeps the
  // bias corrections of the last betas it saw and must take them anew.
  for (auto [name, beta1, beta2] : {std::tuple{"a", 0.8, 0.99}, {"b", 0.9, 0.999}}) {
    std::string n = name;
    int32_t a = p.buffer(n, {70}, BufferRole::kParam);
    p.kernel("adamw_update",
             {a, p.buffer("g" + n, {70}), p.buffer(n + "1", {70}, BufferRole::kOptimizerState),
              p.buffer(n + "2", {70}, BufferRole::kOptimizerState)},
             {p.buffer(n + "'", {70}, BufferRole::kUpdate),
              p.buffer(n + "1'", {70}, BufferRole::kUpdate),
              p.buffer(n + "2'", {70}, BufferRole::kUpdate)},
             1, {{"lr", 1e-2}, {"beta1", beta1}, {"beta2", beta2}});
  }
  for (PlanKernel &k : p.plan.kernels)
    k.fusionKind = FusionKind::kOptimizerHorizontal;
  // A lone update, outside groups: generated too.
  int32_t z = p.buffer("z", {5}, BufferRole::kParam);
  p.kernel("adamw_update",
           {z, p.buffer("gz", {5}), p.buffer("z1", {5}, BufferRole::kOptimizerState),
            p.buffer("z2", {5}, BufferRole::kOptimizerState)},
           {p.buffer("z'", {5}, BufferRole::kUpdate), p.buffer("z1'", {5}, BufferRole::kUpdate),
            p.buffer("z2'", {5}, BufferRole::kUpdate)},
           -1, {{"lr", 1e-2}});
  return p.plan;
}

/// Groups the generator does not compute whole: xla's GEMM with its bias
/// and activation, paddle's batch norm + relu. Their element-wise runs are
/// generated, the GEMM and the batch norm run on their own.
Plan splitGroupsPlan() {
  PlanBuilder p;
  p.plan.model = "host_split";
  int32_t x = p.buffer("x", {8, 16}, kIn), wt = p.buffer("wt", {16, 24}, BufferRole::kParam),
          bias = p.buffer("bias", {24}, BufferRole::kParam);
  int32_t mm = p.buffer("mm", {8, 24}), sum = p.buffer("sum", {8, 24});
  p.kernel("matmul", {x, wt}, {mm}, 0);
  p.kernel("add", {mm, bias}, {sum}, 0);
  p.kernel("gelu", {sum}, {p.buffer("act", {8, 24}, kOut)}, 0);
  for (PlanKernel &k : p.plan.kernels)
    k.fusionKind = FusionKind::kGemmBiasAct;
  size_t first = p.plan.kernels.size();
  int32_t img = p.buffer("img", {2, 3, 4, 5}, kIn);
  int32_t scale = p.buffer("scale", {3}, BufferRole::kParam),
          shift = p.buffer("shift", {3}, BufferRole::kParam);
  int32_t mean = p.buffer("mean", {3}, BufferRole::kState),
          var = p.buffer("var", {3}, BufferRole::kState);
  int32_t bn = p.buffer("bn", {2, 3, 4, 5});
  p.kernel("batch_norm", {img, scale, shift, mean, var},
           {bn, p.buffer("mean'", {3}, BufferRole::kUpdate), p.buffer("var'", {3}, BufferRole::kUpdate)},
           1, {{"epsilon", 1e-5}, {"momentum", 0.1}});
  p.kernel("relu", {bn}, {p.buffer("bn_relu", {2, 3, 4, 5}, kOut)}, 1);
  for (size_t k = first; k < p.plan.kernels.size(); ++k)
    p.plan.kernels[k].fusionKind = FusionKind::kBnAct;
  return p.plan;
}

/// BERT's GELU gradient with its bias gradient in bf16: a column reduction
/// with an element-wise producer, over more outputs than a host tile holds
/// (so tiles are whole, partial and cut by the parts), whose producer's
/// result also leaves the launch. Checked by the relative measure: near
/// the gradient's zero (x about -0.75) the host's float erf, 4.7e-7 from
/// the reference's, moves a bf16 result by a few of its tiny units.
Plan bf16ColumnPlan() {
  PlanBuilder p;
  p.plan.model = "host_bf16_columns";
  const DType h = DType::kBF16;
  int32_t dy = p.buffer("dy", {40, 2100}, kIn, h), z = p.buffer("z", {40, 2100}, kIn, h);
  int32_t gb = p.buffer("gb", {40, 2100}, kOut, h);
  p.kernel("gelu_backward", {dy, z}, {gb}, 0);
  p.kernel("sum_to_shape", {gb}, {p.buffer("db", {1, 2100}, kOut, h)}, 0,
           {{"shape", std::vector<int64_t>{1, 2100}}});
  return p.plan;
}

/// Float bit patterns where a rounding to f16 or bf16 goes wrong if done
/// wrong: ties to even each way, NaNs whose payload lies in the bits a
/// rounding drops, overflow to inf, signed zeros and subnormals.
const uint32_t kRoundingCases[] = {
    0x3f808000u, // 1 + 2^-8, a bf16 tie: stays 0x3f80 (even)
    0x3f818000u, // a tie above an odd bf16: up to 0x3f82
    0x3f808001u, // just above the tie: up to 0x3f81
    0x3f807fffu, // just below it: 0x3f80
    0x7f800001u, // a NaN with only a low payload bit: must stay NaN
    0xff800001u, // its negative
    0x7fc00000u, // the quiet NaN
    0x7f7fffffu, // FLT_MAX: rounds to bf16 and f16 inf
    0x7f7f8000u, // the largest bf16 tie below inf: odd, so up to inf
    0x477ff000u, // 65520: f16's first value that rounds to inf
    0x477fefffu, // just below: f16's largest finite, 65504
    0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u,
    0x00000001u, // the smallest float subnormal
    0x33800000u, // 2^-24: f16's smallest subnormal
    0x33000000u, // 2^-25: an f16 tie at zero, to even (0)
    0x3f800000u, 0xbfc00000u, 0x3eaaaaabu, 0xc2f6e979u};

/// Casts of every pair the table converts, of 1, 2, an odd number and
/// many elements; the many-element segment sits in the middle, so the cut
/// between any 2 or 3 parts of all segments' vectors falls inside it.
Plan specialCastsPlan() {
  PlanBuilder p;
  p.plan.model = "host_special_casts";
  const DType f = DType::kF32, h = DType::kF16, b = DType::kBF16;
  const std::tuple<int64_t, DType, DType> cases[] = {
      {1, f, b}, {2, f, h}, {37, b, f}, {5003, f, b}, {333, f, h}, {2, h, f},
      {19, f, f}, {23, b, b}, {45, h, b}, {7, b, h}, {1, f, b}};
  for (size_t i = 0; i < std::size(cases); ++i) {
    auto [n, from, to] = cases[i];
    std::string name = "c" + std::to_string(i);
    p.kernel("cast", {p.buffer(name, {n}, BufferRole::kParam, from)},
             {p.buffer(name + ".out", {n}, kOut, to)}, 0, {{"to", std::string(dtypeName(to))}})
        .fusionKind = FusionKind::kCastHorizontal;
  }
  return p.plan;
}

} // namespace

TEST(HostKernels, TheCastTableRoundsAsTheCpuDoesOnEveryThreadCount) {
  // The host's cast loop is vectorized: each result is checked bit for
  // bit, on awkward values, against Half.h (and the worst cases against
  // their known bits), for 1, 2 and 3 threads.
  TempCache cache;
  Plan plan = specialCastsPlan();
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  std::vector<std::string> runs;
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    auto exec = makeExecutor(plan, fastOptions(cache, threads));
    ASSERT_NE(exec, nullptr);
    std::mt19937 rng(5);
    std::vector<std::vector<float>> inputs(plan.kernels.size());
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      const PlanBuffer &in = plan.buffers[plan.kernels[k].inputs[0]];
      std::string bytes;
      for (int64_t e = 0; e < in.numElements(); ++e) {
        size_t c = (k * 7 + size_t(e)) % (std::size(kRoundingCases) + 3);
        uint32_t bits = c < std::size(kRoundingCases) ? kRoundingCases[c] : uint32_t(rng());
        float f = bitsToFloat(bits);
        // A half-precision input holds the half value nearest the case.
        uint16_t half = in.dtype == DType::kF16 ? floatToHalf(f) : floatToBfloat16(f);
        if (in.dtype != DType::kF32)
          f = in.dtype == DType::kF16 ? halfToFloat(half) : bfloat16ToFloat(half);
        inputs[k].push_back(f);
        bytes.append(reinterpret_cast<const char *>(in.dtype == DType::kF32 ? (void *)&f : &half),
                     dtypeBytes(in.dtype));
      }
      ASSERT_TRUE(exec->write(in.name, bytes.data(), bytes.size()).isOk());
    }
    ASSERT_TRUE(exec->step().isOk());
    ASSERT_NO_FATAL_FAILURE(expectAllGenerated(*exec));
    std::string all;
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      int32_t out = plan.kernels[k].outputs[0];
      const PlanBuffer &b = plan.buffers[out];
      std::string have = exec->bytesOf(out);
      all += have;
      for (size_t e = 0; e < inputs[k].size(); ++e) {
        float f = inputs[k][e];
        uint32_t want = b.dtype == DType::kF32   ? floatToBits(f)
                        : b.dtype == DType::kF16 ? floatToHalf(f)
                                                 : floatToBfloat16(f);
        uint32_t got = 0;
        std::memcpy(&got, have.data() + e * dtypeBytes(b.dtype), dtypeBytes(b.dtype));
        ASSERT_EQ(got, want) << b.name << "[" << e << "] from 0x" << std::hex << floatToBits(f);
      }
    }
    runs.push_back(all);
  }
  EXPECT_EQ(runs[1], runs[0]);
  EXPECT_EQ(runs[2], runs[0]);
  // Half.h itself, on the cases a vector rounding gets wrong first.
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x3f808000u)), 0x3f80);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x3f818000u)), 0x3f82);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x7f7fffffu)), 0x7f80);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(bitsToFloat(0x7f800001u)))));
  EXPECT_EQ(floatToHalf(bitsToFloat(0x477ff000u)), 0x7c00);
  EXPECT_EQ(floatToHalf(bitsToFloat(0x477fefffu)), 0x7bff);
}

TEST(HostKernels, EveryFormMatchesTheReferenceMode) {
  TempCache cache;
  for (const Plan &plan : {dlc_test::formsPlan(), dlc_test::rowPlan(),
                           dlc_test::normBackwardPlan(), dlc_test::transposePlan(),
                           dlc_test::castsPlan(), optimizerPlan()}) {
    SCOPED_TRACE(plan.model);
    ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
    auto fast = expectSameAsReference(plan, cache, 3);
    ASSERT_NE(fast, nullptr);
    if (plan.model != "codegen_casts") { // the reading scales are generated alone
      ASSERT_NO_FATAL_FAILURE(expectAllGenerated(*fast));
    }
  }
}

TEST(HostKernels, EachRanksDropoutMasksAreTheReferenceRanks) {
  TempCache cache;
  ASSERT_NE(expectSameAsReference(dlc_test::rowPlan(), cache, 2, /*rank=*/3), nullptr);
}

TEST(HostKernels, GroupsTheGeneratorRefusesAreSplit) {
  Plan plan = splitGroupsPlan();
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  std::vector<cpu::HostLaunch> launches = cpu::planHostLaunches(plan);
  ASSERT_EQ(launches.size(), 4u);
  EXPECT_FALSE(launches[0].kernel) << "the matmul";
  // Each group is one call (the matmul, the batch norm) and one generated
  // kernel: a call + kernel pair, not a split.
  EXPECT_NE(launches[0].reason.find("call + kernel ("), std::string::npos)
      << launches[0].reason;
  for (const cpu::HostLaunch &h : launches) {
    EXPECT_TRUE(h.splitFromGroup);
    EXPECT_TRUE(h.callPlusKernel) << h.reason;
  }
  ASSERT_TRUE(launches[1].kernel) << launches[1].reason;
  EXPECT_EQ(launches[1].launch.kernels, (std::vector<size_t>{1, 2})) << "bias and gelu at once";
  EXPECT_FALSE(launches[2].kernel) << "the batch norm";
  EXPECT_TRUE(launches[3].kernel) << launches[3].reason;
  TempCache cache;
  auto fast = expectSameAsReference(plan, cache);
  ASSERT_NE(fast, nullptr);
  EXPECT_EQ(fast->hostKernelStats()->generated, 2u);
  EXPECT_EQ(fast->hostKernelStats()->kernels, 3u);
}

TEST(HostKernels, ResultsAreTheSameForEveryThreadCount) {
  // Each output element is one part's, computed in the source's order, so
  // the bytes do not depend on how many threads share a launch, and two
  // runs with the same count agree.
  TempCache cache;
  for (const Plan &plan : {dlc_test::formsPlan(), dlc_test::rowPlan(), optimizerPlan(),
                           dlc_test::castsPlan(), bf16ColumnPlan(),
                           dlc_test::normBackwardPlan()}) {
    SCOPED_TRACE(plan.model);
    std::vector<std::string> runs;
    for (int threads : {1, 2, 2, 5}) {
      auto exec = makeExecutor(plan, fastOptions(cache, threads));
      ASSERT_NE(exec, nullptr);
      ASSERT_NO_FATAL_FAILURE(fillAll(plan, *exec, 3));
      for (int s = 0; s < 2; ++s)
        ASSERT_TRUE(exec->step().isOk());
      std::string bytes;
      for (size_t i = 0; i < plan.buffers.size(); ++i)
        if (compared(plan.buffers[i]))
          bytes += exec->bytesOf(int32_t(i));
      runs.push_back(bytes);
    }
    for (size_t r = 1; r < runs.size(); ++r)
      EXPECT_EQ(runs[r], runs[0]) << "run " << r;
  }
}

TEST(HostKernels, OneLibraryPerPlanIsCompiledOnceAndThenFoundInTheCache) {
  TempCache cache;
  Plan plan = dlc_test::formsPlan();
  auto first = cpu::HostKernels::create(plan, cache.dir);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  const cpu::HostKernelStats &cold = (*first)->stats();
  EXPECT_FALSE(cold.cacheHit);
  EXPECT_GT(cold.compileSeconds, 0.0);
  EXPECT_GT(cold.distinct, 1u);
  EXPECT_EQ(cold.library.rfind(cache.dir + "/", 0), 0u) << cold.library;
  auto second = cpu::HostKernels::create(plan, cache.dir);
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_TRUE((*second)->stats().cacheHit);
  EXPECT_EQ((*second)->stats().compileSeconds, 0.0);
  EXPECT_EQ((*second)->stats().library, cold.library);
  // A damaged library is a miss, compiled again (unloaded first: the
  // loaded pages are the file's).
  std::string library = cold.library;
  first->reset();
  second->reset();
  ASSERT_EQ(std::system(("echo damaged > " + library).c_str()), 0);
  auto third = cpu::HostKernels::create(plan, cache.dir);
  ASSERT_TRUE(third.isOk()) << third.status().toString();
  EXPECT_FALSE((*third)->stats().cacheHit);
}

TEST(HostKernels, ACompilerFailureNamesTheSourceAndTheLog) {
  TempCache cache;
  codegen::GeneratedKernel broken;
  broken.name = "dlc_loop_broken_00000000";
  broken.target = codegen::KernelTarget::kHost;
  broken.source = "extern \"C\" void dlc_loop_broken_00000000(float *out0, int, int) {\n"
                  "  out0[0] = undeclared_value;\n}\n";
  auto library = cpu::HostKernelLibrary::build({&broken}, cache.dir);
  ASSERT_FALSE(library.isOk());
  const std::string &message = library.status().message();
  EXPECT_NE(message.find(cache.dir + "/build-"), std::string::npos) << message;
  EXPECT_NE(message.find("kernels.cpp"), std::string::npos) << message;
  EXPECT_NE(message.find("undeclared_value"), std::string::npos) << message;
  // Kernels written for CUDA are refused before the compiler runs.
  broken.target = codegen::KernelTarget::kCuda;
  auto cudaKernel = cpu::HostKernelLibrary::build({&broken}, cache.dir);
  ASSERT_FALSE(cudaKernel.isOk());
  EXPECT_NE(cudaKernel.status().message().find("generated for CUDA"), std::string::npos);
}

TEST(HostKernels, TheReferenceModeIsTheDefault) {
  auto exec = cpu::CpuExecutor::create(dlc_test::formsPlan());
  ASSERT_TRUE(exec.isOk());
  EXPECT_EQ((*exec)->hostKernelStats(), nullptr);
}

TEST(HostKernels, EachLaunchAloneMatchesItsReferenceKernels) {
  // dlc-kernels --check-host's measure, on every form: each launch on random
  // operands, alone.
  TempCache cache;
  for (const Plan &plan : {dlc_test::formsPlan(), dlc_test::rowPlan(),
                           dlc_test::normBackwardPlan(), dlc_test::transposePlan(),
                           optimizerPlan(), splitGroupsPlan(),
                           dlc_test::castsPlan(), bf16ColumnPlan()}) {
    SCOPED_TRACE(plan.model);
    auto checks = cpu::checkHostLaunches(plan, 7, cache.dir);
    ASSERT_TRUE(checks.isOk()) << checks.status().toString();
    size_t generated = 0;
    for (const cpu::HostLaunch &h : cpu::planHostLaunches(plan))
      generated += h.kernel.has_value();
    EXPECT_EQ(checks->size(), generated);
    // A half-precision result may round the other way by one unit: the
    // host's softmax takes its exponentials in float, the reference's in
    // double (dlc-kernels --check-host's rule).
    for (const cpu::HostLaunchCheck &c : *checks)
      EXPECT_TRUE(c.within(1e-5)) << "launch #" << c.launch << ", buffer " << c.buffer
                                  << ": error " << c.error;
  }
}

// A host part's reduction adds a whole row on one thread, so its sum is in
// double (TargetWriter::sumType): 2^24, 4096 ones and -2^24 sum to 4096,
// where float added in order keeps 2^24 through every one and gives 0. The
// same along a column (a bias gradient's tile of accumulators).
TEST(HostKernels, ARowsSumDoesNotLoseSmallTermsBehindALargeOne) {
  constexpr int64_t kOnes = 4096, kLen = kOnes + 2;
  PlanBuilder p;
  p.plan.model = "host_long_sums";
  int32_t x = p.buffer("x", {2, kLen}, kIn), s = p.buffer("s", {2}, kOut);
  p.kernel("reduce_sum", {x}, {s}, -1, {{"axes", std::vector<int64_t>{1}}});
  int32_t y = p.buffer("y", {kLen, 3}, kIn), c = p.buffer("c", {1, 3}, kOut);
  p.kernel("sum_to_shape", {y}, {c}, -1, {{"shape", std::vector<int64_t>{1, 3}}});
  auto terms = [&](int64_t i) {
    return i == 0 ? 16777216.f : i == kLen - 1 ? -16777216.f : 1.f;
  };
  std::vector<float> xs(2 * kLen), ys(kLen * 3);
  for (int64_t i = 0; i < kLen; ++i) {
    xs[i] = xs[kLen + i] = terms(i);
    ys[3 * i] = ys[3 * i + 1] = ys[3 * i + 2] = terms(i);
  }
  TempCache cache;
  for (int threads : {1, 2}) {
    auto fast = makeExecutor(p.plan, fastOptions(cache, threads));
    ASSERT_TRUE(fast);
    ASSERT_TRUE(fast->write("x", xs.data(), xs.size() * 4).isOk());
    ASSERT_TRUE(fast->write("y", ys.data(), ys.size() * 4).isOk());
    ASSERT_TRUE(fast->step().isOk());
    expectAllGenerated(*fast);
    for (int32_t id : {s, c}) {
      std::string bytes = fast->bytesOf(id);
      std::vector<float> got(bytes.size() / 4);
      std::memcpy(got.data(), bytes.data(), bytes.size());
      for (float v : got)
        EXPECT_EQ(v, float(kOnes)) << p.plan.buffers[id].name << ", " << threads << " threads";
    }
  }
}
