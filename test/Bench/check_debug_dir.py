"""Checks what dlc-bench --debug-dir wrote for a sweep against what the same
configurations' other outputs say.

usage: check_debug_dir.py DIR REPORT.json SUBDIR=IR_LOG:REMARKS_LOG ...

REPORT.json is the sweep's --compile-only JSON report. For each
configuration SUBDIR of DIR, IR_LOG is the stderr of the same configuration
with --mlir-print-ir-after-all (MLIR's own printer names the passes in the
order they ran) and REMARKS_LOG its stderr with --explain-fusion=all.
Checks, per configuration: one numbered IR file per pass, in that order,
the fused ops in the last one exactly when the strategy fuses; plan.txt's
arena and routing.txt's device launches equal to the report's; one kernel
source per generated launch of the routing; fusion.md's counts adding up to
the remarks =all printed, and its list being those remarks; index.html
linking every file there, and nothing else. DIR/index.html links each
configuration's page.
"""
import collections
import json
import os
import re
import sys


def fail(message):
    sys.exit("FAIL: " + message)


def hrefs(path):
    return re.findall(r'href="([^"]+)"', open(path).read())


def files_under(root):
    found = set()
    for parent, _, names in os.walk(root):
        for name in names:
            found.add(os.path.relpath(os.path.join(parent, name), root))
    return found


def check_configuration(root, result, ir_log, remarks_log):
    name = os.path.basename(root)
    passes = re.findall(r"IR Dump After \S+ \(([^)]+)\)", open(ir_log).read())
    ir_files = sorted(f for f in os.listdir(root) if f.endswith(".mlir"))
    expected = ["%03d-%s.mlir" % (i, p) for i, p in enumerate(passes)]
    if not passes or ir_files != expected:
        fail("%s: IR files %s, the passes that ran %s" % (name, ir_files, expected))
    for f, p in zip(ir_files, passes):
        first = open(os.path.join(root, f)).readline()
        if "IR Dump After" not in first or "(%s)" % p not in first:
            fail("%s/%s starts %r" % (name, f, first))
    fused = ["train.fused" in open(os.path.join(root, f)).read() for f in ir_files]
    if fused[-1] != (result["fusion"] != "none"):
        fail("%s: train.fused in the last IR file: %s, fusion %s" %
             (name, fused[-1], result["fusion"]))

    plan = open(os.path.join(root, "plan.txt")).read()
    header = re.match(r"plan (\S+): batch (\d+), precision (\S+), fusion (\S+), ranks 1, "
                      r"arena (\d+) bytes\n", plan)
    if not header or (header.group(1), int(header.group(2)), header.group(4),
                      int(header.group(5))) != (result["model"], result["batch"],
                                                result["fusion"], result["peak_arena_bytes"]):
        fail("%s: plan.txt starts %r, the report: %s batch %s %s arena %s" %
             (name, plan.splitlines()[0], result["model"], result["batch"], result["fusion"],
              result["peak_arena_bytes"]))
    kernels = re.search(r"^kernels \((\d+), in launch order\):$", plan, re.M)
    listed = re.findall(r"^  #\d+ \S+ \[", plan, re.M)
    if not kernels or int(kernels.group(1)) != len(listed) or not listed:
        fail("%s: plan.txt lists %d kernels under %r" % (name, len(listed), kernels))

    routing = open(os.path.join(root, "routing.txt")).read()
    launches = re.search(r"^device launches: (\d+) \(generated (\d+),", routing, re.M)
    routed = re.findall(r"^  #\d+ ", routing, re.M)
    if not launches or int(launches.group(1)) != result["device_launches"] or \
            len(routed) != result["device_launches"]:
        fail("%s: routing.txt %r with %d launches listed, the report %d device launches" %
             (name, launches and launches.group(0), len(routed), result["device_launches"]))
    cuda = [f for f in os.listdir(os.path.join(root, "kernels")) if f.endswith(".cu")]
    host = os.listdir(os.path.join(root, "kernels", "host"))
    if len(cuda) != int(launches.group(2)) or not host:
        fail("%s: %d .cu files for %s generated launches, %d host files" %
             (name, len(cuda), launches.group(2), len(host)))
    for f in cuda:
        if not open(os.path.join(root, "kernels", f)).read().startswith("// plan "):
            fail("%s: kernels/%s does not start with its bindings" % (name, f))

    said = []
    for line in open(remarks_log):
        m = re.match(r"^(\S+):(\d+):(\d+): remark: (.*)$", line.rstrip("\n"))
        if m:
            said.append("%s:%s:%s: %s" % (os.path.basename(m.group(1)), m.group(2),
                                           m.group(3), m.group(4)))
    fusion = open(os.path.join(root, "fusion.md")).read()
    counts = [int(c) for c in re.findall(r"^\| (\d+) \|", fusion, re.M)]
    listed = re.findall(r"^- (.*)$", fusion, re.M)
    if sum(counts) != len(said) or collections.Counter(listed) != collections.Counter(said):
        fail("%s: fusion.md counts %s (sum %d) and %d remarks; =all printed %d" %
             (name, counts, sum(counts), len(listed), len(said)))

    links = hrefs(os.path.join(root, "index.html"))
    present = files_under(root) - {"index.html"}
    if set(links) != present or len(links) != len(set(links)):
        fail("%s: index.html links %s; the directory holds %s" %
             (name, sorted(set(links) ^ present), len(present)))
    print("OK: %s: %d IR files, plan, routing (%d launches), %d kernels, %d remarks in "
          "%d reasons, all linked" % (name, len(ir_files), len(routed), len(cuda), len(said),
                                      len(counts)))


def main(root, report, *configurations):
    results = json.load(open(report))["results"]
    top = hrefs(os.path.join(root, "index.html"))
    expected = [c.split("=")[0] + "/index.html" for c in configurations]
    if top != expected or len(results) != len(configurations):
        fail("index.html links %s, expected %s" % (top, expected))
    for configuration, result in zip(configurations, results):
        subdir, logs = configuration.split("=")
        ir_log, remarks_log = logs.split(":")
        check_configuration(os.path.join(root, subdir), result, ir_log, remarks_log)


if __name__ == "__main__":
    main(*sys.argv[1:])
