#!/usr/bin/env bash
# dlc's CPU backends beside PyTorch and JAX, each timed one after the other
# in one run on the same threads (a benchmark, not a test): samples/s and
# ratios.
#
#   bench/cpu/vs_torch.sh [OUT_DIR]        (default: bench-cpu-out)
#
# The peers, per workload:
#   torch eager     Debian's PyTorch (/usr/bin/python3, 1.13), the tests'
#                   reference and the issue's yardstick;
#   torch2 eager, torch.compile, jax xla
#                   with PEER_PYTHON, a Python with torch 2.x and jax from
#                   PyPI (default /work/venv-peers/bin/python when it exists;
#                   PEER_PYTHON= leaves them out): the fusing peers.
# THREADS (default: all cores) sets DLC_CPU_THREADS and OMP_NUM_THREADS,
# which PyTorch's intra-op threads follow; XLA:CPU sizes its own pool to the
# cores. WARMUP, STEPS, REPEATS set the methodology (default 5, 20, 3);
# WORKLOADS "model:batch[:steps] ..." (default: mlp:32:1000
# small_convnet:32:100 tiny_transformer:32:1000 resnet50:8 bert_base:4; a
# workload's steps override STEPS: 20 steps of the mlp's 0.15 ms are a 3 ms
# window, where one preemption moved dlc's figure 3x); BACKENDS the dlc backends
# (default "cpu"; "cpu reference" adds the reference); FUSIONS (default
# "none xla"). PRECISION (default fp32): amp-bf16 runs dlc with --precision
# amp-bf16 and each peer in its bfloat16 mode (torch: channels-last
# bfloat16 autocast, compiled or not; jax: xla-amp), its reports named
# MODEL-bB-amp-bf16-*. The table goes to stdout and OUT_DIR/table.md (or
# table-amp-bf16.md), every report to OUT_DIR; TABLE_ONLY=1 prints the table
# of the reports already there. PEERS (default "torch torch2 torch2-compile
# jax") picks the peers that run: Debian's torch 1.13 spends minutes a
# BERT-base step.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-bench-cpu-out}
BIN=${DLC_BIN:-build/bin}
THREADS=${THREADS:-$(nproc)}
WARMUP=${WARMUP:-5} STEPS=${STEPS:-20} REPEATS=${REPEATS:-3}
WORKLOADS=${WORKLOADS:-"mlp:32:1000 small_convnet:32:100 tiny_transformer:32:1000 resnet50:8 bert_base:4"}
BACKENDS=${BACKENDS:-"cpu"}
FUSIONS=${FUSIONS:-"none xla"}
PRECISION=${PRECISION:-fp32}
PEERS=${PEERS:-"torch torch2 torch2-compile jax"}
case $PRECISION in
  fp32) tag="" eager=eager compile=compile jaxmode=xla table=table.md ;;
  amp-bf16) tag="-amp-bf16" eager=channels-last-amp-bf16 compile=compile-amp-bf16
            jaxmode=xla-amp table=table-amp-bf16.md ;;
  *) echo "vs_torch: PRECISION=$PRECISION: expected fp32 or amp-bf16" >&2; exit 2 ;;
esac
if [ -z "${PEER_PYTHON+set}" ] && [ -x /work/venv-peers/bin/python ]; then
  PEER_PYTHON=/work/venv-peers/bin/python
