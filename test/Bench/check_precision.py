"""Compares a mixed-precision step with the float32 step, from --dump-out folders.

  check_precision.py FP32 HALF --loss-tolerance L --tolerance T

Both steps started from the same parameters and batch. The loss must agree
within L (relative) and every gradient and updated parameter within T, as
||half - fp32|| / ||fp32||; and the two must not be identical (a half
precision step that rounds nothing is not running in half precision).
Prints the worst tensors.
"""

import argparse
import os
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("fp32")
parser.add_argument("half")
parser.add_argument("--loss-tolerance", type=float, required=True)
parser.add_argument("--tolerance", type=float, required=True)
parser.add_argument("--skip", action="append", default=[],
                    help="a file to leave out: a gradient that is zero in exact "
                         "arithmetic (the attention key bias: softmax ignores a per-query "
                         "constant) is rounding noise in both runs")
args = parser.parse_args()

names = sorted(f for f in os.listdir(args.fp32) if f.endswith(".npy") and f not in args.skip)
errors = []
for name in names:
    a = np.load(os.path.join(args.fp32, name)).astype(np.float64)
    b = np.load(os.path.join(args.half, name)).astype(np.float64)
    errors.append((np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-30), name))
errors.sort(reverse=True)
loss = dict((n, e) for e, n in errors)["loss.npy"]
print("loss relative error %.2g; worst: %s" % (loss, ", ".join("%s %.2g" % (n, e) for e, n in errors[:3])))
ok = loss <= args.loss_tolerance and errors[0][0] <= args.tolerance and errors[0][0] > 0
print("OK" if ok else "FAIL: tolerance %g (loss %g), or identical to float32" % (args.tolerance, args.loss_tolerance))
sys.exit(0 if ok else 1)
