//===- DnnlMatmul.cpp - matmul and linear through oneDNN's matmul ---------===//
//
// matmul (a, b) -> y with transpose_lhs / transpose_rhs and broadcast batch
// dimensions; linear (x, w[, bias]) -> x w^T + bias over x's last
// dimension. Transposes are strides of the operands' memory descriptors,
// not copies. Under amp-bf16 on a CPU with AVX512-BF16 the operands and
// results are bf16 as the plan holds them (dnnlNativeBf16Ops()). Also
// dnnlSgemm, the single-threaded GEMM the host attention kernel calls.
//
//===----------------------------------------------------------------------===//

#include "dnnl/DnnlCommon.h"

#include <chrono>
#include <vector>

namespace dlc::rt::cpu::onednn {

namespace {

enum OpTag : int64_t { kMatmul = 16, kLinear };

struct MatmulEntry {
  Prim matmul;
  md src, weights, bias, dst;
};

/// A row-major buffer of `shape` ([..., r, c]) as a rank-`rank` matrix
/// batch: leading batch dimensions of 1 added (broadcast), and the last
/// two swapped to [c, r] when `transposed`, by strides. Its rows lie `ld`
/// elements apart (c, or a padded row's stride: RowStride.h).
md matrixDesc(const std::vector<int64_t> &shape, size_t rank, bool transposed,
              dnnl::memory::data_type type, int64_t ld) {
  size_t lead = rank - shape.size();
  dims d(rank, 1), strides(rank, 1);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    d[lead + i] = shape[i];
    strides[lead + i] = stride;
    stride *= i + 1 == shape.size() ? ld : shape[i];
  }
  for (size_t i = 0; i < lead; ++i)
    strides[i] = stride; // any stride: the extent is 1
  if (transposed) {
    std::swap(d[rank - 2], d[rank - 1]);
    std::swap(strides[rank - 2], strides[rank - 1]);
  }
  return md(d, type, strides);
}

int64_t product(std::vector<int64_t>::const_iterator begin,
                std::vector<int64_t>::const_iterator end) {
  int64_t p = 1;
  for (auto it = begin; it != end; ++it)
    p *= *it;
  return p;
}

std::shared_ptr<MatmulEntry> makeEntry(const md &src, const md &weights,
                                       const md &bias, const md &dst) {
  auto d = !bias.is_zero() ? dnnl::matmul::desc(src, weights, bias, dst)
                : dnnl::matmul::desc(src, weights, dst);
  dnnl::matmul::primitive_desc pd(d, userScratchpad(), engine());
  return std::make_shared<MatmulEntry>(
      MatmulEntry{makePrim<dnnl::matmul>(pd), src, weights, bias, dst});
}

void run(const MatmulEntry &e, void *src, void *weights, void *bias, void *dst) {
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, dnnl::memory(e.src, engine(), src)},
      {DNNL_ARG_WEIGHTS, dnnl::memory(e.weights, engine(), weights)},
      {DNNL_ARG_DST, dnnl::memory(e.dst, engine(), dst)}};
  if (bias)
    args.emplace(DNNL_ARG_BIAS, dnnl::memory(e.bias, engine(), bias));
  execute(e.matmul, std::move(args));
}

