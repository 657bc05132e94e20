"""Compares two dlc-bench --dump-out folders tensor by tensor.

  compare_dumps.py A B --tolerance T

Every .npy in A must exist in B with the same shape and a relative error
max |a - b| / max |b| within T. Prints the worst error.
"""

import argparse
import os
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("a")
parser.add_argument("b")
parser.add_argument("--tolerance", type=float, required=True)
args = parser.parse_args()

worst, failures, names = 0.0, [], sorted(f for f in os.listdir(args.a) if f.endswith(".npy"))
for name in names:
    a = np.load(os.path.join(args.a, name)).astype(np.float64)
    b = np.load(os.path.join(args.b, name)).astype(np.float64)
    if a.shape != b.shape:
        failures.append("%s: shapes %s and %s" % (name, a.shape, b.shape))
        continue
    err = np.abs(a - b).max() / max(np.abs(b).max(), 1e-12)
    worst = max(worst, err)
    if not err <= args.tolerance:
        failures.append("%s: relative error %.3g" % (name, err))
print("%d tensors, worst relative error %.3g (tolerance %g)" % (len(names), worst, args.tolerance))
for f in failures:
    print("MISMATCH " + f)
sys.exit(1 if failures or not names else 0)
