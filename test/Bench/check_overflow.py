"""Checks what dynamic loss scaling did in one step, from --dump-out folders.

  check_overflow.py INIT STEPPED --scale S --overflow | --no-overflow

INIT holds the parameters the step started from (--params-in), STEPPED the
step's dump. With --overflow, a gradient overflowed: every parameter must be
exactly as it was, the scale halved (S / 2) and the good-step count 0. With
--no-overflow, the parameters moved, the scale is still S and one good step
is counted. Prints the figures.
"""

import argparse
import os
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("init")
parser.add_argument("stepped")
parser.add_argument("--scale", type=float, required=True)
parser.add_argument("--fp16-params", action="store_true",
                    help="the step stored its parameters in fp16 (--precision fp16): "
                         "compare with the initial values rounded by numpy")
mode = parser.add_mutually_exclusive_group(required=True)
mode.add_argument("--overflow", action="store_true")
mode.add_argument("--no-overflow", action="store_true")
args = parser.parse_args()

scale = float(np.load(os.path.join(args.stepped, "loss_scale.npy")))
good = float(np.load(os.path.join(args.stepped, "loss_scale.good_steps.npy")))
params = sorted(f for f in os.listdir(args.init)
                if f.endswith(".npy") and os.path.exists(os.path.join(args.stepped, f))
                and not f.endswith(".grad.npy"))
def initial(f):
    value = np.load(os.path.join(args.init, f))
    return value.astype(np.float16 if args.fp16_params else np.float32).astype(np.float32)
moved = [f for f in params
         if not np.array_equal(initial(f), np.load(os.path.join(args.stepped, f)))]
print("scale %g -> %g, good steps %g, %d of %d parameters moved"
      % (args.scale, scale, good, len(moved), len(params)))
ok = bool(params)
if args.overflow:
    ok &= scale == args.scale / 2 and good == 0 and not moved
else:
    ok &= scale == args.scale and good == 1 and len(moved) == len(params)
print("OK" if ok else "FAIL")
sys.exit(0 if ok else 1)
