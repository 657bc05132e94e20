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

/// The optimizer's kernel: each thread takes the elements of every segment
/// at its place in a grid-stride loop.
const char *const kOptimizerKernel = R"cuda(// torch.optim's SGD (momentum buffer starts as the gradient) and AdamW,
// as the CPU reference computes them.
extern "C" __global__ void __launch_bounds__(256)
DLC_KERNEL_NAME(const DlcSegment *__restrict__ table, int segments,
                const long long *__restrict__ step_counter) {
  const long long step = *step_counter; // on the device: a graph replays it
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  // AdamW's bias corrections, for the betas of the last segment that needed
  // them: every segment of a model shares its betas, so each thread takes
  // the two double pow()s once, not once per segment. Per segment, the
  // million threads of an H100's grid spent about 3 ms of BERT-base's
  // 4.3 ms update in them (2026-11-26).
  float beta1 = -1.f, beta2 = -1.f, c1 = 0.f, rc2 = 0.f;
  for (int s = 0; s < segments; ++s) {
    const DlcSegment seg = table[s];
    const float factor = seg.status ? seg.status[0] : 1.f;
    if (seg.status && seg.status[1] != 0.f) {
      // A gradient overflowed: the step is skipped, the values kept.
      dlc_keep_range(seg, first, seg.n, stride);
    } else if (seg.adamw) {
      if (seg.beta1 != beta1 || seg.beta2 != beta2) {
        const double t = (double)(step + 1);
        beta1 = seg.beta1;
        beta2 = seg.beta2;
        c1 = (float)(1.0 - pow((double)beta1, t));
        rc2 = (float)(1.0 / sqrt(1.0 - pow((double)beta2, t)));
      }
      if (seg.grad_dtype == 1) dlc_adamw_range<1>(seg, first, seg.n, stride, factor, c1, rc2);
      else if (seg.grad_dtype == 2) dlc_adamw_range<2>(seg, first, seg.n, stride, factor, c1, rc2);
      else dlc_adamw_range<0>(seg, first, seg.n, stride, factor, c1, rc2);
    } else {
      if (seg.grad_dtype == 1) dlc_sgd_range<1>(seg, first, seg.n, stride, factor, step);
      else if (seg.grad_dtype == 2) dlc_sgd_range<2>(seg, first, seg.n, stride, factor, step);
      else dlc_sgd_range<0>(seg, first, seg.n, stride, factor, step);
    }
  }
}
)cuda";

class CudaWriter final : public TargetWriter {
public:
  std::string extraParams() const override { return ""; }
  std::string itemLoop(const std::string &var, const std::string &count) const override {
    return "for (long long " + var + " = blockIdx.x; " + var + " < " + count + "; " + var +
           " += gridDim.x)";
  }
  std::string tileLoop(const std::string &var, const std::string &count) const override {
    return "for (long long " + var + " = (long long)blockIdx.x * blockDim.x; " + var + " < " +
           count + "; " + var + " += (long long)gridDim.x * blockDim.x)";
  }
  std::string threadLoop(const std::string &type, const std::string &var, char axis,
                         const std::string &bound) const override {
    return "for (" + type + " " + var + " = " + threadIndex(axis) + "; " + var + " < " + bound +
           "; " + var + " += " + blockThreads(axis) + ")";
  }
  std::string arrivals() const override { return "gridDim.x"; }
  std::string threadIndex(char axis) const override { return std::string("threadIdx.") + axis; }
  std::string blockThreads(char axis) const override { return std::string("blockDim.") + axis; }
  std::string sharedArray(const std::string &type, const std::string &name,
                          const std::string &dims) const override {
    return "__shared__ " + type + " " + name + dims + ";";
  }
  std::string barrier() const override { return "__syncthreads();"; }
  std::string blockReduce(const std::string &acc, int threads, bool max,
                          const std::string &scratch, bool everyThread) const override {
    return acc + " = " + (everyThread ? "dlc_block_allreduce<" : "dlc_block_reduce<") +
           std::to_string(threads) + ", " + (max ? "true" : "false") + ">(" + acc + ", " +
           scratch + ");";
  }
  std::string kernelHead(int threadsBound) const override {
    return threadsBound > 0 ? "extern \"C\" __global__ void __launch_bounds__(" +
                                  std::to_string(threadsBound) + ") "
                            : "extern \"C\" __global__ void ";
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
  std::string castTableIncludes() const override {
    return "#if defined(__CUDACC__)\n#include <cuda_fp16.h>\n#endif\n";
  }
  std::string halfIncludes(bool f16, bool bf16) const override {
    return std::string(f16 ? "#include <cuda_fp16.h>\n#define DLC_F16 1\n" : "") +
           (bf16 ? "#include <cuda_bf16.h>\n#define DLC_BF16 1\n" : "");
  }
  std::string afterPrelude() const override { return ""; }
  std::string optimizerKernel() const override { return kOptimizerKernel; }
  std::string castTableKernel() const override { return kCastTableKernel; }
  bool keepsRowValues() const override { return false; }
  bool sumsColumnsByRows() const override { return false; }
  const char *sumType() const override { return "float"; }
};
} // namespace

const TargetWriter &cudaTarget() {
  static const CudaWriter writer;
  return writer;
}

} // namespace dlc::rt::codegen
