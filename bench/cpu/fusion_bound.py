#!/usr/bin/env python3
"""The most any fusion strategy can buy on a step, from its per-launch profile.

  dlc-run PLAN --backend cpu --profile --format json -o P.json
  python3 bench/cpu/fusion_bound.py P.json...

A fusion strategy (paddle, xla, a user's pipeline) merges and removes the
launches around the contractions; it does not change the contractions
themselves (convolutions, matmul, linear: the launches with FLOPs in the
profile), which run on the same library calls under every strategy. So a
step of T ms of which C ms are contractions can run at most T / C times
faster under any fusion, even one that made every other launch free
(Amdahl). Prints, per profile: the step's profiled ms, the contractions'
ms and share, and that bound.
"""
import json
import sys


def bound(path):
    with open(path) as f:
        report = json.load(f)
    report = report[0] if isinstance(report, list) else report
    launches = report.get("profile")
    if not launches:
        sys.exit("fusion_bound: %s: no per-launch profile (run with --profile --format json)"
                 % path)
    total = sum(l["ms_per_step"] for l in launches)
    contraction = sum(l["ms_per_step"] for l in launches if (l.get("flops") or 0) > 0)
    name = "%s %s %s b%s" % (report.get("model"), report.get("precision"),
                             report.get("fusion"), report.get("batch"))
    if contraction <= 0:
        return "| %s | %.3f | 0 | 0%% | unbounded |" % (name, total)
    return "| %s | %.3f | %.3f | %.0f%% | %.3fx |" % (
        name, total, contraction, 100 * contraction / total, total / contraction)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    print("| profile | step ms (profiled) | contractions ms | share | fusion's bound |")
    print("| --- | --- | --- | --- | --- |")
    for path in argv:
        try:
            print(bound(path))
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit("fusion_bound: %s: %s" % (path, e))


if __name__ == "__main__":
    main(sys.argv[1:])
