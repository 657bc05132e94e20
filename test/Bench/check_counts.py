"""Checks that a fusion strategy lowers kernels and bytes per step.

  check_counts.py BASELINE.json FUSED.json

Both are dlc-bench --compile-only --format json reports of one model; the
fused one must launch fewer kernels and move fewer bytes. Prints both.
"""

import json
import sys

base, fused = (json.load(open(p)) for p in sys.argv[1:3])
print("%s: kernels %d -> %d, bytes %d -> %d, groups %s"
      % (base["model"], base["kernels_per_step"], fused["kernels_per_step"],
         base["memory_bytes_per_step"], fused["memory_bytes_per_step"], fused["fused_groups"]))
ok = (fused["kernels_per_step"] < base["kernels_per_step"]
      and fused["memory_bytes_per_step"] < base["memory_bytes_per_step"])
print("OK: fewer kernels and bytes" if ok else "FAIL: not fewer")
sys.exit(0 if ok else 1)
