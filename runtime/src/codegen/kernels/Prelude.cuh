#ifndef DLC_KERNEL_PRELUDE
#define DLC_KERNEL_PRELUDE
#if defined(__CUDACC__)
#define DLC_DEVICE __device__ __forceinline__
#define DLC_IVDEP
#define dlc_expf expf
#define dlc_erff erff
#define dlc_tanhf tanhf
#define DLC_NEG_INF (-__int_as_float(0x7f800000))
#else
// Host layers: plain C++.
#include <math.h>
#include <limits>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
#define DLC_DEVICE inline
// A loop whose iterations touch disjoint elements, even where an output is
// its input: vectorize it without the alias checks that rule it out.
#if defined(__clang__)
#define DLC_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define DLC_IVDEP _Pragma("GCC ivdep")
#endif
#define DLC_NEG_INF (-std::numeric_limits<float>::infinity())
#if !defined(DLC_HOST_THREADS)
// One block of one thread runs the whole grid-stride loop. (With
// DLC_HOST_THREADS the includer, a unit test's simulator, runs each
// block's threads at once and defines threadIdx, blockIdx, blockDim,
// gridDim and __syncthreads(), a barrier.)
#define __syncthreads()
struct dlc_dim3 { unsigned x, y, z; };
static const dlc_dim3 threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0},
                      blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
#endif

// e^x, erf and tanh: kernels/HostMath.h, which kernelPrelude() puts first.
#endif

DLC_DEVICE float dlc_tof(float v) { return v; }
DLC_DEVICE void dlc_from(float &d, float v) { d = v; }
#if defined(DLC_F16)
DLC_DEVICE float dlc_tof(__half v) { return __half2float(v); }
DLC_DEVICE void dlc_from(__half &d, float v) { d = __float2half_rn(v); }
DLC_DEVICE float dlc_round_f16(float v) { return __half2float(__float2half_rn(v)); }
#endif
#if defined(DLC_BF16)
DLC_DEVICE float dlc_tof(__nv_bfloat16 v) { return __bfloat162float(v); }
DLC_DEVICE void dlc_from(__nv_bfloat16 &d, float v) { d = __float2bfloat16_rn(v); }
DLC_DEVICE float dlc_round_bf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
#endif

template <typename T> DLC_DEVICE float dlc_ld(const T *p, long long i) { return dlc_tof(p[i]); }
template <typename T> DLC_DEVICE void dlc_st(T *p, long long i, float v) { dlc_from(p[i], v); }

// V consecutive elements in one access: 16 bytes for 4 floats or 8 halves.
template <typename T, int V> struct alignas(sizeof(T) * V) DlcPack { T v[V]; };
template <int V, typename T>
DLC_DEVICE void dlc_ldv(const T *p, long long i, float (&out)[V]) {
  const DlcPack<T, V> pack = *reinterpret_cast<const DlcPack<T, V> *>(p + i);
#pragma unroll
  for (int l = 0; l < V; ++l) out[l] = dlc_tof(pack.v[l]);
}
template <int V, typename T>
DLC_DEVICE void dlc_stv(T *p, long long i, const float (&in)[V]) {
  DlcPack<T, V> pack;
#pragma unroll
  for (int l = 0; l < V; ++l) dlc_from(pack.v[l], in[l]);
  *reinterpret_cast<DlcPack<T, V> *>(p + i) = pack;
}

// The CPU reference's formulas (runtime/src/cpu/OpsDense.cpp), in float.
// NaN propagates as in PyTorch: relu(nan) and max(nan, y) are nan.
DLC_DEVICE float dlc_relu(float x) { return (x > 0.f || x != x) ? x : 0.f; }
DLC_DEVICE float dlc_max_nan(float acc, float x) { return (x != x || x > acc) ? x : acc; }
DLC_DEVICE float dlc_relu6(float x) { return x != x ? x : (x < 0.f ? 0.f : (x > 6.f ? 6.f : x)); }
DLC_DEVICE float dlc_sigmoid(float x) { return 1.f / (1.f + dlc_expf(-x)); }
DLC_DEVICE float dlc_gelu(float x) { return 0.5f * x * (1.f + dlc_erff(x * 0.70710678118654752f)); }
DLC_DEVICE float dlc_gelu_tanh(float x) {
  float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.f + dlc_tanhf(u));
}
DLC_DEVICE float dlc_gelu_grad(float x) {
  return 0.5f * (1.f + dlc_erff(x * 0.70710678118654752f)) +
         x * dlc_expf(-0.5f * x * x) * 0.39894228040143268f;
}
DLC_DEVICE float dlc_gelu_tanh_grad(float x) {
  float u = 0.79788456080286536f * (x + 0.044715f * x * x * x), t = dlc_tanhf(u);
  return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * 0.79788456080286536f *
                                (1.f + 3.f * 0.044715f * x * x);
}

