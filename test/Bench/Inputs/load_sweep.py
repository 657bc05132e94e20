"""Runs a dlc-bench sweep of two identical configurations, timed in rounds,
and keeps one core of the host busy (a busy-looping process) for rounds
FIRST to LAST of it, started and stopped at the sweep's own progress lines
on stderr. Prints what the report says: whether the two medians differ by
less than their confidence intervals' width, and whether each configuration
was flagged for the load that changed.

One busy core changes the host's load by 100/cores points only where the
host had it to spare: on a host that other work kept busy already (a
shared machine, lit's other workers) or one with many cores it cannot
reach the flag's threshold (bench/run/HostLoad.h), and the script says the
flag was not checked, and why.

  load_sweep.py FIRST LAST REPORT.json -- DLC-BENCH-COMMAND...
"""
import json
import os
import re
import subprocess
import sys

first, last, report = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
command = sys.argv[sys.argv.index("--") + 1:]
sweep = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
loader = None
turn = re.compile(r"^dlc: round (\d+)/(\d+), \[(\d+)/(\d+)\]")
for line in sweep.stderr:
    m = turn.match(line)
    if not m:
        sys.stderr.write(line)
        continue
    finished_round = int(m.group(1))
    last_of_round = m.group(3) == m.group(4)
    if not last_of_round:
        continue
    # The round before FIRST ended: load the rounds FIRST to LAST.
    if finished_round == first - 1 and loader is None:
        loader = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    if finished_round == last and loader is not None:
        loader.kill()
        loader.wait()
        loader = None
if loader is not None:
    loader.kill()
if sweep.wait() != 0:
    sys.exit("the sweep failed: exit %d" % sweep.returncode)

THRESHOLD = 20  # kHostLoadChangePoints
results = json.load(open(report))["results"]
a, b = results
for r in results:
    loads = [x["host_load_percent"] for x in r["repeat_results"]]
    print("timing %s; host load per repeat: %s" % (
        r["timing_order"], " ".join("-" if x is None else "%.0f" % x for x in loads)))
    unloaded = sorted(x for i, x in enumerate(loads, 1)
                      if x is not None and not first <= i <= last)
    before = unloaded[len(unloaded) // 2] if unloaded else 100
    one_core = 100.0 / os.cpu_count()
    if r["host_load_varied"]:
        print("flagged: yes")
    elif one_core < 2 * THRESHOLD or before > 100 - 2 * one_core:
        print("flagged: not checked (one core is %.0f points of this host's load, and "
              "others kept %.0f%% busy without the loader)" % (one_core, before))
    else:
        print("flagged: no")
width = lambda r: r["samples_per_sec_ci"]["high"] - r["samples_per_sec_ci"]["low"]
difference = abs(a["samples_per_sec"]["median"] - b["samples_per_sec"]["median"])
print("medians %.1f and %.1f differ by %.1f; interval widths %.1f and %.1f: %s" % (
    a["samples_per_sec"]["median"], b["samples_per_sec"]["median"], difference, width(a),
    width(b), "within" if difference < max(width(a), width(b)) else "APART"))
