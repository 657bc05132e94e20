#!/usr/bin/env python3
"""Splits per plan on both targets, as one line per plan (splits.test).

usage: splits_table.py BIN_DIR MODELS_DIR OUT_DIR MODEL...

Compiles each model under every fusion strategy in fp32 and amp
(--compile-only, no kernel is compiled), runs `dlc-kernels --paths` on the
plans and prints, per plan,

  MODEL-PRECISION-STRATEGY: cuda splits N, call + kernel M; host splits N, call + kernel M

in a fixed order. A group split on a target runs as more than one library
call or generated kernel there; a call + kernel pair is one call and one
kernel for the rest (codegen::markCallPlusKernel).
"""
import os
import re
import subprocess
import sys

STRATEGIES = ["none", "paddle", "xla", "xla-priority", "tvm", "inductor"]
PRECISIONS = ["fp32", "amp"]


def main():
    bin_dir, models_dir, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    plans = []
    for model in sys.argv[4:]:
        for precision in PRECISIONS:
            for strategy in STRATEGIES:
                name = "%s-%s-%s" % (model, precision, strategy)
                plan = os.path.join(out_dir, name + ".plan")
                subprocess.run([os.path.join(bin_dir, "dlc-bench"),
                                os.path.join(models_dir, model + ".mlir"), "--batch", "2",
                                "--precision", precision, "--fusion", strategy,
                                "--backend", "cuda", "--compile-only", "--emit-plan", plan],
                               check=True, stdout=subprocess.DEVNULL)
                plans.append((name, plan))
    paths = subprocess.run([os.path.join(bin_dir, "dlc-kernels"), "--paths"] +
                           [p for _, p in plans], check=True, capture_output=True,
                           text=True).stdout
    device = re.findall(r"^  splits: (\d+), call \+ kernel: (\d+)$", paths, re.M)
    host = re.findall(r"^host launches: \d+, splits: (\d+), call \+ kernel: (\d+)$", paths, re.M)
    if len(device) != len(plans) or len(host) != len(plans):
        sys.exit("splits_table.py: %d plans, %d device and %d host summaries" %
                 (len(plans), len(device), len(host)))
    for (name, _), (ds, dp), (hs, hp) in zip(plans, device, host):
        print("%s: cuda splits %s, call + kernel %s; host splits %s, call + kernel %s" %
              (name, ds, dp, hs, hp))
    with open(os.path.join(out_dir, "paths.txt"), "w") as f:
        f.write(paths)


if __name__ == "__main__":
    main()
