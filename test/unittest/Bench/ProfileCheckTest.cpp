//===- ProfileCheckTest.cpp - the cost model beside a GPU --profile -------===//

#include "ProfileCheck.h"

#include "GpuPeaks.h"
#include "Predict.h"

#include "../Runtime/TestPlan.h"

#include "dlc/runtime/perf/CostModel.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace dlc::bench;
using dlc::rt::BufferRole;
using dlc::rt::DType;

namespace {

std::string lineWith(const std::string &text, const std::string &start) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(start, 0) == 0)
      return line;
  return "";
}

const std::vector<std::string> kLabels = {"launch #0 (matmul, kernel #0: op matmul)",
                                          "launch #1 (relu, kernel #1: op relu)",
                                          "launch #2 (matmul, kernel #2: op matmul)"};
const std::vector<std::string> kPaths = {"cublaslt", "generated", "cublaslt"};
const std::vector<double> kMs = {2, 1, 4};

} // namespace

TEST(ProfileCheck, EachKindShowsThePredictionBesideTheMeasurement) {
  ModelFigures model{"h100.json, H100-SXM", {2.5, 2, 4.5}};
  std::ostringstream os;
  writeLaunchProfile(os, kLabels, kPaths, kMs, 2, model);
  std::string text = os.str();
  // The measured part keeps the format profile_to_json.py reads; the
  // prediction and its error follow.
  EXPECT_EQ(lineWith(text, "  matmul [cublaslt]"),
            "  matmul [cublaslt]                                6.000 ms/step   85.7%  (2 "
            "launches)  predicted 7.000 ms  +16.7%");
  EXPECT_EQ(lineWith(text, "  relu [generated]"),
            "  relu [generated]                                 1.000 ms/step   14.3%  (1 "
            "launches)  predicted 2.000 ms  +100.0%");
  EXPECT_NE(lineWith(text, "cost model (h100.json, H100-SXM): 9.000 ms/step predicted against "
                           "7.000 measured, +28.6%"),
            "");
  EXPECT_EQ(lineWith(text, "      4.000 ms  cublaslt  launch #2"),
            "      4.000 ms  cublaslt  launch #2 (matmul, kernel #2: op matmul)");
}

TEST(ProfileCheck, WithoutAGpuNameTheTableSaysHowToCompare) {
  std::ostringstream os;
  writeLaunchProfile(os, kLabels, kPaths, kMs, 2, ModelFigures{});
  std::string text = os.str();
  EXPECT_EQ(lineWith(text, "  matmul [cublaslt]"),
            "  matmul [cublaslt]                                6.000 ms/step   85.7%  (2 "
            "launches)");
  EXPECT_NE(lineWith(text, "cost model: not compared (--gpu NAME"), "");
}

TEST(ProfileCheck, PredictsEveryLaunchFromTheGpusCalibration) {
  dlc_test::PlanBuilder b;
  const BufferRole in = BufferRole::kInput, tmp = BufferRole::kTemporary;
  int32_t x = b.add("x", DType::kF32, {64, 128}, in), w = b.add("w", DType::kF32, {128, 256}, in);
  int32_t y = b.add("y", DType::kF32, {64, 256}, tmp), z = b.add("z", DType::kF32, {64, 256}, tmp);
  b.kernel("matmul", {x, w}, {y});
  b.kernel("relu", {y}, {z});

  ModelFigures none;
  ASSERT_TRUE(predictLaunches(b.plan, "", false, none).isOk());
  EXPECT_TRUE(none.msPerLaunch.empty());
  EXPECT_EQ(none.source, "");

  ModelFigures figures;
  ASSERT_TRUE(predictLaunches(b.plan, "h100 sxm", false, figures).isOk());
  std::vector<dlc::rt::perf::LaunchCost> launches = dlc::rt::perf::planLaunchCosts(b.plan);
  ASSERT_EQ(figures.msPerLaunch.size(), launches.size());
  // The checked-in H100 calibration, as --profile times launches (CUDA
  // events: the fitted per-launch event overhead added).
  std::string file = calibrationFileFor("H100-SXM");
  ASSERT_NE(file, "");
  EXPECT_EQ(figures.source, "h100.json, H100-SXM");
  dlc::rt::perf::CostParams params;
  ASSERT_TRUE(dlc::rt::perf::readCostParams(file, params).isOk());
  dlc::rt::perf::DeviceSpec device = deviceSpecOf(*findGpu("H100-SXM"));
  for (size_t i = 0; i < launches.size(); ++i)
    EXPECT_DOUBLE_EQ(figures.msPerLaunch[i],
                     (dlc::rt::perf::predictSeconds(launches[i], device, params, false) +
                      params.profileEventOverhead) * 1e3);

  ModelFigures unknown;
  dlc::rt::Status s = predictLaunches(b.plan, "H900", false, unknown);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("unknown GPU 'H900'"), std::string::npos) << s.message();
}
