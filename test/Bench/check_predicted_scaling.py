"""Checks a dlc-bench --predict JSON report's scaling efficiencies against a
published table's, within a tolerance, and prints each side by side.

  check_predicted_scaling.py REPORT.json TOLERANCE GPUS=EFFICIENCY...
"""

import json
import sys

report = json.load(open(sys.argv[1]))
tolerance = float(sys.argv[2])
want = {int(k): float(v) for k, v in (a.split("=") for a in sys.argv[3:])}
got = {r["gpus"]: r["efficiency"] for r in report["results"]}
failed = False
for gpus, efficiency in sorted(want.items()):
    diff = got[gpus] - efficiency
    ok = abs(diff) <= tolerance
    failed |= not ok
    print(f"{report['gpu']} {report['results'][0]['precision']} {gpus} GPUs: "
          f"predicted {got[gpus]:.3f} published {efficiency:.3f} "
          f"({diff:+.3f}) {'ok' if ok else 'OFF'}")
sys.exit(1 if failed else 0)
