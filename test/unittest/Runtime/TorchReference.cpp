//===- TorchReference.cpp - PyTorch reference arrays for tests ------------===//

#include "TorchReference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace dlc_test {

int64_t RefArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<float> RefArray::asFloat() const {
  return std::vector<float>(data.begin(), data.end());
}

const RefArray &TorchReference::at(const std::string &name) const {
  static const RefArray empty;
  auto it = arrays.find(name);
  if (it == arrays.end()) {
    ADD_FAILURE() << "the PyTorch reference has no array '" << name << "'";
    return empty;
  }
  return it->second;
}

TorchReference runTorchReference(const std::string &script,
                                 const std::string &op,
                                 const std::string &args) {
  TorchReference ref;
  char path[] = "/tmp/dlc-torchref-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    ref.error = "cannot create a temporary file";
    return ref;
  }
  close(fd);
  std::string command = "/usr/bin/python3 " + std::string(DLC_SOURCE_DIR) +
                        "/test/unittest/Runtime/" + script + " " + op + " " +
                        path + " " + args + " 2>&1";
  std::string output;
  if (FILE *pipe = popen(command.c_str(), "r")) {
    char buffer[512];
    while (fgets(buffer, sizeof(buffer), pipe))
      output += buffer;
    int status = pclose(pipe);
    if (status != 0)
      ref.error = "`" + command + "` failed:\n" + output;
  } else {
    ref.error = "cannot run " + command;
  }
  if (ref.ok()) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    while (std::getline(in, line) && line != "end") {
      std::istringstream header(line);
      std::string name;
      int64_t rank = 0;
      header >> name >> rank;
      RefArray array;
      array.shape.resize(rank);
      for (int64_t &d : array.shape)
        header >> d;
      array.data.resize(array.numElements());
      in.read(reinterpret_cast<char *>(array.data.data()),
              static_cast<std::streamsize>(array.data.size() * sizeof(double)));
      if (!header || !in) {
        ref.error = "malformed reference file for '" + name + "'";
        break;
      }
      ref.arrays[name] = std::move(array);
    }
    if (ref.ok() && line != "end")
      ref.error = "truncated reference file from " + script;
  }
  std::remove(path);
  return ref;
}

double maxRelativeError(const std::vector<double> &actual,
                        const std::vector<double> &expected, double floor) {
  EXPECT_EQ(actual.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i) {
    double err = std::fabs(actual[i] - expected[i]) /
                 std::max(std::fabs(expected[i]), floor);
    if (!(err <= worst)) // NaN counts as the worst
      worst = std::isnan(err) ? INFINITY : err;
  }
  return worst;
}

} // namespace dlc_test
