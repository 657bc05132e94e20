
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_sgd_update(const DlcHandArgs a, const long long *step) {
  const long long n = a.sgd.n;
  const bool hasStatus = a.sgd.hasStatus != 0, nesterov = a.sgd.nesterov != 0;
  const bool first = *step == 0;
  const double lr = a.sgd.lr, momentum = a.sgd.momentum, decay = a.sgd.weightDecay;
  const double factor = hasStatus ? (double)dlc_hw_ld(a, DLC_SGD_STATUS, 0) : 1.0;
  const bool skip = hasStatus && dlc_hw_ld(a, DLC_SGD_STATUS, 1) != 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float P = dlc_hw_ld(a, DLC_SGD_PARAM, i), M = dlc_hw_ld(a, DLC_SGD_MOMENTUM, i);
    if (skip) {
      dlc_hw_st(a, DLC_SGD_NEW_PARAM, i, P);
      dlc_hw_st(a, DLC_SGD_NEW_MOMENTUM, i, M);
      continue;
    }
    double p = P, g = dlc_hw_ld(a, DLC_SGD_GRAD, i) * factor + decay * p, m = M, d = g;
    if (momentum != 0) {
      m = first ? g : momentum * m + g;
      d = nesterov ? g + momentum * m : m;
    }
    dlc_hw_st(a, DLC_SGD_NEW_MOMENTUM, i, (float)m);
    dlc_hw_st(a, DLC_SGD_NEW_PARAM, i, (float)(p - lr * d));
  }
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_adamw_update(const DlcHandArgs a, const long long *step) {
  const long long n = a.adamw.n;
  const bool hasStatus = a.adamw.hasStatus != 0;
  const double lr = a.adamw.lr, b1 = a.adamw.beta1, b2 = a.adamw.beta2,
               eps = a.adamw.epsilon, decay = a.adamw.weightDecay;
  const double t = (double)(*step + 1);
  const double correction1 = 1 - pow(b1, t), correction2 = 1 - pow(b2, t);
  const double factor = hasStatus ? (double)dlc_hw_ld(a, DLC_ADAMW_STATUS, 0) : 1.0;
  const bool skip = hasStatus && dlc_hw_ld(a, DLC_ADAMW_STATUS, 1) != 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float P = dlc_hw_ld(a, DLC_ADAMW_PARAM, i), M = dlc_hw_ld(a, DLC_ADAMW_M, i),
                V = dlc_hw_ld(a, DLC_ADAMW_V, i);
    if (skip) {
      dlc_hw_st(a, DLC_ADAMW_NEW_PARAM, i, P);
      dlc_hw_st(a, DLC_ADAMW_NEW_M, i, M);
      dlc_hw_st(a, DLC_ADAMW_NEW_V, i, V);
      continue;
    }
    double p = P * (1 - lr * decay), g = dlc_hw_ld(a, DLC_ADAMW_GRAD, i) * factor;
    double m = b1 * M + (1 - b1) * g, v = b2 * V + (1 - b2) * g * g;
    double denom = sqrt(v) / sqrt(correction2) + eps;
    dlc_hw_st(a, DLC_ADAMW_NEW_M, i, (float)m);
    dlc_hw_st(a, DLC_ADAMW_NEW_V, i, (float)v);
    dlc_hw_st(a, DLC_ADAMW_NEW_PARAM, i, (float)(p - lr / correction1 * m / denom));
  }
}

// [1 / scale, 1 if any gradient element is inf or NaN], in float as the
// CPU computes it.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_loss_scale_status(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const DlcHandOperand *grads =
      static_cast<const DlcHandOperand *>(a.p[DLC_LOSS_SCALE_STATUS_GRADS]);
  double overflow = 0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long g = 0; g < a.lossScaleStatus.grads; ++g) {
    const DlcHandOperand grad = grads[g];
    // Four loads in flight a thread: a lone 2-byte load a step kept BERT's
    // 220 MB of half gradients at 0.79 ms (2026-11-26).
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; e + 3 * stride < grad.n; e += 4 * stride) {
      const float v0 = dlc_hw_load(grad.p, grad.t, e);
      const float v1 = dlc_hw_load(grad.p, grad.t, e + stride);
      const float v2 = dlc_hw_load(grad.p, grad.t, e + 2 * stride);
      const float v3 = dlc_hw_load(grad.p, grad.t, e + 3 * stride);
      // inf - inf and NaN - NaN are NaN, and a NaN makes the sum NaN
      if (!((v0 - v0) + (v1 - v1) + (v2 - v2) + (v3 - v3) == 0.0f)) overflow = 1;
    }
    for (; e < grad.n; e += stride) {
      const float v = dlc_hw_load(grad.p, grad.t, e);
      if (!(v - v == 0.0f)) overflow = 1;
    }
  }
  overflow = dlc_hw_block_max(overflow, smem);
  double *part = dlc_hw_partials(a, DLC_LOSS_SCALE_STATUS_SCRATCH);
  if (threadIdx.x == 0) part[blockIdx.x] = overflow;
  if (!dlc_hw_last_block(static_cast<unsigned *>(a.p[DLC_LOSS_SCALE_STATUS_SCRATCH])))
    return;
  overflow = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
    overflow = dlc_hw_partial(part, b) != 0 ? 1 : overflow;
  overflow = dlc_hw_block_max(overflow, smem);
  if (threadIdx.x != 0)
    return;
  dlc_hw_st(a, DLC_LOSS_SCALE_STATUS_STATUS, 0,
            1.0f / dlc_hw_ld(a, DLC_LOSS_SCALE_STATUS_SCALE, 0));
  dlc_hw_st(a, DLC_LOSS_SCALE_STATUS_STATUS, 1, overflow != 0 ? 1.0f : 0.0f);
}

// torch's _amp_update_scale_, in float as the CPU computes it.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_update_loss_scale(const DlcHandArgs a, const long long *step) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const DlcUpdateLossScaleArgs &u = a.updateLossScale;
  float scale = dlc_hw_ld(a, DLC_UPDATE_LOSS_SCALE_SCALE, 0);
  float good = dlc_hw_ld(a, DLC_UPDATE_LOSS_SCALE_GOOD_STEPS, 0);
  if (dlc_hw_ld(a, DLC_UPDATE_LOSS_SCALE_STATUS, 1) != 0.0f) {
    scale *= (float)u.backoffFactor;
    good = 0;
  } else if (good + 1 >= (float)u.growthInterval) {
    scale *= (float)u.growthFactor;
    good = 0;
  } else {
    good += 1;
  }
  dlc_hw_st(a, DLC_UPDATE_LOSS_SCALE_NEW_SCALE, 0, scale);
  dlc_hw_st(a, DLC_UPDATE_LOSS_SCALE_NEW_GOOD_STEPS, 0, good);
}
