"""Checks a peer's report (bench/peers) against dlc's own reports.

  peers_check.py PEER.json --dlc-report DLC.json --dlc-counts COUNTS.json
                 --classes N --repeats R --batch B

DLC.json is a timed dlc-bench --format json report (any model): the peer's
report must carry every one of its fields. COUNTS.json is dlc-bench
--compile-only --format json for the peer's model: the parameter counts must
be equal. Prints one line per check; exits 1 if any fails.
"""

import argparse
import json
import math
import sys

# Fields only dlc's compiled plan knows; a peer writes null.
PLAN_FIELDS = ["kernels_per_step", "memory_bytes_per_step", "fused_groups", "kernels_by_kind",
               "forward_macs_per_sample", "train_flops_per_step", "peak_arena_bytes",
               "total_buffer_bytes", "live_bytes_lower_bound", "padding_bytes", "achieved_tflops"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("peer")
    p.add_argument("--dlc-report", required=True)
    p.add_argument("--dlc-counts", required=True)
    p.add_argument("--classes", type=int, required=True)
    p.add_argument("--repeats", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--loss-tolerance", type=float, default=0.3)
    a = p.parse_args()
    peer = json.load(open(a.peer))
    dlc = json.load(open(a.dlc_report))
    counts = json.load(open(a.dlc_counts))
    failures = []

    def check(ok, what):
        print(("ok: " if ok else "FAIL: ") + what)
        if not ok:
            failures.append(what)

    name = "%s %s %s %s" % (peer.get("model"), peer.get("backend"), peer.get("precision"),
                            peer.get("fusion"))
    missing = sorted(set(dlc) - set(peer))
    check(not missing, "%s: carries all %d fields of dlc's report%s"
          % (name, len(dlc), " (missing %s)" % ", ".join(missing) if missing else ""))
    check(peer.get("schema") == dlc.get("schema") == "dlc-bench/1", "schema dlc-bench/1")
    nonnull = [f for f in PLAN_FIELDS if peer.get(f) is not None]
    check(not nonnull, "plan-only fields are null%s" % (
        " (not: %s)" % ", ".join(nonnull) if nonnull else ""))
    check(peer.get("batch") == a.batch and peer.get("gpus") == 1,
          "batch %s, gpus %s" % (peer.get("batch"), peer.get("gpus")))

    sps, ms = peer["samples_per_sec"], peer["step_ms"]
    check(sps["median"] > 0 and sps["min"] > 0, "samples/s %.1f > 0" % sps["median"])
    check(sps["min"] <= sps["median"] <= sps["max"],
          "samples/s min %.1f <= median %.1f <= max %.1f" % (sps["min"], sps["median"], sps["max"]))
    check(ms["min"] <= ms["median"] <= ms["max"], "step ms min <= median <= max")
    reps = peer["repeat_results"]
    check(peer["repeats"] == a.repeats == len(reps),
          "repeats %d (asked %d), %d repeat results" % (peer["repeats"], a.repeats, len(reps)))
    values = sorted(r["samples_per_sec"] for r in reps)
    n = len(values)
    median = values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
    check(math.isclose(median, sps["median"], rel_tol=1e-9), "median is the repeats' median")
    check(all(math.isclose(r["samples_per_sec"] * r["step_ms"] / 1e3, a.batch, rel_tol=1e-6)
              for r in reps), "samples/s x step time = batch in every repeat")

    check(peer["parameters"] == counts["parameters"],
          "parameters %d, dlc's %d" % (peer["parameters"], counts["parameters"]))

    first, last = peer["loss"]["first"], peer["loss"]["last"]
    ln = math.log(a.classes)
    check(first is not None and abs(first - ln) <= a.loss_tolerance,
          "loss at step 1 %.4f, ln(%d) = %.4f" % (first if first is not None else math.nan,
                                                  a.classes, ln))
    check(last is not None and last < first, "loss falls: %s -> %s" % (first, last))
    check(all(math.isclose(r["loss_first"], first, rel_tol=1e-5)
              and math.isclose(r["loss_last"], last, rel_tol=1e-5) for r in reps),
          "every repeat trains the same: the same first and last loss")
    print("%s: %d checks failed" % (name, len(failures)) if failures else "%s: all checks pass" % name)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
