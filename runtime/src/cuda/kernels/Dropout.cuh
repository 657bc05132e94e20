
DLC_DEVICE unsigned long long dlc_hw_mix(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_dropout(const DlcHandArgs a, const long long *step) {
  const long long n = a.dropout.n;
  const unsigned long long seed = (unsigned long long)a.dropout.seed;
  const double rate = a.dropout.rate;
  const float scale = (float)(1.0 / (1.0 - rate));
  const unsigned long long base = dlc_hw_mix(seed * 0x9e3779b97f4a7c15ull + (unsigned long long)*step);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = dlc_hw_mix(base + (unsigned long long)i);
    bool keep = (double)(h >> 11) * (1.0 / 9007199254740992.0) >= rate;
    dlc_hw_st(a, DLC_DROPOUT_Y, i, keep ? dlc_hw_ld(a, DLC_DROPOUT_X, i) * scale : 0.0f);
  }
}
