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

/// The part's share of all segments' vectors, as the table numbers them,
/// so that the launcher cuts the work as for CUDA; within it, a run of
/// elements per segment. The loop holds no search and no switch, so GCC
/// vectorizes the runs whose conversion is straight-line code: widening,
/// and bf16's rounding (integer arithmetic and a select). The f16
/// rounding's branches (subnormals, overflow) keep runs to f16 scalar.
const char *const kCastTableKernel = R"cpp(
// Segment `seg`'s elements in vectors [first, last) of all segments', as
// one loop. The casts' results never alias their operands (the generator
// refuses a launch where they would).
template <typename From, typename To>
DLC_DEVICE void dlc_cast_run(const DlcCastSegment &seg, long long first, long long last) {
  typedef typename From::T A;
  typedef typename To::T B;
  constexpr long long V = 16 / (sizeof(A) < sizeof(B) ? sizeof(A) : sizeof(B));
  const long long begin = ((first > seg.begin ? first : seg.begin) - seg.begin) * V;
  const long long stop = ((last < seg.end ? last : seg.end) - seg.begin) * V;
  const long long end = stop < seg.n ? stop : seg.n;
  const A *in = (const A *)seg.in;
  B *out = (B *)seg.out;
  DLC_IVDEP
  for (long long i = begin; i < end; ++i) out[i] = To::narrow(From::widen(in[i]));
}

extern "C" __global__ void
DLC_KERNEL_NAME(const DlcCastSegment *__restrict__ table, int segments,
                const long long *__restrict__ step, int dlc_part, int dlc_parts) {
  (void)step;
  if (segments <= 0) return;
  const long long total = table[segments - 1].end;
  const long long first = dlc_part_begin(total, dlc_part, dlc_parts);
  const long long last = dlc_part_begin(total, dlc_part + 1, dlc_parts);
  for (int s = 0; s < segments && table[s].begin < last; ++s) {
    const DlcCastSegment &seg = table[s];
    if (seg.end <= first) continue;
    DLC_CAST_DISPATCH(seg, dlc_cast_run, seg, first, last)
  }
}
)cpp";

class HostWriter final : public TargetWriter {
public:
  std::string extraParams() const override { return ", int dlc_part, int dlc_parts"; }
  std::string itemLoop(const std::string &var, const std::string &count) const override {
    return partLoop(var, count);
  }
  std::string tileLoop(const std::string &var, const std::string &count) const override {
    return partLoop(var, count);
  }
  /// A block runs as one thread (KernelPrelude.h: threadIdx 0, blockDim 1,
  /// __shared__ a static array, a block reduction the value itself), so
  /// what a block's threads do together is written as for CUDA: a loop
  /// over the block's threads covers its range in order.
  std::string threadLoop(const std::string &type, const std::string &var, char axis,
                         const std::string &bound) const override {
    return cudaTarget().threadLoop(type, var, axis, bound);
  }
  std::string arrivals() const override { return "(unsigned)dlc_parts"; }
  std::string threadIndex(char axis) const override { return cudaTarget().threadIndex(axis); }
  std::string blockThreads(char axis) const override { return cudaTarget().blockThreads(axis); }
  std::string sharedArray(const std::string &type, const std::string &name,
                          const std::string &dims) const override {
    return cudaTarget().sharedArray(type, name, dims);
  }
  std::string barrier() const override { return cudaTarget().barrier(); }
  std::string blockReduce(const std::string &acc, int threads, bool max,
                          const std::string &scratch, bool everyThread) const override {
    return cudaTarget().blockReduce(acc, threads, max, scratch, everyThread);
  }
  std::string kernelHead(int threadsBound) const override {
    return cudaTarget().kernelHead(threadsBound);
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
  /// CUDA's: the host compiles the generated kernels against headers of
  /// the same names (HostKernels.cpp) that define the types as plain
  /// storage.
  std::string halfIncludes(bool f16, bool bf16) const override {
    return cudaTarget().halfIncludes(f16, bf16);
  }
  std::string castTableIncludes() const override { return cudaTarget().castTableIncludes(); }
  std::string afterPrelude() const override { return hostPartsText() + std::string("\n"); }
  /// CUDA's, with the parts in its signature and each segment loop over
  /// the part's share. The CUDA kernel must still hold every rewritten
  /// line: a kernel that still reads the grid after the rewrites is a
  /// generator bug.
  std::string optimizerKernel() const override {
    static const std::pair<const char *, const char *> kRewrites[] = {
        {"const long long *__restrict__ step_counter) {",
         "const long long *__restrict__ step_counter, int dlc_part, int dlc_parts) {"},
        {"  const long long stride = (long long)gridDim.x * blockDim.x;\n", ""},
        {"  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n", ""},
        {"first, seg.n, stride", nullptr}};
    std::string body = cudaTarget().optimizerKernel();
    for (const auto &[from, to] : kRewrites) {
      std::string replacement = to ? to : partRange("seg.n");
      for (size_t at; (at = body.find(from)) != std::string::npos;)
        body.replace(at, std::strlen(from), replacement);
    }
    for (const char *device : {"gridDim", "blockIdx", "+= stride", "= first"})
      if (body.find(device) != std::string::npos) {
        std::fprintf(stderr, "dlc: the optimizer's host kernel still reads %s\n", device);
        std::abort();
      }
    return body;
  }
  std::string castTableKernel() const override { return kCastTableKernel; }
  bool keepsRowValues() const override { return true; }
  bool sumsColumnsByRows() const override { return true; }
  const char *sumType() const override { return "double"; }
};
} // namespace

const TargetWriter &hostTarget() {
  static const HostWriter writer;
  return writer;
}

} // namespace dlc::rt::codegen
