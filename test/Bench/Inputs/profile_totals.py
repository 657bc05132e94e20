"""Checks a --profile run's JSON profile array against the table --profile
printed on stderr: the same milliseconds per step in total and, where each
launch is one kernel (--fusion none), op by op; one entry per launch.

  profile_totals.py REPORT.json STDERR.txt
"""
import json
import re
import sys

report = json.load(open(sys.argv[1]))
printed = {}
row = re.compile(r"^  (\S+)\s+([0-9.]+) ms/step\s+[0-9.]+%\s+\((\d+) per step\)$")
for line in open(sys.argv[2]):
    m = row.match(line.rstrip("\n"))
    if m:
        printed[m.group(1)] = float(m.group(2))
profile = report["profile"]
by_kind = {}
for p in profile:
    by_kind[p["kind"]] = by_kind.get(p["kind"], 0) + p["ms_per_step"]
total_json, total_printed = sum(by_kind.values()), sum(printed.values())
# The table rounds each row to 0.001 ms.
slack = 0.0005 * len(printed) + 1e-9
problems = []
if abs(total_json - total_printed) > slack:
    problems.append("total: JSON %.4f ms/step, printed %.4f" % (total_json, total_printed))
if len(profile) != report["kernels_per_step"]:
    problems.append("%d profile entries for %d launches" % (len(profile),
                                                             report["kernels_per_step"]))
if report["fusion"] == "none":
    for op, ms in printed.items():
        if abs(by_kind.get(op, 0) - ms) > 0.0005 + 1e-9:
            problems.append("%s: JSON %.4f, printed %.4f" % (op, by_kind.get(op, 0), ms))
if any(p["bytes"] <= 0 for p in profile):
    problems.append("a launch moves no bytes")
# Every launch's floor is its bytes at the roof's bandwidth or its FLOPs at
# the roof's peak, whichever is longer (bench/run/Roofline.h).
roof = report.get("profile_roof")
if not roof or roof["bytes_per_second"] <= 0:
    problems.append("no roof for the floors")
else:
    for p in profile:
        want = p["bytes"] / roof["bytes_per_second"]
        if roof["flops_per_second"] > 0:
            want = max(want, p["flops"] / roof["flops_per_second"])
        if abs(p.get("floor_ms", -1) - 1e3 * want) > 1e-6 * max(1.0, 1e3 * want):
            problems.append("launch %d: floor %s ms, expected %.6g" % (
                p["launch"], p.get("floor_ms"), 1e3 * want))
flops = sum(p["flops"] for p in profile)
if flops != report["train_flops_per_step"]:
    problems.append("FLOPs: profile %d, report %d" % (flops, report["train_flops_per_step"]))
print("%s %s: %d launches, %d printed ops, totals %s" % (
    report["model"], report["fusion"], len(profile), len(printed),
    "agree" if not problems else "DIFFER"))
for p in problems:
    print("MISMATCH " + p)
sys.exit(1 if problems else 0)
