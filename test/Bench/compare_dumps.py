"""Compares two dlc-bench --dump-out folders tensor by tensor.

  compare_dumps.py A B --tolerance T [--param-tolerance P] [--zero-gradient RE]
                  [--zero-bound Z]

Every .npy in A must exist in B with the same shape and a relative error
max |a - b| / max |b| within T (within P for a parameter updated by the
step, where A holds its gradient too). Prints the worst error.

--zero-gradient RE names parameters whose gradient is mathematically zero
(an attention key's bias: softmax ignores the q.b_k it adds to every score
of a query). Each side computes rounding noise there, so the relative error
means nothing: their gradients must instead stay under 1e-6 of the dump's
largest gradient (--zero-bound, default 1e-6; bf16 noise is larger), and
their updated values are left out (Adam normalizes a noise gradient into a
full-size step).
--param-tolerance: an Adam step is lr g / (sqrt(v) + eps) per element, about
lr sign(g) at the first step, so every element moves by about lr however
small its gradient. A gradient compared by max |a - b| / max |b| hides the
relative error of its small elements; the update exposes it.
"""

import argparse
import os
import re
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("a")
parser.add_argument("b")
parser.add_argument("--tolerance", type=float, required=True)
parser.add_argument("--param-tolerance", type=float)
parser.add_argument("--zero-gradient", metavar="RE")
parser.add_argument("--zero-bound", type=float, default=1e-6)
args = parser.parse_args()
zero = re.compile(args.zero_gradient) if args.zero_gradient else None

worst, failures, names = 0.0, [], sorted(f for f in os.listdir(args.a) if f.endswith(".npy"))
load = lambda d, n: np.load(os.path.join(d, n)).astype(np.float64)
grads = [n for n in names if n.endswith(".grad.npy")]
largest = max([np.abs(load(args.b, n)).max() for n in grads] or [0.0])
skipped = 0
for name in names:
    a, b = load(args.a, name), load(args.b, name)
    if a.shape != b.shape:
        failures.append("%s: shapes %s and %s" % (name, a.shape, b.shape))
        continue
    param = name[:-len(".grad.npy")] if name.endswith(".grad.npy") else name[:-len(".npy")]
    if zero and zero.search(param):
        if name.endswith(".grad.npy"):
            noise = max(np.abs(a).max(), np.abs(b).max())
            if not noise <= args.zero_bound * largest:
                failures.append("%s: a zero gradient of %.3g (largest gradient %.3g)" % (name, noise, largest))
        else:
            skipped += 1
        continue
    updated = param + ".grad.npy" in grads and not name.endswith(".grad.npy")
    tolerance = args.param_tolerance if updated and args.param_tolerance else args.tolerance
    # Equal elements (an overflowed fp16 gradient is inf on both sides when
    # loss scaling skips the step) count as no error; a non-finite element
    # that differs is an infinite one.
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore"):
        diff = np.where(same, 0.0, np.abs(a - b))
    finite = np.abs(b[np.isfinite(b)])
    err = np.nan_to_num(diff, nan=np.inf).max(initial=0.0) / max(finite.max(initial=0.0), 1e-12)
    worst = max(worst, err)
    if not err <= tolerance:
        failures.append("%s: relative error %.3g" % (name, err))
print("%d tensors, worst relative error %.3g (tolerance %g%s)%s" % (
    len(names), worst, args.tolerance,
    ", updated parameters %g" % args.param_tolerance if args.param_tolerance else "",
    ", %d updated zero-gradient parameters left out" % skipped if skipped else ""))
for f in failures:
    print("MISMATCH " + f)
sys.exit(1 if failures or not names else 0)
