//===- TorchReference.h - PyTorch reference arrays for tests ----*- C++ -*-===//
//
// Runtime kernels are checked against PyTorch, a reference nobody here wrote:
// a Python script (Debian's python3-torch via /usr/bin/python3) generates
// seeded random inputs, runs the op and its gradients in float64, and writes
// everything with torchref.py; the test reads it back, runs the kernel on
// the same inputs and compares.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNITTEST_RUNTIME_TORCHREFERENCE_H
#define DLC_TEST_UNITTEST_RUNTIME_TORCHREFERENCE_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dlc_test {

struct RefArray {
  std::vector<int64_t> shape;
  std::vector<double> data;

  int64_t numElements() const;
  /// The values converted to float, for float32 kernels.
  std::vector<float> asFloat() const;
};

struct TorchReference {
  std::map<std::string, RefArray> arrays;
  /// Empty when the script ran; else why not (python3-torch missing, the
  /// script failed, the file is malformed).
  std::string error;

  bool ok() const { return error.empty(); }
  /// The named array; fails the current test if it is missing.
  const RefArray &at(const std::string &name) const;
};

/// Runs test/unittest/Runtime/<script> <op> <tmpfile> <args> with
/// /usr/bin/python3 and reads the arrays it wrote.
TorchReference runTorchReference(const std::string &script,
                                 const std::string &op,
                                 const std::string &args = "");

/// Largest |a - b| / max(|b|, floor) over two arrays of one size; fails the
/// test on a size mismatch.
double maxRelativeError(const std::vector<double> &actual,
                        const std::vector<double> &expected,
                        double floor = 1e-6);

} // namespace dlc_test

#endif // DLC_TEST_UNITTEST_RUNTIME_TORCHREFERENCE_H
