#!/bin/sh
# Leave-one-model-out on the first H100 run (one code revision, both models,
# fp32 and amp, none / paddle / xla): fit the cost model on ResNet-50's
# profiles alone and predict BERT-base's measured step times, then the
# other way round. Prints both tables (docs/CostModel.md quotes them).
#   bench/calibration/leave_one_out.sh [DLC_BENCH]
set -eu
cd "$(dirname "$0")"
BENCH=${1:-../../build/bin/dlc-bench}
RUN=h100-2026-11-23
echo "== calibrated on ResNet-50 alone, BERT-base predicted"
"$BENCH" calibrate $RUN/resnet50-*.json --check $RUN/bert_base-*.json
echo
echo "== calibrated on BERT-base alone, ResNet-50 predicted"
"$BENCH" calibrate $RUN/bert_base-*.json --check $RUN/resnet50-*.json
