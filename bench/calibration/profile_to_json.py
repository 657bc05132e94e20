#!/usr/bin/env python3
"""Turns a --backend cuda --profile text profile (device time by launch kind
[path], as bench/results/h100-*/NAME.profile.txt hold) and the run's JSON
report (its measured step time) into the calibration input that
`dlc-bench calibrate` reads:

  {"model_file": "models/resnet50.mlir", "precision": "amp", "fusion": "none",
   "layout": "nchw", "batch": 256, "gpu": "H100-SXM", "step_ms": 109.7,
   "kinds": [{"kind": "batch_norm_backward", "path": "cudnn", "ms": 33.785,
              "launches": 53}, ...]}

  profile_to_json.py PROFILE.txt REPORT.json LAYOUT OUT.json

LAYOUT is the layout the run compiled (nchw or nhwc): the first H100 run
predates NHWC as AMP's default, so its plans must be compiled as NCHW.
"""

import json
import re
import sys

profile, report_path, layout, out = sys.argv[1:5]
report = json.load(open(report_path))
kinds = []
line_re = re.compile(r"^\s+(\S+) \[(\S+)\]\s+([0-9.]+) ms/step\s+[0-9.]+%\s+\((\d+) launches\)")
for line in open(profile):
    m = line_re.match(line)
    if m:
        kinds.append({"kind": m.group(1), "path": m.group(2), "ms": float(m.group(3)),
                      "launches": int(m.group(4))})
step = report["step_ms"]
json.dump({
    "source": profile,
    "model_file": "models/%s.mlir" % report["model"],
    "precision": report["precision"],
    "fusion": report["fusion"],
    "layout": layout,
    "batch": report["batch"],
    "gpu": "H100-SXM",
    "step_ms": step["median"] if isinstance(step, dict) else step,
    "kinds": kinds,
}, open(out, "w"), indent=1)
