#!/bin/sh
# Leave-one-model-out: fit the cost model on one model's profiles alone and
# predict the others' measured step times. Two splits, each table after the
# parameters its fit chose and its in-sample worst error, in the markdown
# docs/CostModel.md quotes:
# - the first H100 run (h100-2026-11-23: one code revision, ResNet-50 and
#   BERT-base in fp32 and amp, none / paddle / xla): issue 21's test as set;
# - the calibration set h100.json is fitted on (latest.sh: each
#   configuration's latest measurement, ResNet-50 AMP in NHWC and NCHW),
#   GPT-2 small, which neither fit sees, predicted by both;
# - once a GPU run has measured the device sweep (sweep/: GEMMs and
#   convolutions of no seed model, h100-DATE/sweep-*.json), the same two
#   splits again, each fit given the sweep as device data beside its one
#   model, as XLA's GPU cost model takes per-device measured op profiles.
#   bench/calibration/leave_one_out.sh [DLC_BENCH]
set -eu
cd "$(dirname "$0")"
BENCH=${1:-../../build/bin/dlc-bench}
RUN=h100-2026-11-23

# calibrate's --check step table as a markdown table; $1 heads the first
# column (the held-out model); $2 = 1 names each row's model and layout too.
table() {
  awk -v head="$1" -v named="${2:-0}" '
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
      name = named ? $1 " " $2 " " $3 " " $4 " " $5 : $2 " " $3
      printf "| %s | %s | %s | %s%.1f%% |\n", name, $(NF-2), $(NF-1), (error >= 0 ? "+" : ""), error
    }'
}

echo "Calibrated on ResNet-50 alone, BERT-base predicted:"
echo
"$BENCH" calibrate $RUN/*resnet50-*.json --check $RUN/bert_base-*.json | table "BERT-base b32"
echo
echo "Calibrated on BERT-base alone, ResNet-50 predicted:"
echo
"$BENCH" calibrate $RUN/bert_base-*.json --check $RUN/*resnet50-*.json | table "ResNet-50 b256"
echo
echo "Latest of each configuration, calibrated on ResNet-50 alone, BERT-base and GPT-2 predicted:"
echo
"$BENCH" calibrate $(./latest.sh '*resnet50-*') --check $(./latest.sh 'bert_base-*') \
  $(./latest.sh 'gpt2-*') | table "held out" 1
echo
echo "Latest of each configuration, calibrated on BERT-base alone, ResNet-50 and GPT-2 predicted:"
echo
"$BENCH" calibrate $(./latest.sh 'bert_base-*') --check $(./latest.sh '*resnet50-*') \
  $(./latest.sh 'gpt2-*') | table "held out" 1
SWEEP=$(./latest.sh 'sweep-*')
if [ -z "$SWEEP" ]; then
  echo
  echo "No device sweep measured yet (h100-DATE/sweep-*.json: bench/gpu/run_all.sh lease runs it)."
  exit 0
fi
echo
echo "Latest of each configuration and the device sweep, calibrated on ResNet-50 alone, BERT-base and GPT-2 predicted:"
echo
"$BENCH" calibrate $SWEEP $(./latest.sh '*resnet50-*') --check $(./latest.sh 'bert_base-*') \
  $(./latest.sh 'gpt2-*') | table "held out" 1
echo
echo "Latest of each configuration and the device sweep, calibrated on BERT-base alone, ResNet-50 and GPT-2 predicted:"
echo
"$BENCH" calibrate $SWEEP $(./latest.sh 'bert_base-*') --check $(./latest.sh '*resnet50-*') \
  $(./latest.sh 'gpt2-*') | table "held out" 1
