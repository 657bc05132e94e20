#!/usr/bin/env python3
"""What each fusion strategy forms on the six seed models, compiled, not run.

  bench/fusion/strategies.py [--strategies none,paddle,xla,tvm,inductor]
                             [--precisions fp32,amp] [--batch 32] [--gpu H100-SXM]

For every model, precision and strategy: kernels per step, fused groups,
GB moved per step (each kernel reading its inputs and writing its outputs
once), the cost model's predicted step time on --gpu, and the groups the
CUDA backend splits back into several launches (dlc-kernels --paths), all
from dlc's own tools (DLC_BIN, default build/bin). Prints a Markdown table;
ratios are against the first strategy. Takes about a minute.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

MODELS = ["resnet50", "vgg16", "deeplabv3p", "hrnet_w18", "bert_base", "gpt2"]


def run(cmd):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("strategies.py: %s failed: %s" % (" ".join(cmd), done.stderr.strip()[-400:]))
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strategies", default="none,paddle,xla,tvm,inductor")
    parser.add_argument("--precisions", default="fp32,amp")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--batch", default="32")
    parser.add_argument("--gpu", default="H100-SXM")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bin_dir = os.environ.get("DLC_BIN", os.path.join(root, "build", "bin"))
    bench = os.path.join(bin_dir, "dlc-bench")
    kernels = os.path.join(bin_dir, "dlc-kernels")
    strategies = args.strategies.split(",")
    print("| model | precision | strategy | kernels | kernels vs %s | GB/step | bytes vs %s "
          "| predicted %s ms | time vs %s | split groups | fused groups |"
          % (strategies[0], strategies[0], args.gpu, strategies[0]))
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            path = os.path.join(root, "models", model + ".mlir")
            for precision in args.precisions.split(","):
                base = None
                for strategy in strategies:
                    common = [bench, path, "--batch", args.batch, "--precision", precision,
                              "--fusion", strategy]
                    plan = os.path.join(tmp, "p.plan")
                    out = os.path.join(tmp, "c.json")
                    run(common + ["--backend", "cuda", "--compile-only", "--format", "json",
                                  "-o", out, "--emit-plan", plan])
                    compiled = json.load(open(out))
                    compiled = compiled["results"][0] if "results" in compiled else compiled
                    run(common + ["--predict", "--gpu", args.gpu, "--format", "json", "-o", out])
                    predicted = json.load(open(out))
                    predicted = predicted["results"][0] if "results" in predicted else predicted
                    paths = run([kernels, "--paths", plan])
                    # The CUDA target's split groups (call + kernel pairs
                    # are not splits; the host's line follows).
                    splits = int(re.search(r"^  splits: (\d+),", paths, re.M).group(1))
                    row = (compiled["kernels_per_step"], compiled["memory_bytes_per_step"] / 1e9,
                           predicted["step_ms"])
                    base = base or row
                    groups = " ".join("%s:%d" % kv for kv in sorted(compiled["fused_groups"].items()))
                    print("| %s | %s | %s | %d | %.2fx | %.3f | %.2fx | %.3f | %.2fx | %d | %s |"
                          % (model, precision, strategy, row[0], row[0] / base[0], row[1],
                             row[1] / base[1], row[2], row[2] / base[2], splits, groups or "-"))
                    sys.stdout.flush()


if __name__ == "__main__":
    main()
