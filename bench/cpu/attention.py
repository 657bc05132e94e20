#!/usr/bin/env python3
"""What the attention fusion buys on the CPU backend (a benchmark, not a test).

  bench/cpu/attention.py [OUT_DIR]   (default bench/results/cpu-2026-11-28)

For each workload (GPT-2 small seq 1024 batch 1 fp32, BERT-base batch 4
fp32 by default; WORKLOADS="model:batch ..."), compiles the xla step twice,
as it is and with --disable-fusion=attention, then times the two plans with
dlc-run in alternating rounds (ABAB..., ROUNDS rounds of WARMUP + STEPS
steps each, default 3 x (1 + 3)), so that load that comes and goes on the
host falls on both alike. Prints and writes OUT_DIR/attention.md: the median
step time of each, the speed-up, the peak arena of each and the difference,
and the [B, H, Sq, Sk] float32 score tensor the difference is counted in.
Every dlc-run report goes to OUT_DIR too. DLC_BIN (default build/bin).
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BIN = os.environ.get("DLC_BIN", os.path.join(ROOT, "build", "bin"))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bench", "results",
                                                         "cpu-2026-11-28")
WORKLOADS = os.environ.get("WORKLOADS", "gpt2:1 bert_base:4").split()
ROUNDS = int(os.environ.get("ROUNDS", "3"))
WARMUP = os.environ.get("WARMUP", "1")
STEPS = os.environ.get("STEPS", "3")
# Sequence, heads of the seed models: the score tensor per layer.
SCORES = {"gpt2": (12, 1024, 1024, 12), "bert_base": (12, 128, 128, 12)}


def compile_plan(model, batch, disable, plan):
    cmd = [os.path.join(BIN, "dlc-bench"), os.path.join(ROOT, "models", model + ".mlir"),
           "--batch", str(batch), "--fusion", "xla", "--compile-only", "--emit-plan", plan]
    if disable:
        cmd.append("--disable-fusion=attention")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    fields = dict(line.split(None, 1) for line in out.splitlines() if len(line.split(None, 1)) == 2)
    return int(fields["peak_arena_bytes"]), int(fields["kernels_per_step"])


def time_plan(plan, report):
    subprocess.run([os.path.join(BIN, "dlc-run"), plan, "--backend", "cpu", "--warmup", WARMUP,
                    "--steps", STEPS, "--repeats", "1", "--format", "json", "-o", report],
                   check=True, capture_output=True, text=True)
    with open(report) as f:
        r = json.load(f)
    r = r[0] if isinstance(r, list) else r
    load = r.get("host_load_percent")
    return r["step_ms"]["median"], load.get("max") if isinstance(load, dict) else load


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    for workload in WORKLOADS:
        model, batch = workload.split(":")
        batch = int(batch)
        configs = []
        for name, disable in (("xla", False), ("xla-no-attention", True)):
            plan = os.path.join(OUT, "%s-b%d-%s.plan" % (model, batch, name))
            arena, kernels = compile_plan(model, batch, disable, plan)
            configs.append({"name": name, "plan": plan, "arena": arena, "kernels": kernels,
                            "ms": [], "load": []})
        for r in range(ROUNDS):
            for c in configs:
                report = os.path.join(OUT, "%s-b%d-%s-round%d.json" % (model, batch, c["name"], r))
                ms, load = time_plan(c["plan"], report)
                c["ms"].append(ms)
                c["load"].append(load)
                print("%s b%d %s round %d: %.1f ms/step (other load on the host: %s%%)" %
                      (model, batch, c["name"], r, ms, load), flush=True)
        for c in configs:
            os.remove(c["plan"])
        fused, unfused = configs
        heads, sq, sk, layers = SCORES.get(model, (0, 0, 0, 0))
        score = batch * heads * sq * sk * 4
        rows.append("| %s b%d | %.1f | %.1f | %.2fx | %d / %d | %.1f | %.1f | %.1f | %.1f x %d |" % (
            model, batch, statistics.median(fused["ms"]), statistics.median(unfused["ms"]),
            statistics.median(unfused["ms"]) / statistics.median(fused["ms"]),
            fused["kernels"], unfused["kernels"], fused["arena"] / 1e6, unfused["arena"] / 1e6,
            (unfused["arena"] - fused["arena"]) / 1e6, score / 1e6, layers))
    table = ["| workload | xla ms/step | xla --disable-fusion=attention ms/step | speed-up | "
             "kernels | arena MB | arena MB (no attention) | arena saved MB | "
             "score tensor MB x layers |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"] + rows
    text = "\n".join(table) + "\n\nmedians of %d alternating rounds of %s warm-up + %s timed steps, " \
        "dlc-run --backend cpu, fp32\n" % (ROUNDS, WARMUP, STEPS)
    print(text)
    with open(os.path.join(OUT, "attention.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
