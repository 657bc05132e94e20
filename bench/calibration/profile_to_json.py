#!/usr/bin/env python3
"""Turns a --backend cuda --profile text profile (device time by launch
kind [path], then the slowest launches, as bench/results/h100-*/NAME.profile.txt
hold) and the run's JSON report (its measured step time) into the calibration
input that `dlc-bench calibrate` reads:

  {"model_file": "models/resnet50.mlir", "precision": "amp", "fusion": "none",
   "layout": "nchw", "batch": 256, "gpu": "H100-SXM", "step_ms": 109.7,
   "dlc_revision": "df68e43bf9d5", "profile_ms": 70.789,
   "kinds": [{"kind": "batch_norm_backward", "path": "cudnn", "ms": 33.785,
              "launches": 53}, ...],
   "slowest": [{"launch": 466, "path": "hand-written", "kind": "max_pool2d_backward",
                "label": "max_pool2d_backward, kernel #466: op max_pool2d_backward",
                "ms": 10.519}, ...]}

  profile_to_json.py PROFILE.txt|- REPORT.json LAYOUT OUT.json
                     [--launches PROFILE_REPORT.json] [--model-file FILE]

Every figure the text prints is kept: the per-kind table, its total
(profile_ms) and the slowest launches (`launch` is the device launch's
index, as `calibrate` numbers them). PROFILE "-" writes a configuration whose
step was timed but not profiled (no kinds: `calibrate` fits its step alone).
LAYOUT is the layout the run compiled (nchw, nhwc, or auto where the model
has no convolution): the first H100 run predates NHWC as AMP's default, so
its plans must be compiled as NCHW. LAYOUT "-" takes the one the report
names (its `layout`: NCHW, NHWC, or empty without a convolution: auto).

--launches adds every launch's time (`launches`: launch, kind, path, ms)
from the JSON report of the profiled run (`dlc-run --profile --format json
-o PROFILE_REPORT.json`), which `calibrate` then fits launch by launch.
--model-file names a model outside models/ (the device sweep's).
"""

import json
import re
import sys

if len(sys.argv) < 5:
    sys.exit("usage: profile_to_json.py PROFILE.txt|- REPORT.json LAYOUT OUT.json "
             "[--launches PROFILE_REPORT.json] [--model-file FILE]")
profile, report_path, layout, out = sys.argv[1:5]
options = dict(zip(sys.argv[5::2], sys.argv[6::2]))
if set(options) - {"--launches", "--model-file"} or len(sys.argv[5:]) % 2:
    sys.exit("profile_to_json.py: unknown or incomplete option in %s" % " ".join(sys.argv[5:]))
report = json.load(open(report_path))
if layout == "-":
    layout = (report.get("layout") or "auto").lower()
kinds, slowest = [], []
total = None
kind_re = re.compile(r"^\s+(\S+) \[(\S+)\]\s+([0-9.]+) ms/step\s+[0-9.]+%\s+\((\d+) launches\)")
total_re = re.compile(r"^device time by launch kind .*: ([0-9.]+) ms/step$")
launch_re = re.compile(r"^\s+([0-9.]+) ms\s+(\S+)\s+launch #(\d+) \((([^,]+),.*)\)$")
for line in open(profile) if profile != "-" else []:
    m = kind_re.match(line)
    if m:
        kinds.append({"kind": m.group(1), "path": m.group(2), "ms": float(m.group(3)),
                      "launches": int(m.group(4))})
        continue
    m = total_re.match(line)
    if m:
        total = float(m.group(1))
        continue
    m = launch_re.match(line)
    if m:
        slowest.append({"launch": int(m.group(3)), "path": m.group(2), "kind": m.group(5),
                        "label": m.group(4), "ms": float(m.group(1))})
if profile != "-" and not kinds and "--launches" not in options:
    sys.exit("profile_to_json.py: %s: no 'KIND [PATH] MS ms/step' lines" % profile)
step = report["step_ms"]
result = {
    "source": profile if profile != "-" else report_path,
    "model_file": options.get("--model-file", "models/%s.mlir" % report["model"]),
    "precision": report["precision"],
    "fusion": report["fusion"],
    "layout": layout,
    "batch": report["batch"],
    "gpu": "H100-SXM",
    "step_ms": step["median"] if isinstance(step, dict) else step,
    "kinds": kinds,
}
if "dlc_revision" in report:
    result["dlc_revision"] = report["dlc_revision"]
if total is not None:
    result["profile_ms"] = total
if slowest:
    result["slowest"] = slowest
if "--launches" in options:
    entries = json.load(open(options["--launches"])).get("profile", [])
    if not entries:
        sys.exit("profile_to_json.py: %s: no per-launch `profile` array (run with --profile "
                 "--format json)" % options["--launches"])
    result["launches"] = [{"launch": e["launch"], "kind": e["kind"], "path": e["path"],
                           "ms": e["ms_per_step"]} for e in entries]
json.dump(result, open(out, "w"), indent=1)
