"""Checks a dlc-bench --predict JSON report's scaling efficiencies against a
published table's, within a tolerance, and prints each side by side.

  check_predicted_scaling.py REPORT.json TOLERANCE GPUS=EFFICIENCY...
  check_predicted_scaling.py REPORT.json above TOLERANCE GPUS=EFFICIENCY...

With `above`, a row is ok when the prediction is no more than TOLERANCE
below the published one: for tables where the simulator is known to leave
costs out (it is then an upper bound), the check is that it stays one.
With `exceeds`, ok when the prediction is at least TOLERANCE above the
published one; with `under`, at least TOLERANCE below it (for bounds: a
--no-overlap prediction that a published row falls below, or cannot).

  check_predicted_scaling.py REPORT.json exceeds|under TOLERANCE GPUS=EFFICIENCY...

--bound before REPORT.json reads each result's efficiency_all_exposed (every
all-reduce exposed) instead of its efficiency.
"""

import json
import sys

argv = sys.argv[1:]
key = "efficiency"
if argv[0] == "--bound":
    key, argv = "efficiency_all_exposed", argv[1:]
report = json.load(open(argv[0]))
args = argv[1:]
mode = args[0] if args[0] in ("above", "exceeds", "under") else "within"
if mode != "within":
    args = args[1:]
tolerance = float(args[0])
want = {int(k): float(v) for k, v in (a.split("=") for a in args[1:])}
got = {r["gpus"]: r[key] for r in report["results"]}
failed = False
for gpus, efficiency in sorted(want.items()):
    diff = got[gpus] - efficiency
    ok = {"above": diff >= -tolerance, "exceeds": diff >= tolerance,
          "under": diff <= -tolerance, "within": abs(diff) <= tolerance}[mode]
    failed |= not ok
    print(f"{report['gpu']} {report['results'][0]['precision']} {gpus} GPUs: "
          f"predicted {got[gpus]:.3f} published {efficiency:.3f} "
          f"({diff:+.3f}) {'ok' if ok else 'OFF'}")
sys.exit(1 if failed else 0)
