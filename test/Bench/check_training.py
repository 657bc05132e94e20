"""Checks a dlc-bench JSON report of a training run.

  check_training.py REPORT.json --min-ratio R

Fails unless the loss after the last timed step is at least R times lower
than after the first step, and every repeat (each starts from the same seed)
produced bit-identical first and last losses. Prints the figures.
"""

import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("report")
parser.add_argument("--min-ratio", type=float, required=True)
args = parser.parse_args()

with open(args.report) as f:
    report = json.load(f)
repeats = report["repeat_results"]
first, last = repeats[0]["loss_first"], repeats[0]["loss_last"]
ratio = first / last if last else float("inf")
print("%s: loss %.6g -> %.6g after %d steps (%.1fx lower), %d repeats"
      % (report["model"], first, last, report["timed_steps"], ratio, len(repeats)))
status = 0
if not ratio >= args.min_ratio:
    print("FAIL: the loss fell %.2fx, less than %gx" % (ratio, args.min_ratio))
    status = 1
# JSON carries 9 significant digits, enough to round-trip a float32 exactly.
for i, r in enumerate(repeats[1:], start=2):
    if (r["loss_first"], r["loss_last"]) != (first, last):
        print("FAIL: repeat %d gave losses %r, %r; repeat 1 gave %r, %r"
              % (i, r["loss_first"], r["loss_last"], first, last))
        status = 1
if status == 0:
    print("OK: reproducible")
sys.exit(status)
