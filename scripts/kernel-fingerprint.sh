#!/usr/bin/env bash
# Writes what the CUDA backend would run for the six seed models under each
# fusion strategy, fp32 and AMP: `dlc-kernels --paths --verbose` and every
# generated kernel source (--dump-kernels). No GPU needed. A refactoring that
# must not change behaviour leaves `diff -r BEFORE AFTER` empty:
#
#   scripts/kernel-fingerprint.sh /tmp/before   # on the old revision
#   scripts/kernel-fingerprint.sh /tmp/after    # on the new one
#   diff -r /tmp/before /tmp/after
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/kernel-fingerprint.sh OUT_DIR}
BIN=${DLC_BIN:-build/bin}
BATCH=${BATCH:-2}
mkdir -p "$OUT"
plans=$(mktemp -d)
trap 'rm -rf "$plans"' EXIT
for m in resnet50 vgg16 deeplabv3p hrnet_w18 bert_base gpt2; do
  for precision in fp32 amp; do
    for fusion in none paddle xla; do
      name=$m-$precision-$fusion
      "$BIN/dlc-bench" models/$m.mlir --batch "$BATCH" --precision $precision \
        --fusion $fusion --backend cuda --compile-only --emit-plan "$plans/$name.plan" > /dev/null
      "$BIN/dlc-kernels" --paths --verbose "$plans/$name.plan" |
        sed "s|$plans/||g" > "$OUT/$name.paths.txt"
      "$BIN/dlc-kernels" --no-compile --dump-kernels "$OUT/$name.kernels" \
        "$plans/$name.plan" > /dev/null
      echo "$name"
    done
  done
done
