#!/usr/bin/env python3
"""Writes the profiles the cost model predicts under given parameters, in
the form `dlc-bench calibrate` reads: what a GPU run of each configuration
would record if the model were exact. Fitting them again must give the
parameters back; where it does not, the configurations do not pin those
parameters down, and a GPU run of them would not either. This is how the
device sweep (sweep/) is checked before it costs device time:

  synthesize.py DLC_BENCH PARAMS.json OUT_DIR CONFIG.json...

CONFIG.json: a configuration as profile_to_json.py writes it (model_file,
precision, fusion, layout, batch, gpu; its step_ms and kinds, if any, are
replaced). Each goes to OUT_DIR under its own name, with `launches` (ms
per device launch, as --profile times them between CUDA events) and
`step_ms` (the graph-replayed step) as the model predicts them.
"""

import json
import os
import re
import subprocess
import sys

if len(sys.argv) < 5:
    sys.exit("usage: synthesize.py DLC_BENCH PARAMS.json OUT_DIR CONFIG.json...")
bench, params, out_dir, configs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
run = subprocess.run([bench, "calibrate", "--params", params, "--launches", "--check"] + configs,
                     capture_output=True, text=True)
if run.returncode != 0:
    sys.exit("synthesize.py: dlc-bench calibrate failed: " + run.stderr.strip())

steps, kinds, current = [], {}, None  # kinds: each configuration's launches
step_table = False
launch_re = re.compile(r"^    #(\d+)\s+(\S+) \[(\S+)\]\s+\S+\s+([0-9.]+)$")
for line in run.stdout.splitlines():
    if line.startswith("step time, --check"):
        step_table = True
        continue
    if step_table:
        if line.startswith("worst error"):
            step_table = False
        elif not line.startswith("profile"):
            steps.append(float(line.split()[-2]))
        continue
    m = re.match(r"^  (\S+): by launch, measured / predicted ms$", line)
    if m:
        current = m.group(1)
        kinds[current] = []
        continue
    m = launch_re.match(line)
    if m and current is not None:
        kinds[current].append({"launch": int(m.group(1)), "kind": m.group(2),
                               "path": m.group(3), "ms": float(m.group(4))})
if len(steps) != len(configs) or set(kinds) != set(configs):
    sys.exit("synthesize.py: could not read calibrate's predictions for every configuration")
os.makedirs(out_dir, exist_ok=True)
for config, step in zip(configs, steps):
    c = json.load(open(config))
    c.update({"source": "synthesize.py from " + params, "step_ms": step,
              "launches": kinds[config]})
    for key in ("kinds", "slowest", "profile_ms"):
        c.pop(key, None)
    with open(os.path.join(out_dir, os.path.basename(config)), "w") as f:
        json.dump(c, f, indent=1)
