//===- Optimizer.cpp - one parameter's SGD or AdamW update ----------------===//
//
// The CPU's formulas (torch.optim semantics) element by element in double,
// for the single updates the generator's grouped optimizer kernel does not
// take. The loss-scale status operand ({gradient multiplier, skip flag})
// is optional; a skipped step copies parameter and state through. The
// dynamic loss scale is here too: its status (one block reading every
// gradient) and its update (one thread, three scalars).
//
// loss_scale_status reads every parameter gradient of the model, usually
// far more than DlcHandArgs' eight pointers, so its gradients come in an
// operand table (DlcHandOperand entries: pointer, elements, type) which
// the launcher fills and places in device memory, its address in p[2]
// (HandKernel::table). Its flag is an OR: the blocks split every gradient
// and the last to finish ORs their flags (HandKernel::scratch). One block
// alone streamed BERT-base's 110M gradients in 164 ms on an H100.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

const char *optimizerBody() {
  return R"src(
// p: param, grad, momentum, status (or null), new param, new momentum.
// i: n, has_status, nesterov. f: lr, momentum, weight_decay.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_sgd_update(const DlcHandArgs a, const long long *step) {
  const long long n = a.i[0];
  const bool hasStatus = a.i[1] != 0, nesterov = a.i[2] != 0, first = *step == 0;
  const double lr = a.f[0], momentum = a.f[1], decay = a.f[2];
  const double factor = hasStatus ? (double)dlc_hw_ld(a, 3, 0) : 1.0;
  const bool skip = hasStatus && dlc_hw_ld(a, 3, 1) != 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float P = dlc_hw_ld(a, 0, i), M = dlc_hw_ld(a, 2, i);
    if (skip) {
      dlc_hw_st(a, 4, i, P);
      dlc_hw_st(a, 5, i, M);
      continue;
    }
    double p = P, g = dlc_hw_ld(a, 1, i) * factor + decay * p, m = M, d = g;
    if (momentum != 0) {
      m = first ? g : momentum * m + g;
      d = nesterov ? g + momentum * m : m;
    }
    dlc_hw_st(a, 5, i, (float)m);
    dlc_hw_st(a, 4, i, (float)(p - lr * d));
  }
}

// p: param, grad, m, v, status (or null), new param, new m, new v.
// i: n, has_status. f: lr, beta1, beta2, epsilon, weight_decay.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_adamw_update(const DlcHandArgs a, const long long *step) {
  const long long n = a.i[0];
  const bool hasStatus = a.i[1] != 0;
  const double lr = a.f[0], b1 = a.f[1], b2 = a.f[2], eps = a.f[3], decay = a.f[4];
  const double t = (double)(*step + 1);
  const double correction1 = 1 - pow(b1, t), correction2 = 1 - pow(b2, t);
  const double factor = hasStatus ? (double)dlc_hw_ld(a, 4, 0) : 1.0;
  const bool skip = hasStatus && dlc_hw_ld(a, 4, 1) != 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float P = dlc_hw_ld(a, 0, i), M = dlc_hw_ld(a, 2, i), V = dlc_hw_ld(a, 3, i);
    if (skip) {
      dlc_hw_st(a, 5, i, P);
      dlc_hw_st(a, 6, i, M);
      dlc_hw_st(a, 7, i, V);
      continue;
    }
    double p = P * (1 - lr * decay), g = dlc_hw_ld(a, 1, i) * factor;
    double m = b1 * M + (1 - b1) * g, v = b2 * V + (1 - b2) * g * g;
    double denom = sqrt(v) / sqrt(correction2) + eps;
    dlc_hw_st(a, 6, i, (float)m);
    dlc_hw_st(a, 7, i, (float)v);
    dlc_hw_st(a, 5, i, (float)(p - lr / correction1 * m / denom));
  }
}

// [1 / scale, 1 if any gradient element is inf or NaN], in float as the
// CPU computes it. p: scale, status (2 elements), the gradients' operand
// table, scratch. i: the table's entries.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_loss_scale_status(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const DlcHandOperand *grads = static_cast<const DlcHandOperand *>(a.p[2]);
  double overflow = 0;
  for (long long g = 0; g < a.i[0]; ++g) {
    const DlcHandOperand grad = grads[g];
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < grad.n;
         e += (long long)gridDim.x * blockDim.x) {
      const float v = dlc_hw_load(grad.p, grad.t, e);
      if (!(v - v == 0.0f)) overflow = 1; // inf - inf and NaN - NaN are NaN
    }
  }
  overflow = dlc_hw_block_max(overflow, smem);
  double *part = dlc_hw_partials(a, 3);
  if (threadIdx.x == 0) part[blockIdx.x] = overflow;
  if (!dlc_hw_last_block(static_cast<unsigned *>(a.p[3])) || threadIdx.x != 0) return;
  overflow = 0;
  for (unsigned b = 0; b < gridDim.x; ++b)
    overflow = dlc_hw_partial(part, b) != 0 ? 1 : overflow;
  dlc_hw_st(a, 1, 0, 1.0f / dlc_hw_ld(a, 0, 0));
  dlc_hw_st(a, 1, 1, overflow != 0 ? 1.0f : 0.0f);
}

// torch's _amp_update_scale_, in float as the CPU computes it.
// p: scale, good steps, status, new scale, new good steps.
// i: growth_interval. f: backoff_factor, growth_factor.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_update_loss_scale(const DlcHandArgs a, const long long *step) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  float scale = dlc_hw_ld(a, 0, 0), good = dlc_hw_ld(a, 1, 0);
  if (dlc_hw_ld(a, 2, 1) != 0.0f) {
    scale *= (float)a.f[0];
    good = 0;
  } else if (good + 1 >= (float)a.i[0]) {
    scale *= (float)a.f[1];
    good = 0;
  } else {
    good += 1;
  }
  dlc_hw_st(a, 3, 0, scale);
  dlc_hw_st(a, 4, 0, good);
}
)src";
}

} // namespace dlc::rt::cuda::handwritten
