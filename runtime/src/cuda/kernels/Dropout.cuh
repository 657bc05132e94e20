
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_dropout(const DlcHandArgs a, const long long *step) {
  const long long n = a.dropout.n;
  const double rate = a.dropout.rate;
  const float scale = (float)(1.0 / (1.0 - rate));
  const unsigned long long base = dlc_hw_keep_base(a.dropout.seed, *step);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    bool keep = dlc_hw_keep(base, i, rate);
    dlc_hw_st(a, DLC_DROPOUT_Y, i, keep ? dlc_hw_ld(a, DLC_DROPOUT_X, i) * scale : 0.0f);
  }
}
