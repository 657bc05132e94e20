//===- ReportTest.cpp - dlc-bench's report formats, from set figures ------===//
//
// The intervals, verdicts and host-load flags every format shows, from a
// Result whose repeats are chosen, not measured.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace dlc::bench;

namespace {

/// A finished configuration whose repeats ran at `samplesPerSec`, the host
/// loaded by others at `loads` percent.
Result configuration(const std::string &fusion, const std::vector<double> &samplesPerSec,
                     const std::vector<double> &loads) {
  Result r;
  r.model = "mlp";
  r.backend = "cpu";
  r.precision = "fp32";
  r.fusion = fusion;
  r.batch = 4;
  r.repeats = static_cast<int64_t>(samplesPerSec.size());
  for (size_t i = 0; i < samplesPerSec.size(); ++i) {
    RepeatResult repeat;
    repeat.samplesPerSec = samplesPerSec[i];
    repeat.stepMs = 4000 / samplesPerSec[i];
    repeat.hostLoadPercent = loads[i];
    r.repeatResults.push_back(repeat);
  }
  r.timingOrder = "interleaved";
  return r;
}

std::string written(const std::vector<Result> &results, Format format) {
  std::ostringstream os;
  writeReports(os, results, format);
  return os.str();
}

std::vector<Result> sweep() {
  return {configuration("none", {100, 101, 99, 100, 102}, {3, 5, 4, 3, 4}),
          // Faster beyond doubt, and the host's load changed under it.
          configuration("paddle", {150, 151, 149, 150, 152}, {3, 52, 50, 4, 3}),
          // Overlapping repeats: no significant difference.
          configuration("xla", {104, 60, 106, 103, 97}, {4, 4, 5, 3, -1})};
}

TEST(ReportTest, TableMarksVerdictsAndLoad) {
  std::string table = written(sweep(), Format::kTable);
  EXPECT_NE(table.find("95% CI"), std::string::npos) << table;
  EXPECT_NE(table.find("1.50x "), std::string::npos) << table;
  EXPECT_EQ(table.find("1.50x n.s."), std::string::npos) << table;
  EXPECT_NE(table.find("1.03x n.s."), std::string::npos) << table;
  EXPECT_NE(table.find("3-52% VARIED"), std::string::npos) << table;
  EXPECT_NE(table.find("3-5%  "), std::string::npos) << table;
  EXPECT_NE(table.find("95% confidence intervals: percentile bootstrap"), std::string::npos);
  EXPECT_NE(table.find("configurations timed in interleaved rounds"), std::string::npos);
  EXPECT_NE(table.find("VARIED: repeats more than 20 points apart"), std::string::npos);
}

TEST(ReportTest, CsvGivesIntervalsVerdictsAndLoad) {
  std::string csv = written(sweep(), Format::kCsv);
  std::istringstream lines(csv);
  std::string header, none, paddle, xla;
  std::getline(lines, header);
  std::getline(lines, none);
  std::getline(lines, paddle);
  std::getline(lines, xla);
  EXPECT_EQ(header.rfind("model,backend,precision,fusion,gpus,batch,samples/s,min,max,"
                         "speed-up,step ms,kernels",
                         0),
            0u)
      << header;
  EXPECT_NE(header.find(",ci low,ci high,host load min,host load max,host load varied,"
                        "speed-up low,speed-up high,speed-up verdict"),
            std::string::npos)
      << header;
  EXPECT_NE(none.find(",100.0,99.0,102.0,1.00x,"), std::string::npos) << none;
  EXPECT_NE(none.find(",3.0,5.0,no,"), std::string::npos) << none;
  EXPECT_NE(none.find(",base"), std::string::npos) << none;
  EXPECT_NE(paddle.find(",1.50x,"), std::string::npos) << paddle;
  EXPECT_NE(paddle.find(",3.0,52.0,yes,"), std::string::npos) << paddle;
  EXPECT_NE(paddle.find(",faster"), std::string::npos) << paddle;
  EXPECT_NE(xla.find(",no significant difference"), std::string::npos) << xla;
}

TEST(ReportTest, JsonCarriesIntervalsAndLoad) {
  std::string json = written({sweep()[1]}, Format::kJson);
  EXPECT_NE(json.find("\"samples_per_sec_ci\": {\"low\": 149, \"high\": 152, \"level\": 0.95}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"timing_order\": \"interleaved\""), std::string::npos);
  EXPECT_NE(json.find("\"host_load_percent\": {\"min\": 3, \"max\": 52}"), std::string::npos);
  EXPECT_NE(json.find("\"host_load_varied\": true"), std::string::npos);
  EXPECT_NE(json.find("\"loss_last\": 0, \"host_load_percent\": 52}"), std::string::npos);
}

// A repeat without a load sample (-1: too short to tell) neither widens the
// range nor raises the flag.
TEST(ReportTest, UnmeasuredLoadIsLeftOut) {
  Result r = configuration("none", {100, 100}, {-1, 40});
  EXPECT_FALSE(r.hostLoadVaried());
  std::string json = written({r}, Format::kJson);
  EXPECT_NE(json.find("\"host_load_percent\": {\"min\": 40, \"max\": 40}"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"host_load_percent\": null}"), std::string::npos) << json;
}

} // namespace
