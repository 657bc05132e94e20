#!/bin/sh
# Leave-one-model-out on the first H100 run (one code revision, both models,
# fp32 and amp, none / paddle / xla): fit the cost model on ResNet-50's
# profiles alone and predict BERT-base's measured step times, then the
# other way round. Prints both tables as docs/CostModel.md shows them, each
# after the parameters its fit chose and its in-sample worst error.
#   bench/calibration/leave_one_out.sh [DLC_BENCH]
set -eu
cd "$(dirname "$0")"
BENCH=${1:-../../build/bin/dlc-bench}
RUN=h100-2026-11-23

# calibrate's --check step table as a markdown table; $1 heads the first
# column (the held-out model).
table() {
  awk -v head="$1" '
    / = / && !check { params = params (params ? ", " : "") $1 " " $3 }
    /^worst error/ && !check { print "fitted: " params; print "in sample: " $0 }
    /^step time, --check/ {
      check = 1
      print ""
      print "| " head " | measured ms | predicted ms | error |"
      print "| --- | --- | --- | --- |"
      next
    }
    check && /^profile/ { next }
    check && /^worst error/ { check = 0; next }
    check {
      error = $NF; sub(/%$/, "", error)
      printf "| %s %s | %s | %s | %s%.1f%% |\n", $2, $3, $(NF-2), $(NF-1), (error >= 0 ? "+" : ""), error
    }'
}

echo "Calibrated on ResNet-50 alone, BERT-base predicted:"
echo
"$BENCH" calibrate $RUN/resnet50-*.json --check $RUN/bert_base-*.json | table "BERT-base b32"
echo
echo "Calibrated on BERT-base alone, ResNet-50 predicted:"
echo
"$BENCH" calibrate $RUN/bert_base-*.json --check $RUN/resnet50-*.json | table "ResNet-50 b256"
