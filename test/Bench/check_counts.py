"""Checks that a fusion strategy lowers kernels and bytes per step.

  check_counts.py [--kernels-only] BASELINE.json FUSED.json

Both are dlc-bench --compile-only --format json reports of one model; the
fused one must launch fewer kernels and move fewer bytes (or, with
--kernels-only, launch fewer kernels and move no more bytes). Prints both.
"""

import json
import sys

kernels_only = "--kernels-only" in sys.argv
paths = [a for a in sys.argv[1:] if a != "--kernels-only"]
base, fused = (json.load(open(p)) for p in paths)
print("%s: kernels %d -> %d, bytes %d -> %d, groups %s"
      % (base["model"], base["kernels_per_step"], fused["kernels_per_step"],
         base["memory_bytes_per_step"], fused["memory_bytes_per_step"], fused["fused_groups"]))
fewer_kernels = fused["kernels_per_step"] < base["kernels_per_step"]
if kernels_only:
    ok = fewer_kernels and fused["memory_bytes_per_step"] <= base["memory_bytes_per_step"]
    print("OK: fewer kernels" if ok else "FAIL: not fewer kernels, or more bytes")
else:
    ok = fewer_kernels and fused["memory_bytes_per_step"] < base["memory_bytes_per_step"]
    print("OK: fewer kernels and bytes" if ok else "FAIL: not fewer")
sys.exit(0 if ok else 1)