fi
PEER_PYTHON=${PEER_PYTHON:-}
mkdir -p "$OUT"
export DLC_CPU_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
method=(--warmup "$WARMUP" --steps "$STEPS" --repeats "$REPEATS")
peer() { # NAME PYTHON SCRIPT MODE MODEL BATCH
  local name=$1 python=$2 script=$3 mode=$4 m=$5 b=$6
  case " $PEERS " in *" $name "*) ;; *) return 0 ;; esac
  local file=$OUT/$m-b$b$tag-$name
  echo "vs_torch: $m batch $b $PRECISION: $name" >&2
  if ! "$python" "bench/peers/$script" "$m" --batch "$b" --mode "$mode" --device cpu \
      "${method[@]}" -o "$file.json" 2> "$file.log"; then
    echo "vs_torch: $name failed on $m (see $file.log)" >&2
    rm -f "$file.json"
  fi
}
for w in $WORKLOADS; do
  [ -n "${TABLE_ONLY:-}" ] && break
  IFS=: read -r m b steps <<< "$w"
  method=(--warmup "$WARMUP" --steps "${steps:-$STEPS}" --repeats "$REPEATS")
  peer torch /usr/bin/python3 torch_peer.py $eager "$m" "$b"
  if [ -n "$PEER_PYTHON" ]; then
    peer torch2 "$PEER_PYTHON" torch_peer.py $eager "$m" "$b"
    peer torch2-compile "$PEER_PYTHON" torch_peer.py $compile "$m" "$b"
    peer jax "$PEER_PYTHON" jax_peer.py $jaxmode "$m" "$b"
  fi
  for backend in $BACKENDS; do
    for fusion in $FUSIONS; do
      echo "vs_torch: $m batch $b $PRECISION: dlc $backend $fusion" >&2
      "$BIN/dlc-bench" "models/$m.mlir" --batch "$b" --backend "$backend" --fusion "$fusion" \
        --precision "$PRECISION" "${method[@]}" --format json \
        -o "$OUT/$m-b$b$tag-$backend-$fusion.json"
    done
  done
done
/usr/bin/python3 - "$OUT" "$THREADS" "$WORKLOADS" "$BACKENDS" "$FUSIONS" "$PEER_PYTHON" \
    "$PRECISION" "$tag" <<'PY' | tee "$OUT/$table"
import json, os, sys
out, threads, workloads, backends, fusions, peer_python, precision, tag = sys.argv[1:9]
def sps(name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        r = json.load(f)
    r = r[0] if isinstance(r, list) else r
    return r["samples_per_sec"]["median"]
peers = ["torch"] + (["torch2", "torch2-compile", "jax"] if peer_python else [])
titles = {"torch": "torch 1.13 eager", "torch2": "torch 2 eager",
          "torch2-compile": "torch.compile", "jax": "jax xla"}
if precision != "fp32":
    titles = {"torch": "torch 1.13 bf16 autocast", "torch2": "torch 2 bf16 autocast",
              "torch2-compile": "torch.compile bf16 autocast", "jax": "jax xla-amp (bf16)"}
cols = [(b, f) for b in backends.split() for f in fusions.split()]
head = ["model", "batch"] + [titles[p] for p in peers] + ["dlc %s %s" % c for c in cols]
head += ["%s %s / torch 1.13" % c for c in cols]
if len(peers) > 1:
    head += ["%s %s / best peer" % c for c in cols]
if "none" in fusions.split() and len(fusions.split()) > 1:
    head += ["%s %s / %s none" % (b, f, b) for b, f in cols if f != "none"]
fmt = lambda x: "-" if x is None else ("%.1f" % x if x >= 100 else "%.3g" % x)
ratio = lambda a, b: "-" if a is None or not b else "%.2fx" % (a / b)
print("threads: %s (dlc, torch and OpenMP); %s; median samples/s of the repeats"
      % (threads, precision))
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for w in workloads.split():
    m, b = w.split(":")[:2]
    p = {name: sps("%s-b%s%s-%s" % (m, b, tag, name)) for name in peers}
    d = {c: sps("%s-b%s%s-%s-%s" % (m, b, tag, *c)) for c in cols}
    row = [m, b] + [fmt(p[n]) for n in peers] + [fmt(d[c]) for c in cols]
    row += [ratio(d[c], p["torch"]) for c in cols]
    if len(peers) > 1:
        best = max([x for x in p.values() if x is not None], default=None)
        row += [ratio(d[c], best) for c in cols]
    if "none" in fusions.split() and len(fusions.split()) > 1:
        row += [ratio(d[(bk, f)], d[(bk, "none")]) for bk, f in cols if f != "none"]
    print("| " + " | ".join(row) + " |")
PY