Status matmul(const KernelContext &c) {
  static Cache<MatmulEntry> cache;
  return guarded(c, [&]() -> Status {
    const TensorRef &a = c.in(0), &b = c.in(1), &y = c.out(0);
    if (a.rank() < 2 || b.rank() < 2 || y.rank() < 2 ||
        y.rank() < std::max(a.rank(), b.rank()))
      return c.error("expects matrices (rank >= 2) and batch dimensions that broadcast");
    bool ta = c.kernel().intAttr("transpose_lhs", 0), tb = c.kernel().intAttr("transpose_rhs", 0);
    Key key = shapeKey(c, kMatmul);
    key.push_back(ta);
    key.push_back(tb);
    for (const TensorRef *t : {&a, &b, &y})
      key.push_back(t->rowStride);
    auto entry = cache.get(key, [&] {
      const std::vector<int64_t> &as = *a.shape, &bs = *b.shape, &ys = *y.shape;
      int64_t aBatch = product(as.begin(), as.end() - 2);
      int64_t yBatch = product(ys.begin(), ys.end() - 2);
      int64_t bBatch = product(bs.begin(), bs.end() - 2);
      int64_t m = y.dim(-2), k = ta ? a.dim(-2) : a.dim(-1), n = y.dim(-1);
      // One shared right-hand matrix under a row-major batch of left ones
      // (x @ W): a single [batch * m, k] x [k, n] product.
      if (!ta && bBatch == 1 && aBatch == yBatch)
        return makeEntry(md({yBatch * m, k}, dataType(a), dims{a.ld(), 1}),
                         matrixDesc(std::vector<int64_t>(bs.end() - 2, bs.end()), 2, tb,
                                    dataType(b), b.ld()),
                         md(), md({yBatch * m, n}, dataType(y), dims{y.ld(), 1}));
      size_t rank = ys.size();
      return makeEntry(matrixDesc(as, rank, ta, dataType(a), a.ld()),
                       matrixDesc(bs, rank, tb, dataType(b), b.ld()), md(),
                       matrixDesc(ys, rank, false, dataType(y), y.ld()));
    });
    if (!entry)
      return runReference(c);
    run(*entry, a.data, b.data, nullptr, y.data);
    return Status::ok();
  }, /*bf16=*/true);
}

Status linear(const KernelContext &c) {
  static Cache<MatmulEntry> cache;
  return guarded(c, [&]() -> Status {
    const TensorRef &x = c.in(0), &w = c.in(1), &y = c.out(0);
    if (w.rank() != 2 || x.rank() < 1)
      return c.error("expects a 2-d weight");
    bool bias = c.numInputs() > 2;
    Key key = shapeKey(c, kLinear);
    key.push_back(x.rowStride);
    key.push_back(y.rowStride);
    auto entry = cache.get(key, [&] {
      int64_t in = x.dim(-1), out = w.dim(0), rows = x.numElements() / in;
      // w is [out, in]: w^T is [in, out] with strides (1, in). The input's
      // and result's rows may be padded (RowStride.h).
      return makeEntry(md({rows, in}, dataType(x), dims{x.ld(), 1}),
                       md({in, out}, dataType(w), tag::ba),
                       bias ? md({1, out}, dataType(c.in(2)), tag::ab) : md(),
                       md({rows, out}, dataType(y), dims{y.ld(), 1}));
    });
    if (!entry)
      return runReference(c);
    run(*entry, x.data, w.data, bias ? c.in(2).data : nullptr, y.data);
    return Status::ok();
  }, /*bf16=*/true);
}

} // namespace

double measureGemmGflops() {
  // A 512^3 product, as the timed steps' threads run it: the best of five
  // calls after one to warm the caches, some tens of milliseconds in all.
  constexpr int64_t n = 512;
  std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), y(n * n);
  auto entry = makeEntry(md({n, n}, kF32, tag::ab), md({n, n}, kF32, tag::ab), md(),
                         md({n, n}, kF32, tag::ab));
  double best = 0;
  for (int i = 0; i < 6; ++i) {
    auto start = std::chrono::steady_clock::now();
    run(*entry, a.data(), b.data(), nullptr, y.data());
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i > 0 && seconds > 0)
      best = std::max(best, 2.0 * n * n * n / seconds / 1e9);
  }
  return best;
}

void registerMatmulKernels(KernelRegistry &r) {
  r[OpId::kMatmul] = matmul;
  r[OpId::kLinear] = linear;
}

} // namespace dlc::rt::cpu::onednn

namespace dlc::rt::cpu {

bool dnnlSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc) {
  onednn::ScopedOneThread one;
  return dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta,
                    c, ldc) == dnnl_success;
}

} // namespace dlc::rt::cpu
