"""Checks --loss-every N's trajectory in a dlc-bench JSON report.

  check_loss_every.py REPORT.json N

Asserts, for each configuration, that loss_every is N and loss_trajectory
holds the loss after steps N, 2N, ... up to warm-up + timed steps (counted
from 1 over the warm-up steps, then the timed ones), every one finite; that
the first equals loss.first when step 1 is recorded, and the last equals
loss.last (the report's final loss) when the last step is. Prints what it
checked; exits 1 with the problems otherwise.
"""

import json
import math
import sys


def main():
    path, every = sys.argv[1], int(sys.argv[2])
    top = json.load(open(path))
    problems = []
    for i, r in enumerate(top.get("results", [top])):
        total = r["warmup_steps"] + r["timed_steps"]
        points = r.get("loss_trajectory")
        if r.get("loss_every") != every or points is None:
            problems.append("c%d: loss_every %r, loss_trajectory %r" % (
                i, r.get("loss_every"), points))
            continue
        steps = [p["step"] for p in points]
        want = list(range(every, total + 1, every))
        if steps != want:
            problems.append("c%d: steps %s, expected %s" % (i, steps, want))
        losses = [p["loss"] for p in points]
        if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in losses):
            problems.append("c%d: a loss is not finite: %s" % (i, losses))
        said = []
        if steps and steps[0] == 1:
            if losses[0] != r["loss"]["first"]:
                problems.append("c%d: first loss %s, loss.first %s" % (
                    i, losses[0], r["loss"]["first"]))
            said.append("the first equal to loss.first")
        if steps and steps[-1] == total:
            if losses[-1] != r["loss"]["last"]:
                problems.append("c%d: last loss %s, loss.last %s" % (
                    i, losses[-1], r["loss"]["last"]))
            said.append("the last equal to loss.last")
        print("c%d: %d losses at steps %s, finite%s" % (
            i, len(losses), " ".join(map(str, steps)),
            "".join(", " + s for s in said)))
    for p in problems:
        print("FAIL:", p)
    print("OK" if not problems else "FAIL: %d problems" % len(problems))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
