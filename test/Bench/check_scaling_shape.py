"""The shape of predicted data-parallel scaling (issue #36): for one model
and cluster, efficiency rises with the per-GPU batch, and with fp16
gradients, wherever the all-reduce was exposed. Prints every figure.

  check_scaling_shape.py FULL.json[,FULL.json...] HALF.json[,HALF.json...]

The reports come from the same sweeps (several --batch, --gpus above 1),
the HALF ones with --grad-compression fp16. fp16 gradients add their cast
kernels to the step, so they must raise efficiency where the exposed
all-reduce is more than 2% of the step, and not lower it by more than the
casts elsewhere.
"""

import json
import sys


def rows(paths):
    out = {}
    for path in paths.split(","):
        out.update({(r["batch"], r["gpus"]): r for r in json.load(open(path))["results"]
                    if r["gpus"] > 1})
    return out


full, half = rows(sys.argv[1]), rows(sys.argv[2])
failed = False
for (batch, gpus), r in sorted(full.items()):
    h = half[(batch, gpus)]
    print(f"{r['model']} {r['precision']} batch {batch} {gpus} GPUs: efficiency "
          f"{r['efficiency']:.3f} (exposed {r['exposed_comm_ms']:.1f} of {r['comm_ms']:.1f} ms), "
          f"fp16 gradients {h['efficiency']:.3f} (exposed {h['exposed_comm_ms']:.1f} ms)")
    if r["exposed_comm_ms"] > 0.02 * r["step_ms"] and not h["efficiency"] > r["efficiency"]:
        print("  FAIL: fp16 gradients did not raise an exposed all-reduce's efficiency")
        failed = True
batches = sorted({b for b, _ in full})
for report, name in ((full, "fp32 gradients"), (half, "fp16 gradients")):
    for small, large in zip(batches, batches[1:]):
        gpus = {g for b, g in report if b == small}
        for g in gpus:
            a, b = report[(small, g)], report[(large, g)]
            rises = b["efficiency"] > a["efficiency"] if a["exposed_comm_ms"] > 0.01 \
                else b["efficiency"] >= a["efficiency"]
            print(f"{name} {g} GPUs: batch {small} -> {large}: {a['efficiency']:.3f} -> "
                  f"{b['efficiency']:.3f} {'rises' if rises else 'FAIL'}")
            failed |= not rises
sys.exit(1 if failed else 0)
