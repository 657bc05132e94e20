//===- CudaTarget.cpp - generated kernels as CUDA for NVRTC ---------------===//
//
// Grid-stride loops: the launcher caps the grid at what fills the GPU and
// each thread strides over the rest (KernelTargets.h).
//
//===----------------------------------------------------------------------===//

#include "KernelTargets.h"

#include <cstdio>
#include <cstdlib>

namespace dlc::rt::codegen {

namespace {

/// Vectors of 16 bytes, one per thread in a grid-stride loop, so that
/// neighbouring threads take neighbouring vectors, small casts included.
const char *const kCastTableKernel = R"cuda(
// Vector q of a segment: one 16-byte access each way where both pointers
// are aligned to it, element by element otherwise and in the last, partial
// vector.
template <typename From, typename To>
DLC_DEVICE void dlc_cast_vector(const DlcCastSegment &seg, long long q) {
  typedef typename From::T A;
  typedef typename To::T B;
  constexpr int V = 16 / (sizeof(A) < sizeof(B) ? sizeof(A) : sizeof(B));
  const long long i = q * V;
  const A *in = (const A *)seg.in + i;
  B *out = (B *)seg.out + i;
  if (i + V <= seg.n && (unsigned long long)in % sizeof(DlcPack<A, V>) == 0 &&
      (unsigned long long)out % sizeof(DlcPack<B, V>) == 0) {
    const DlcPack<A, V> a = *(const DlcPack<A, V> *)in;
    DlcPack<B, V> b;
#pragma unroll
    for (int l = 0; l < V; ++l) b.v[l] = To::narrow(From::widen(a.v[l]));
    *(DlcPack<B, V> *)out = b;
  } else {
    for (int l = 0; l < V && i + l < seg.n; ++l) out[l] = To::narrow(From::widen(in[l]));
  }
}

// One grid-stride loop over the vectors of all segments, in table order:
// neighbouring threads take neighbouring vectors, small casts included.
extern "C" __global__ void __launch_bounds__(256)
DLC_KERNEL_NAME(const DlcCastSegment *__restrict__ table, int segments,
                const long long *__restrict__ step) {
  (void)step;
  if (segments <= 0) return;
  const long long total = table[segments - 1].end;
  const long long stride = (long long)gridDim.x * blockDim.x;
  int s = 0;
  for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < total; q += stride) {
    if (q >= table[s].end) { // a later segment: bisect for it
      int lo = s + 1, hi = segments - 1;
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (q < table[mid].end) hi = mid; else lo = mid + 1;
      }
      s = lo;
    }
    const DlcCastSegment &seg = table[s];
    const long long v = q - seg.begin;
    DLC_CAST_DISPATCH(seg, dlc_cast_vector, seg, v)
  }
}
)cuda";

class CudaWriter final : public TargetWriter {
public:
  std::string extraParams() const override { return ""; }
  std::string itemLoop(const std::string &deviceLoop, const std::string &,
                       const std::string &) const override {
    return deviceLoop;
  }
  std::string vectorLoop(const std::string &v) const override {
    return "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
           "  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  // " + v + " elements per thread and access, 16-byte loads and stores.\n"
           "  for (long long q = first; q < n / " + v + "; q += stride) {\n";
  }
  std::string tailLoop(const std::string &v) const override {
    return "  // The tail that does not fill a vector.\n"
           "  for (long long i = n / " + v + " * " + v + " + first; i < n; i += stride) {\n";
  }
  std::string elementLoop() const override {
    return "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; "
           "i += (long long)gridDim.x * blockDim.x) {\n";
  }
  bool packsVectors() const override { return true; }
  std::string rowLoops(const std::string &) const override {
    std::fprintf(stderr, "dlc: the CUDA target packs vectors and has no row loops\n");
    std::abort();
  }
  std::string afterPrelude() const override { return ""; }
  std::string tableBody(const char *cudaBody) const override { return cudaBody; }
  std::string castTableKernel() const override { return kCastTableKernel; }
  bool keepsRowValues() const override { return false; }
  bool sumsColumnsByRows() const override { return false; }
};
} // namespace

const TargetWriter &cudaTarget() {
  static const CudaWriter writer;
  return writer;
}

} // namespace dlc::rt::codegen
