#!/usr/bin/env bash
# dlc's CPU backends beside PyTorch eager, timed one after the other in one
# run on the same threads (a benchmark, not a test): samples/s and ratios.
#
#   bench/cpu/vs_torch.sh [OUT_DIR]        (default: bench-cpu-out)
#
# THREADS (default: all cores) sets DLC_CPU_THREADS and torch's threads
# (OMP_NUM_THREADS, torch.set_num_threads through the peer); WARMUP, STEPS,
# REPEATS the methodology (default 5, 20, 3); WORKLOADS "model:batch ..."
# (default: mlp:32 small_convnet:32 tiny_transformer:32 resnet50:8 bert_base:4);
# BACKENDS (default: "cpu", today the reference; issue 18 adds the fast one
# beside it) the dlc backends; FUSIONS (default: "none xla"). Needs Debian's
# python3-torch (/usr/bin/python3) for the peer.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-bench-cpu-out}
BIN=${DLC_BIN:-build/bin}
THREADS=${THREADS:-$(nproc)}
WARMUP=${WARMUP:-5} STEPS=${STEPS:-20} REPEATS=${REPEATS:-3}
WORKLOADS=${WORKLOADS:-"mlp:32 small_convnet:32 tiny_transformer:32 resnet50:8 bert_base:4"}
BACKENDS=${BACKENDS:-"cpu"}
FUSIONS=${FUSIONS:-"none xla"}
mkdir -p "$OUT"
export DLC_CPU_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
method=(--warmup "$WARMUP" --steps "$STEPS" --repeats "$REPEATS")
for w in $WORKLOADS; do
  m=${w%%:*} b=${w##*:}
  echo "vs_torch: $m batch $b: torch eager" >&2
  /usr/bin/python3 bench/peers/torch_peer.py "$m" --batch "$b" --mode eager --device cpu \
    "${method[@]}" -o "$OUT/$m-b$b-torch.json" 2> /dev/null
  for backend in $BACKENDS; do
    for fusion in $FUSIONS; do
      echo "vs_torch: $m batch $b: dlc $backend $fusion" >&2
      "$BIN/dlc-bench" "models/$m.mlir" --batch "$b" --backend "$backend" --fusion "$fusion" \
        "${method[@]}" --format json -o "$OUT/$m-b$b-$backend-$fusion.json"
    done
  done
done
/usr/bin/python3 - "$OUT" "$THREADS" "$WORKLOADS" "$BACKENDS" "$FUSIONS" <<'PY'
import json, os, sys
out, threads, workloads, backends, fusions = sys.argv[1:6]
def sps(path):
    with open(path) as f:
        r = json.load(f)
    r = r[0] if isinstance(r, list) else r
    return r["samples_per_sec"]["median"]
cols = [(b, f) for b in backends.split() for f in fusions.split()]
head = ["model", "batch", "torch eager"] + ["dlc %s %s" % c for c in cols]
head += ["%s %s / torch" % c for c in cols]
print("threads: %s (dlc and torch)" % threads)
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for w in workloads.split():
    m, b = w.split(":")
    t = sps(os.path.join(out, "%s-b%s-torch.json" % (m, b)))
    d = [sps(os.path.join(out, "%s-b%s-%s-%s.json" % (m, b, *c))) for c in cols]
    print("| " + " | ".join([m, b, "%.1f" % t] + ["%.1f" % x for x in d] +
                            ["%.2fx" % (x / t) for x in d]) + " |")
PY