// Dropout's keep decision, the CPU's keepElement (cpu/OpsDense.cpp):
// splitmix64 finalizers over (seed, step, element index), the top 53 bits
// against the rate scaled by 2^53 (dropoutThreshold in
// dlc/runtime/Dropout.h); integers only, so the mask is the CPU's bit
// for bit.
DLC_DEVICE unsigned long long dlc_mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
DLC_DEVICE unsigned long long dlc_keep_threshold(double rate) {
  // (h >> 11) * 2^-53 >= rate, exactly, as an integer test: rate * 2^53
  // rounded up (0 keeps all; 2^53, for rate >= 1 or NaN, keeps none).
  if (!(rate > 0.0)) return rate <= 0.0 ? 0ull : 1ull << 53;
  if (!(rate < 1.0)) return 1ull << 53;
  const double scaled = rate * 9007199254740992.0;
  const unsigned long long t = (unsigned long long)scaled;
  return (double)t < scaled ? t + 1 : t;
}
DLC_DEVICE bool dlc_keep(unsigned long long seed, long long step, long long i, double rate) {
  const unsigned long long h =
      dlc_mix64(dlc_mix64(seed * 0x9e3779b97f4a7c15ull + (unsigned long long)step) +
                (unsigned long long)i);
  return (h >> 11) >= dlc_keep_threshold(rate);
}

#if defined(__CUDACC__)
// The row form's statistics: a block's reduction whose result every thread
// gets. Butterfly shuffles leave the same value in every lane (a + b is
// b + a), then every warp reduces the warps' partials from shared memory
// (at least 32 slots). float or double.
template <bool kMax, typename T> DLC_DEVICE T dlc_warp_allreduce(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    T w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? ((w != w || v < w) ? w : v) : v + w;
  }
  return v;
}
template <int kThreads, bool kMax, typename T>
DLC_DEVICE T dlc_block_allreduce(T v, T *smem) {
  v = dlc_warp_allreduce<kMax>(v);
  if (kThreads > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < kThreads / 32 ? smem[lane] : (kMax ? (T)DLC_NEG_INF : (T)0);
    v = dlc_warp_allreduce<kMax>(v);
    __syncthreads(); // smem is reused by the next reduction
  }
  return v;
}
// The reduction form's block reduction (every thread gets the result; the
// form reads thread 0's). kThreads is the launch's block size, a multiple
// of 32; smem holds at least 32 floats.
template <int kThreads, bool kMax> DLC_DEVICE float dlc_block_reduce(float v, float *smem) {
  return dlc_block_allreduce<kThreads, kMax>(v, smem);
}
#elif defined(DLC_HOST_THREADS)
// Every thread combines the block's values in thread order, so all get one
// result; smem needs blockDim.x slots (the simulator runs <= 32 threads).
template <int kThreads, bool kMax, typename T>
inline T dlc_block_allreduce(T v, T *smem) {
  smem[threadIdx.x] = v;
  __syncthreads();
  T r = smem[0];
  for (unsigned t = 1; t < blockDim.x; ++t) r = kMax ? ((smem[t] != smem[t] || r < smem[t]) ? smem[t] : r) : r + smem[t];
  __syncthreads();
  return r;
}
template <int kThreads, bool kMax> inline float dlc_block_reduce(float v, float *smem) {
  return dlc_block_allreduce<kThreads, kMax>(v, smem);
}
#else
template <int kThreads, bool kMax, typename T> inline T dlc_block_reduce(T v, T *) { return v; }
template <int kThreads, bool kMax, typename T> inline T dlc_block_allreduce(T v, T *) { return v; }
#endif
// The row form's column sums (layer_norm_backward's gamma and beta
// gradients): every block (host part) writes its items' partials to the
// launch's scratch, then arrives at the counter in the scratch's first
// word; dlc_last_arrival is true in exactly the one that arrives last, which
// then reads every partial (dlc_ld_partial: past the incoherent L1) in a
// fixed order, and leaves the counter at zero for the next launch.
#if defined(__CUDACC__)
DLC_DEVICE bool dlc_last_arrival(unsigned *counter, unsigned expected) {
  __shared__ bool last;
  __threadfence(); // this block's partials are visible before it arrives
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(counter, 1u) == expected - 1;
    if (last) *counter = 0;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}
DLC_DEVICE double dlc_ld_partial(const double *p) { return *(const volatile double *)p; }
#elif defined(DLC_HOST_THREADS)
// The simulator runs blocks one after another.
inline bool dlc_last_arrival(unsigned *counter, unsigned expected) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    last = (*counter)++ == expected - 1;
    if (last) *counter = 0;
  }
  __syncthreads();
  return last;
}
inline double dlc_ld_partial(const double *p) { return *p; }
#else
// The host's parts run at once, one per pool thread.
inline bool dlc_last_arrival(unsigned *counter, unsigned expected) {
  if (__atomic_add_fetch(counter, 1u, __ATOMIC_ACQ_REL) != expected) return false;
  __atomic_store_n(counter, 0u, __ATOMIC_RELAXED);
  return true;
}
inline double dlc_ld_partial(const double *p) { return *p; }
#endif
#endif // DLC_KERNEL_PRELUDE
