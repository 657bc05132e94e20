#if defined(__CUDACC__)
DLC_DEVICE bool dlc_hw_isnan(float v) { return isnan(v); }
#define DLC_HW_NAN __int_as_float(0x7fc00000)
#else
inline bool dlc_hw_isnan(float v) { return v != v; }
#define DLC_HW_NAN NAN
#endif

/// Element i of a float buffer of element type t, widened to float.
DLC_DEVICE float dlc_hw_load(const void *p, int t, long long i) {
  switch (t) {
  case DLC_T_F16: return dlc_f16_bits_to_float(static_cast<const unsigned short *>(p)[i]);
  case DLC_T_BF16: return dlc_bf16_bits_to_float(static_cast<const unsigned short *>(p)[i]);
  default: return static_cast<const float *>(p)[i];
  }
}
/// Element i of buffer k, widened to float.
DLC_DEVICE float dlc_hw_ld(const DlcHandArgs &a, int k, long long i) {
  return dlc_hw_load(a.p[k], a.t[k], i);
}
/// Stores v into element i of buffer k, rounded to its type.
DLC_DEVICE void dlc_hw_st(const DlcHandArgs &a, int k, long long i, float v) {
  switch (a.t[k]) {
  case DLC_T_F16: static_cast<unsigned short *>(a.p[k])[i] = dlc_float_to_f16_bits(v); break;
  case DLC_T_BF16: static_cast<unsigned short *>(a.p[k])[i] = dlc_float_to_bf16_bits(v); break;
  default: static_cast<float *>(a.p[k])[i] = v; break;
  }
}
/// Integer element i of buffer k (int32 or int64 indices and labels).
DLC_DEVICE long long dlc_hw_index(const DlcHandArgs &a, int k, long long i) {
  return a.t[k] == DLC_T_I64 ? static_cast<const long long *>(a.p[k])[i]
                             : (long long)static_cast<const int *>(a.p[k])[i];
}

// Dropout's keep decision, the CPU's keepElement (cpu/OpsDense.cpp):
// splitmix64 finalizers over (seed, dropout counter, element index), the
// top 53 bits against the rate scaled by 2^53 (dropoutThreshold in
// dlc/runtime/Dropout.h); integers only, so the mask is the CPU's bit
// for bit. The counter is
// the step plus the rank's offset (HandKernel::readsDropoutCounter).
DLC_DEVICE unsigned long long dlc_hw_mix(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/// What every element's draw starts from, once per launch.
DLC_DEVICE unsigned long long dlc_hw_keep_base(long long seed, long long counter) {
  return dlc_hw_mix((unsigned long long)seed * 0x9e3779b97f4a7c15ull + (unsigned long long)counter);
}
DLC_DEVICE unsigned long long dlc_hw_keep_threshold(double rate) {
  // (h >> 11) * 2^-53 >= rate, exactly, as an integer test: rate * 2^53
  // rounded up (0 keeps all; 2^53, for rate >= 1 or NaN, keeps none).
  if (!(rate > 0.0)) return rate <= 0.0 ? 0ull : 1ull << 53;
  if (!(rate < 1.0)) return 1ull << 53;
  const double scaled = rate * 9007199254740992.0;
  const unsigned long long t = (unsigned long long)scaled;
  return (double)t < scaled ? t + 1 : t;
}
DLC_DEVICE bool dlc_hw_keep(unsigned long long base, long long i, double rate) {
  unsigned long long h = dlc_hw_mix(base + (unsigned long long)i);
  return (h >> 11) >= dlc_hw_keep_threshold(rate);
}

// Block reductions in double, the result in every thread. A tree over
// blockDim.x (a power of two, at most 1024) slots: a fixed order, so a
// launch is deterministic; one thread on the host returns its own value.
DLC_DEVICE double dlc_hw_block_sum(double v, double *smem) {
  const unsigned t = threadIdx.x;
  smem[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) smem[t] += smem[t + s];
    __syncthreads();
  }
  double r = smem[0];
  __syncthreads(); // smem is reused by the next reduction
  return r;
}
/// std::max's rule (a < b ? b : a), as the CPU reference takes maxima.
DLC_DEVICE double dlc_hw_block_max(double v, double *smem) {
  const unsigned t = threadIdx.x;
  smem[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) smem[t] = smem[t] < smem[t + s] ? smem[t + s] : smem[t];
    __syncthreads();
  }
  double r = smem[0];
  __syncthreads();
  return r;
}

// Blocks that combine partial results (HandKernel::scratch): each block
// writes its partial into the scratch, then calls dlc_hw_last_block on the
// scratch's first word, an arrival counter. It returns true in exactly one
// block, the last to arrive, which then reads every partial (through
// dlc_hw_partial, past the incoherent L1) in block order, so the combined
// result is deterministic for a given grid. The counter is back at zero
// when the launch ends, ready for the next step or graph replay.
// dlc_hw_arrive is the same for `expected` arrivals at one counter (work
// items of a grid-stride loop, say), true in the block that brings the last.
#if defined(__CUDACC__)
DLC_DEVICE bool dlc_hw_arrive(unsigned *counter, unsigned expected) {
  __shared__ bool last;
  __threadfence(); // this block's partial is visible before it arrives
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(counter, 1u) == expected - 1;
    if (last) *counter = 0;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}
DLC_DEVICE double dlc_hw_partial(const double *p, long long i) {
  return static_cast<const volatile double *>(p)[i];
}
#else
// The host runs blocks one after another: the counter needs no atomics.
DLC_DEVICE bool dlc_hw_arrive(unsigned *counter, unsigned expected) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    last = (*counter)++ == expected - 1;
    if (last) *counter = 0;
  }
  __syncthreads();
  return last;
}
DLC_DEVICE double dlc_hw_partial(const double *p, long long i) { return p[i]; }
#endif
DLC_DEVICE bool dlc_hw_last_block(unsigned *counter) { return dlc_hw_arrive(counter, gridDim.x); }
/// The partials of a scratch operand k: past its 16-byte header (counter).
DLC_DEVICE double *dlc_hw_partials(const DlcHandArgs &a, int k) {
  return reinterpret_cast<double *>(static_cast<unsigned char *>(a.p[k]) + 16);
}
#endif // DLC_HAND_COMMON
