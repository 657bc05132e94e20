#!/usr/bin/env bash
# Compiles, on the build machine (MLIR is here, not on the GPU machine), the
# plans bench/gpu/run_all.sh runs. Plans hold no weights, so the directory
# is small enough to carry.
#   check-*.plan     one whole step on the reference backend and on the GPU,
#                    compared (run_gpu_tests.sh's "checks"): every model in
#                    fp32 at a batch the CPU steps through in seconds, and in
#                    half precision (amp; GPT-2 in amp-bf16)
#   <model>-b<batch>-<precision>-<fusion>.plan
#                    issue 23's sweep: ResNet-50 batch 256 and BERT-base
#                    batch 32 in fp32 and amp, GPT-2 small batch 8 (sequence
#                    1024) in amp-bf16, each under none, paddle and xla;
#                    the half-precision BERT-base and GPT-2 also under xla
#                    --disable-fusion=attention (*-xla-noattn.plan) and under
#                    xla with dense rows (--pad-rows=false: *-xla-denserows.plan);
#                    GPT-2 also with every dropout rate 0 (*-xla-nodropout.plan),
#                    the attention cuDNN's SDPA takes (docs/CudaBackend.md)
#   sweep-<name>.plan
#                    the cost model's device sweep (bench/calibration/sweep/
#                    sweep.txt): convolutions and GEMMs of no seed model
# Usage: bench/gpu/make_plans.sh [OUT_DIR]                (default: plans)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-plans}
BENCH=build/bin/dlc-bench
mkdir -p "$OUT"
plan() { # NAME MODEL BATCH [dlc-bench options]
  local name=$1 model=$2 batch=$3; shift 3
  "$BENCH" models/$model.mlir --batch "$batch" "$@" --compile-only --emit-plan "$OUT/$name.plan" > /dev/null
}
rm -f "$OUT/checks.txt"
# fp32, every model. The checks run in this order, cheapest first (the
# reference backend is an interpreter: DeepLabV3+ at batch 2 is minutes on
# two cores), so a call that runs short of time loses the dearest.
for spec in mlp:8 small_convnet:8 tiny_transformer:8 tiny_segnet:8 resnet50:2 bert_base:2 \
            vgg16:2 hrnet_w18:2 gpt2:1 deeplabv3p:2; do
  plan check-${spec%%:*} ${spec%%:*} ${spec##*:} --backend cuda
  echo check-${spec%%:*}.plan >> "$OUT/checks.txt"
done
# Half precision. AMP in NHWC (the layout --layout auto picks for half
# precision on CUDA): cuDNN's NHWC convolutions and batch norm, under paddle
# its fused batch norm + relu.
for m in small_convnet tiny_segnet; do
  for fusion in paddle xla; do
    plan check-amp-$fusion-$m $m 8 --backend cuda --precision amp --fusion $fusion
  done
done
plan check-amp-xla-mlp mlp 8 --backend cuda --precision amp --fusion xla
plan check-amp-xla-tiny_transformer tiny_transformer 8 --backend cuda --precision amp --fusion xla
# The same without dropout: its attention runs on cuDNN's SDPA, so this is
# the whole-step check of that path against the reference backend.
nodrop=$(mktemp -d)
sed 's/rate = 0\.1 /rate = 0.0 /' models/tiny_transformer.mlir > $nodrop/tiny_transformer_nodropout.mlir
"$BENCH" $nodrop/tiny_transformer_nodropout.mlir --batch 8 --backend cuda --precision amp --fusion xla \
  --compile-only --emit-plan "$OUT/check-amp-xla-tiny_transformer_nodropout.plan" > /dev/null
rm -rf $nodrop
plan check-amp-xla-resnet50 resnet50 2 --backend cuda --precision amp --fusion xla
plan check-amp-xla-bert_base bert_base 2 --backend cuda --precision amp --fusion xla
plan check-bf16-xla-gpt2 gpt2 1 --backend cuda --precision amp-bf16 --fusion xla
# Half-precision checks after fp32's ResNet-50 and BERT-base, before the
# larger fp32 models.
mapfile -t fp32 < "$OUT/checks.txt"
{ printf '%s\n' "${fp32[@]:0:6}"; ls "$OUT" | grep -E '^check-(amp|bf16)-' | grep -v gpt2
  printf '%s\n' "${fp32[@]:6}" check-bf16-xla-gpt2.plan; } > "$OUT/checks.new"
mv "$OUT/checks.new" "$OUT/checks.txt"
# The sweep, in the order a call times it (the issue's headline workloads
# first): sweep.txt.
rm -f "$OUT/sweep.txt"
for spec in resnet50:256:amp bert_base:32:amp gpt2:8:amp-bf16 resnet50:256:fp32 bert_base:32:fp32; do
  IFS=: read -r m batch precision <<< "$spec"
  for fusion in none paddle xla; do
    plan $m-b$batch-$precision-$fusion $m $batch --backend cuda --precision $precision --fusion $fusion
    echo $m-b$batch-$precision-$fusion.plan >> "$OUT/sweep.txt"
  done
  # What the attention fusion buys on the GPU (run_all.sh times it beside
  # the xla plan): the transformers' xla step without it.
  case $m:$precision in
    bert_base:amp|gpt2:amp-bf16)
      plan $m-b$batch-$precision-xla-noattn $m $batch --backend cuda --precision $precision \
        --fusion xla --disable-fusion=attention
      # What the padded rows of the logits buy (docs/Layout.md).
      plan $m-b$batch-$precision-xla-denserows $m $batch --backend cuda --precision $precision \
        --fusion xla --pad-rows=false ;;
  esac
  # cuDNN's SDPA against the flash kernels (run_all.sh times both): GPT-2
  # trained without dropout, as nanoGPT trains it; cuDNN's dropout mask is
  # not train.dropout's, so only dropout-free attention runs on it.
  if [ $m:$precision = gpt2:amp-bf16 ]; then
    nodrop=$(mktemp -d)
    sed 's/rate = 0\.1 /rate = 0.0 /' models/gpt2.mlir > $nodrop/gpt2.mlir
    "$BENCH" $nodrop/gpt2.mlir --batch "$batch" --backend cuda --precision $precision --fusion xla \
      --compile-only --emit-plan "$OUT/$m-b$batch-$precision-xla-nodropout.plan" > /dev/null
    rm -rf $nodrop
  fi
done
# What NHWC buys: ResNet-50 AMP in the model's own NCHW, beside the default
# (NHWC) plan above; profiled with the rest, not part of the comparison.
plan nchw-resnet50-b256-amp-xla resnet50 256 --backend cuda --precision amp --fusion xla --layout nchw
echo nchw-resnet50-b256-amp-xla.plan >> "$OUT/sweep.txt"
build/bin/dlc-kernels --paths "$OUT"/*.plan > "$OUT/paths.txt"
du -sh "$OUT"
# The device sweep (run_all.sh's `lease` and call 1 time and profile it).
grep -v '^#' bench/calibration/sweep/sweep.txt | while read -r name model batch precision layout; do
  "$BENCH" bench/calibration/sweep/$model.mlir --batch "$batch" --backend cuda --precision "$precision" \
    --layout "$layout" --compile-only --emit-plan "$OUT/sweep-$name.plan" > /dev/null
done
