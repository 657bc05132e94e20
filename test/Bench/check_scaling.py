"""Checks a dlc-bench --gpus sweep's CSV: each row's 'vs 1 GPU' is its
samples/s over the same configuration's on one GPU, and 'scaling' that
speed-up over its GPU count (the seed reports' scaling efficiency).

  check_scaling.py REPORT.csv
"""

import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
key = lambda r: (r["model"], r["precision"], r["fusion"], r["batch"])
one = {key(r): float(r["samples/s"]) for r in rows if r["gpus"] == "1"}
failures = []
for r in rows:
    gpus, sps = int(r["gpus"]), float(r["samples/s"])
    speedup = sps / one[key(r)]
    got_speedup = float(r["vs 1 GPU"].rstrip("x"))
    got_scaling = float(r["scaling"].rstrip("%"))
    # The CSV rounds samples/s to 0.1, the speed-up to 0.01, the scaling to 0.1%.
    if abs(got_speedup - speedup) > 0.006 or abs(got_scaling - 100 * speedup / gpus) > 0.06:
        failures.append("%s on %d GPUs: vs 1 GPU %s, scaling %s; expected %.3fx and %.2f%%"
                        % (r["fusion"], gpus, r["vs 1 GPU"], r["scaling"], speedup,
                           100 * speedup / gpus))
print("scaling: %d rows, %d GPU counts" % (len(rows), len({r["gpus"] for r in rows})))
for f in failures:
    print("MISMATCH " + f)
sys.exit(1 if failures else 0)
