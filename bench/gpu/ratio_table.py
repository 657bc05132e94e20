#!/usr/bin/env python3
"""Issue 23's table: per workload, dlc's strategies and the peers timed in
the same call, dlc's best over the best peer, xla over none, and each
side's model FLOP utilization.

  python3 bench/gpu/ratio_table.py RESULTS_DIR [--gpu-peak-tflops 989.4]

Reads every dlc-bench/1 JSON in RESULTS_DIR: dlc's own (backend "cuda",
from dlc-run) and the peers' (backend "torch-cuda" / "jax-cuda", from
bench/peers). A workload is a model, a batch and fp32 or half precision
(dlc's amp and amp-bf16 beside the peers' AMP modes). MFU counts the
model's training FLOPs (dlc's count, the same for every side) against the
dense peak of the precision: --gpu-peak-tflops for half, --fp32-peak-tflops
for fp32 (H100 SXM: 989.4 and 66.9, `dlc-bench gpus`).
"""
import argparse
import glob
import json
import os
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results")
    p.add_argument("--gpu-peak-tflops", type=float, default=989.4)
    p.add_argument("--fp32-peak-tflops", type=float, default=66.9)
    args = p.parse_args()
    runs = []
    attention = {}  # xla plan name: its runs by attention kernels
    for path in sorted(glob.glob(os.path.join(args.results, "*.json"))):
        try:
            r = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"ratio_table.py: {path}: not JSON ({e})", file=sys.stderr)
            continue
        if not isinstance(r, dict) or r.get("schema") != "dlc-bench/1":
            continue
        if r.get("backend") not in ("cuda", "torch-cuda", "jax-cuda"):
            continue
        base = os.path.basename(path)
        if base.endswith((".simt.json", ".noattn.json", ".denserows.json", ".sdpa.json",
                          ".flash.json")):
            attention.setdefault(base.rsplit(".", 2)[0], {})[base.split(".")[-2]] = r
            continue
        if base.endswith((".nograph.json", ".check.json", ".cpu.json",
                          ".hand-bn.json", ".check.nograph.json")):
            continue
        if base.endswith("-xla.json"):
            attention.setdefault(base[:-len(".json")], {})["tensor cores"] = r
        runs.append(r)
    workloads = {}
    for r in runs:
        half = r["precision"] != "fp32"
        key = (r["model"], r["batch"], "half" if half else "fp32")
        workloads.setdefault(key, []).append(r)
    flops = {(r["model"], r["batch"]): r["train_flops_per_step"] for r in runs
             if r["backend"] == "cuda" and r.get("train_flops_per_step")}
    print("| workload | dlc none | dlc paddle | dlc xla | xla / none | best peer | "
          "dlc best / best peer | MFU dlc best | MFU best peer | peers (samples/s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(workloads):
        model, batch, kind = key
        rs = workloads[key]
        dlc = {r["fusion"]: r for r in rs if r["backend"] == "cuda"}
        peers = [r for r in rs if r["backend"] != "cuda"]
        sps = lambda r: r["samples_per_sec"]["median"]
        peak = args.gpu_peak_tflops if kind == "half" else args.fp32_peak_tflops

        def mfu(r):
            f = flops.get((model, batch))
            return f"{100 * sps(r) / batch * f / 1e12 / peak:.1f}%" if f else "-"

        cells = [f"{sps(dlc[f]):.1f}" if f in dlc else "-" for f in ("none", "paddle", "xla")]
        best = max(dlc.values(), key=sps) if dlc else None
        best_peer = max(peers, key=sps) if peers else None
        precision = best["precision"] if best else (best_peer["precision"] if best_peer else kind)
        xla_none = (f"{sps(dlc['xla']) / sps(dlc['none']):.2f}x"
                    if "xla" in dlc and "none" in dlc else "-")
        ratio = (f"**{sps(best) / sps(best_peer):.2f}x** ({best['fusion']} / "
                 f"{best_peer['backend'].split('-')[0]} {best_peer['fusion']})"
                 if best and best_peer else "-")
        peer_cells = ", ".join(f"{r['backend'].split('-')[0]} {r['fusion']} {sps(r):.1f}"
                               for r in sorted(peers, key=sps, reverse=True))
        print(f"| {model} b{batch} {precision} | " + " | ".join(cells) + f" | {xla_none} | "
              + (f"{sps(best_peer):.1f}" if best_peer else "-") + f" | {ratio} | "
              + (mfu(best) if best else "-") + " | " + (mfu(best_peer) if best_peer else "-")
              + f" | {peer_cells or '-'} |")
    # The attention fusion, same call: xla as planned (the tensor-core flash
    # kernels for f16 / bf16), with the SIMT flash kernels, and without the
    # fusion (run_all.sh's *.simt.json and *.noattn.json).
    rows = {name: a for name, a in attention.items() if len(a) > 1}
    if rows:
        print()
        # And the padded rows of the logits: the same plan with dense rows.
        # And, without dropout, cuDNN's SDPA against the flash kernels.
        print("| xla plan | tensor-core attention | SIMT attention | no attention fusion | "
              "tensor cores / no fusion | dense rows | padded / dense rows | "
              "no dropout: cuDNN SDPA | no dropout: flash | SDPA / flash |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name in sorted(rows):
            a = rows[name]
            cell = lambda k: f"{a[k]['samples_per_sec']['median']:.1f}" if k in a else "-"
            ratio = lambda k: (f"{a['tensor cores']['samples_per_sec']['median'] / a[k]['samples_per_sec']['median']:.2f}x"
                               if "tensor cores" in a and k in a else "-")
            sdpa = (f"{a['sdpa']['samples_per_sec']['median'] / a['flash']['samples_per_sec']['median']:.2f}x"
                    if "sdpa" in a and "flash" in a else "-")
            # A graph cuDNN refused on the device ran on the flash kernels:
            # then the "SDPA" run has no more cuDNN launches than the flash one.
            on_cudnn = lambda k: a[k].get("launches_by_path", {}).get("cudnn")
            if ("sdpa" in a and "flash" in a and on_cudnn("sdpa") is not None
                    and on_cudnn("sdpa") <= (on_cudnn("flash") or 0)):
                sdpa += " (cuDNN refused every graph: both ran the flash kernels)"
            print(f"| {name} | {cell('tensor cores')} | {cell('simt')} | {cell('noattn')} | {ratio('noattn')} "
                  f"| {cell('denserows')} | {ratio('denserows')} | {cell('sdpa')} | {cell('flash')} | {sdpa} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
