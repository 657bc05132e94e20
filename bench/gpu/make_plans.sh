#!/usr/bin/env bash
# Compiles, on the build machine (MLIR is here, not on the GPU machine), the
# plans bench/gpu/run_gpu_tests.sh runs: the small models at batch 8 and
# ResNet-50 / BERT-base at batch 2 for the CPU-vs-GPU checks, and the
# issue's benchmark set (ResNet-50 batch 256,
# BERT-base batch 32; fp32 and amp; none, paddle, xla). Plans hold no
# weights, so the directory is small enough to carry.
# Usage: bench/gpu/make_plans.sh [OUT_DIR]                (default: plans)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-plans}
BENCH=build/bin/dlc-bench
mkdir -p "$OUT"
for m in mlp small_convnet tiny_transformer tiny_segnet; do
  "$BENCH" models/$m.mlir --batch 8 --compile-only --emit-plan "$OUT/check-$m.plan" > /dev/null
done
# AMP in NHWC (the default layout of half precision): cuDNN's NHWC
# convolutions and batch norm, and under paddle its fused batch norm + relu.
for m in small_convnet tiny_segnet; do
  for fusion in paddle xla; do
    "$BENCH" models/$m.mlir --batch 8 --precision amp --fusion $fusion --compile-only \
      --emit-plan "$OUT/check-amp-$fusion-$m.plan" > /dev/null
  done
done
# The issue's whole-step check of the seed models, at a batch the CPU
# backend steps through in seconds.
for m in resnet50 bert_base; do
  "$BENCH" models/$m.mlir --batch 2 --compile-only --emit-plan "$OUT/check-$m.plan" > /dev/null
done
for spec in resnet50:256 bert_base:32; do
  m=${spec%%:*} batch=${spec##*:}
  for precision in fp32 amp; do
    for fusion in none paddle xla; do
      "$BENCH" models/$m.mlir --batch "$batch" --precision $precision --fusion $fusion \
        --compile-only --emit-plan "$OUT/$m-b$batch-$precision-$fusion.plan" > /dev/null
    done
  done
done
# What NHWC buys: ResNet-50 AMP in the models' own NCHW, beside the default
# (NHWC) plans above.
for fusion in none paddle; do
  "$BENCH" models/resnet50.mlir --batch 256 --precision amp --fusion $fusion --layout nchw \
    --compile-only --emit-plan "$OUT/resnet50-b256-amp-$fusion-nchw.plan" > /dev/null
done
build/bin/dlc-kernels --paths "$OUT"/*.plan
du -sh "$OUT"
