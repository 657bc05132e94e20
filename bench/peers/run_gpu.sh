#!/usr/bin/env bash
# Runs the peer baselines of the seed reports' headline settings on one GPU
# and writes one dlc-bench/1 JSON per run into OUTDIR, plus OUTDIR/peers.json
# (all of them merged) and OUTDIR/environment.txt.
#
#   bench/peers/run_gpu.sh OUTDIR [MODEL...]
#
# MODEL is resnet50 (AMP batch 256) and/or bert_base (AMP batch 32); both
# by default. Each model runs: PyTorch eager (fp32), channels-last-amp,
# compile-amp, and JAX xla (fp32) and xla-amp, at dlc-bench's default
# methodology (20 warm-up steps, 100 timed steps, 5 repeats; override with
# WARMUP, STEPS, REPEATS). PYTHON picks the interpreter (default python3).
# A run that fails is reported and the rest go on; the exit status is 1 if
# any failed.
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR [resnet50] [bert_base]" >&2
  exit 2
fi
OUT=$1
shift
MODELS=${*:-resnet50 bert_base}
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}
WARMUP=${WARMUP:-20}
STEPS=${STEPS:-100}
REPEATS=${REPEATS:-5}
mkdir -p "$OUT" || exit 1

{
  date -u
  "$PYTHON" -c 'import sys; print("python", sys.version.split()[0])'
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  "$PYTHON" -c 'import jax; print("jax", jax.__version__, jax.devices())' 2>&1
  nvidia-smi 2>&1 || true
} > "$OUT/environment.txt"

failed=0
written=()
run() { # NAME TOOL MODEL BATCH MODE
  local name=$1 tool=$2 model=$3 batch=$4 mode=$5
  local json="$OUT/$name.json"
  echo "== $name: $tool $model --batch $batch --mode $mode" >&2
  if "$PYTHON" "$HERE/$tool" "$model" --batch "$batch" --mode "$mode" --device cuda \
       --warmup "$WARMUP" --steps "$STEPS" --repeats "$REPEATS" -o "$json" \
       2> >(tee "$OUT/$name.log" >&2); then
    written+=("$json")
  else
    echo "run_gpu.sh: $name failed (log: $OUT/$name.log)" >&2
    failed=1
  fi
}

for model in $MODELS; do
  case $model in
    resnet50) batch=256 ;;
    bert_base) batch=32 ;;
    *) echo "run_gpu.sh: unknown model $model (resnet50 or bert_base)" >&2; exit 2 ;;
  esac
  run "torch-$model-eager-$batch" torch_peer.py "$model" "$batch" eager
  run "torch-$model-channels-last-amp-$batch" torch_peer.py "$model" "$batch" channels-last-amp
  run "torch-$model-compile-amp-$batch" torch_peer.py "$model" "$batch" compile-amp
  run "jax-$model-xla-$batch" jax_peer.py "$model" "$batch" xla
  run "jax-$model-xla-amp-$batch" jax_peer.py "$model" "$batch" xla-amp
done

if [ ${#written[@]} -gt 0 ]; then
  "$PYTHON" "$HERE/merge.py" -o "$OUT/peers.json" "${written[@]}" || failed=1
fi
exit $failed
