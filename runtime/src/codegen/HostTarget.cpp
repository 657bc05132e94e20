//===- HostTarget.cpp - generated kernels as C++ for the CPU's threads ----===//
//
// A kernel runs as `dlc_parts` calls at once, one per thread of the CPU
// backend's pool; call `dlc_part` computes a contiguous share of the
// launch's items (dlc_part_begin, kernels/HostParts.h), where a GPU's
// grid-stride loops would interleave them and threads would share cache
// lines. Loops over a block's threads stay, with one thread per block
// (KernelPrelude.h), so reductions and row passes run in order.
//
//===----------------------------------------------------------------------===//

#include "KernelTargets.h"

#include "dlc/runtime/codegen/KernelPrelude.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace dlc::rt::codegen {

namespace {

std::string partLoop(const std::string &var, const std::string &count) {
  return "for (long long " + var + " = dlc_part_begin(" + count + ", dlc_part, dlc_parts), " +
         var + "_end = dlc_part_begin(" + count + ", dlc_part + 1, dlc_parts); " + var + " < " +
         var + "_end; ++" + var + ")";
}

/// The bounds and step of this part's share of `count` items, as the
/// arguments (begin, end, inc) of a table kernel's per-segment update.
std::string partRange(const std::string &count) {
  return "dlc_part_begin(" + count + ", dlc_part, dlc_parts), dlc_part_begin(" + count +
         ", dlc_part + 1, dlc_parts), 1LL";
}

class HostWriter final : public TargetWriter {
public:
  std::string extraParams() const override { return ", int dlc_part, int dlc_parts"; }
  std::string itemLoop(const std::string &, const std::string &var,
                       const std::string &count) const override {
    return partLoop(var, count);
  }
  std::string vectorLoop(const std::string &v) const override {
    return "  // " + v + " elements per access, 16-byte loads and stores, over this part's "
           "vectors.\n  " + partLoop("q", "n / " + v) + " {\n";
  }
  std::string tailLoop(const std::string &v) const override {
    return "  // The tail that does not fill a vector: the last part's.\n"
           "  for (long long i = dlc_part + 1 == dlc_parts ? n / " + v + " * " + v +
           " : n; i < n; ++i) {\n";
  }
  bool packsVectors() const override { return false; }
  std::string elementLoop() const override {
    return "  // This part's elements; the compiler vectorizes the loop at this CPU's width.\n  " +
           partLoop("i", "n") + " {\n";
  }
  std::string rowLoops(const std::string &inner) const override {
    return "  // This part's rows; the compiler vectorizes the loop along each row.\n  " +
           partLoop("o", "n / " + inner) + " {\n    for (long long ic = 0; ic < " + inner +
           "LL; ++ic) {\n      const long long i = o * " + inner + "LL + ic;\n";
  }
  std::string afterPrelude() const override { return hostPartsText() + std::string("\n"); }
  /// The signature takes the parts, and each segment loop (the optimizer's)
  /// or the loop over all segments' vectors (the casts') covers the part's
  /// share. The CUDA body must still hold every rewritten line: a body
  /// that still reads the grid after the rewrites is a generator bug.
  std::string tableBody(const char *cudaBody) const override {
    static const std::pair<const char *, const char *> kRewrites[] = {
        {"const long long *__restrict__ step_counter) {",
         "const long long *__restrict__ step_counter, int dlc_part, int dlc_parts) {"},
        {"const long long *__restrict__ step) {",
         "const long long *__restrict__ step, int dlc_part, int dlc_parts) {"},
        {"  const long long stride = (long long)gridDim.x * blockDim.x;\n", ""},
        {"  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n", ""},
        {"first, seg.n, stride", nullptr},
        {"for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < total; "
         "q += stride)",
         nullptr}};
    std::string body = cudaBody;
    for (const auto &[from, to] : kRewrites) {
      std::string replacement = to ? to
                                : std::strstr(from, "seg.n") ? partRange("seg.n")
                                                             : partLoop("q", "total");
      for (size_t at; (at = body.find(from)) != std::string::npos;)
        body.replace(at, std::strlen(from), replacement);
    }
    for (const char *device : {"gridDim", "blockIdx", "+= stride", "= first"})
      if (body.find(device) != std::string::npos) {
        std::fprintf(stderr, "dlc: a table kernel's host body still reads %s\n", device);
        std::abort();
      }
    return body;
  }
  bool keepsRowValues() const override { return true; }
  bool sumsColumnsByRows() const override { return true; }
};
} // namespace

const TargetWriter &hostTarget() {
  static const HostWriter writer;
  return writer;
}

} // namespace dlc::rt::codegen
