"""Checks the loss of a model's first training step at initialization.

  check_init_loss.py REPORT.json --classes C [--classes C2 ...] --tolerance T

REPORT.json is a dlc-bench --format json report. Fails unless the loss of the
first step is finite and within T of the sum of ln(C) over the given class
counts: the cross-entropy of a classifier whose logits are near-uniform at
initialization (one term per softmax_cross_entropy the model adds up).
Prints the figures.
"""

import argparse
import json
import math
import sys

parser = argparse.ArgumentParser()
parser.add_argument("report")
parser.add_argument("--classes", type=int, action="append", required=True)
parser.add_argument("--tolerance", type=float, required=True)
args = parser.parse_args()

with open(args.report) as f:
    report = json.load(f)
loss = report["repeat_results"][0]["loss_first"]
expected = sum(math.log(c) for c in args.classes)
terms = " + ".join("ln(%d)" % c for c in args.classes)
print("%s: batch %d, %d step(s) on %s: loss %.6g, %s = %.6g"
      % (report["model"], report["batch"], report["timed_steps"], report["backend"], loss, terms, expected))
if not isinstance(loss, (int, float)) or not math.isfinite(loss):
    print("FAIL: the loss is not finite: %r" % (loss,))
    sys.exit(1)
if abs(loss - expected) > args.tolerance:
    print("FAIL: |loss - (%s)| = %.4g, more than %g" % (terms, abs(loss - expected), args.tolerance))
    sys.exit(1)
print("OK: finite, within %g of %s" % (args.tolerance, terms))
