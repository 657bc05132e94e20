#!/usr/bin/env bash
# Everything issue 23 asks of a lent GPU machine, in calls of under 10
# minutes each, from binaries and plans built on a machine without a GPU.
#
#   build$ bench/gpu/run_all.sh pack          binaries, oneDNN and the plans
#                                             into .gpu/ (git ignores it;
#                                             carry it: about 20 MB)
#   gpu$   bench/gpu/run_all.sh 1 RESULTS     (a) the GPU unit tests,
#            dlc-bandwidth, the whole-step checks of every model in fp32
#            and half precision (reference backend against the GPU), the
#            ResNet-50 float64 check; then dlc's sweep, each plan timed with
#            the CUDA graph and without, and profiled
#   gpu$   bench/gpu/run_all.sh 2 RESULTS     (b, c) each workload's dlc
#            plans timed beside the peers on the same workload, in the same
#            call: PyTorch eager fp32, channels-last AMP, torch.compile AMP
#            and JAX xla-amp; RESULTS/table.md gives dlc's best strategy
#            over the best peer
#   gpu$   bench/gpu/run_all.sh sweep RESULTS the cost model's device sweep
#            alone (bench/calibration/sweep/, about a minute)
#   gpu$   bench/gpu/run_all.sh 3 RESULTS     call 2 again after changes
#            (WORKLOADS picks, e.g. WORKLOADS="bert_base:32:amp")
#   gpu$   bench/gpu/run_all.sh lease RESULTS  a lease of 15 minutes (the
#            device tool's since 2026-11-26, start and idle included): the
#            GPU unit tests and dlc-bandwidth (100 s at most), the cost
#            model's device sweep (60 s at most: RESULTS/calibration/ gets
#            what `dlc-bench calibrate` reads, launch by launch), then call 2
#            on the AMP workloads (330 s), profiling every paddle and xla
#            plan, in one call of about 9 minutes; then, on the still-warm machine,
#            `PHASES=compile DLC_CALL_SECONDS=150 run_all.sh 3 RESULTS` or
#            the checks (DLC_PART=checks run_gpu_tests.sh) with what is left
#
# PHASES (calls 2, 3, lease): which of dlc, jax, compile run, in that
# order (default all three; torch.compile compiles for 1-2 minutes a model).
# Each call stops starting new work DLC_CALL_SECONDS (default 480) after it
# began, lists what it skipped and exits 3; every step has a time limit that
# ends by then + 60 s, so the call returns inside the device tool's 10
# minutes with its figures. Where $OUT is set (the device tool's folder),
# RESULTS is packed into $OUT/call<N>.tgz on exit, whatever happened; the
# checks' step dumps (hundreds of MB) stay in /tmp/dlc-dumps. The call:
#   device run, carry [".gpu"]:  bash bench/gpu/run_all.sh 1 /tmp/r
# Lessons of 2026-11-25 (two 10-minute calls lost): never let a call outrun
# the tool's limit (its $OUT comes back empty), and never pack dumps. Of
# 2026-11-26 (15 minutes, two calls): `lease` took 488 s and reached every dlc
# plan, eager and JAX peer but no torch.compile; a second call of 246 s ran
# 140 s of checks and ResNet-50's torch.compile, leaving 125 s, too little
# to start a machine again.
set -uo pipefail
cd "$(dirname "$0")/../.."
CALL=${1:?usage: bench/gpu/run_all.sh pack | 1 RESULTS | 2 RESULTS | 3 RESULTS | lease RESULTS | sweep RESULTS}
case $CALL in
  pack|1|2|3|lease|sweep) ;;
  *) echo "run_all.sh: unknown call '$CALL' (pack, 1, 2, 3, lease or sweep)" >&2; exit 2 ;;
esac
# DLC_GPU_DIR: where pack put the binaries and plans (default .gpu; the
# plumbing test points it at a stand-in dlc-run on the CPU backend).
G=${DLC_GPU_DIR:-.gpu}

if [ "$CALL" = pack ]; then
  set -e
  rm -rf $G/bin $G/lib $G/bin.tar.gz && mkdir -p $G/bin $G/lib
  cp build/bin/{DLCRuntimeTests,dlc-run,dlc-bandwidth,dlc-kernels} $G/bin/
  # The GPU machine's image has no oneDNN (dlc-run's CPU backends link it).
  for lib in $(ldd build/bin/dlc-run | awk '/libdnnl|libOpenCL/ {print $3}'); do
    cp -L "$lib" $G/lib/
  done
  tar czf $G/bin.tar.gz -C $G bin lib && rm -rf $G/bin $G/lib
  bash bench/gpu/make_plans.sh $G/plans
  git rev-parse HEAD > $G/revision
  du -sh $G
  exit 0
fi

RESULTS=${2:?usage: bench/gpu/run_all.sh $CALL RESULTS}
mkdir -p "$RESULTS"
export DLC_DEADLINE=$(( $(date +%s) + ${DLC_CALL_SECONDS:-480} ))
export DLC_DUMPS=/tmp/dlc-dumps
pack() {
  [ -n "${OUT:-}" ] && [ -d "$OUT" ] &&
    tar czf "$OUT/call$CALL.tgz" --exclude='*.dump' -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"
}
trap pack EXIT
# The cost model's device sweep (bench/calibration/sweep/): each plan's step
# timed with the CUDA graph, then profiled launch by launch, both turned
# into RESULTS/calibration/sweep-NAME.json for `dlc-bench calibrate`.
device_sweep() { # SECONDS; false when a configuration failed or was skipped
  local stop=$(( $(date +%s) + $1 )) name model batch precision layout failed=0
  mkdir -p "$RESULTS/calibration"
  while read -r name model batch precision layout; do
    [ "$(date +%s)" -ge $stop ] && { echo "skipped for want of time: sweep-$name" | tee -a "$RESULTS/skipped.txt"; failed=1; continue; }
    local base=$RESULTS/sweep-$name
    timeout -k 5 60 $G/bin/dlc-run $G/plans/sweep-$name.plan --backend cuda --warmup 3 --steps 10 \
      --repeats 1 --format json -o $base.json > /dev/null &&
    timeout -k 5 60 $G/bin/dlc-run $G/plans/sweep-$name.plan --backend cuda --warmup 1 --steps 2 \
      --repeats 1 --gpu "${DLC_GPU:-H100-SXM}" --profile --format json -o $base.profile.json \
      2> $base.profile.txt > /dev/null &&
    python3 bench/calibration/profile_to_json.py $base.profile.txt $base.json $layout \
      "$RESULTS/calibration/sweep-$name.json" --launches $base.profile.json \
      --model-file bench/calibration/sweep/$model.mlir &&
    echo "sweep-$name: step $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step_ms'])" \
      "$RESULTS/calibration/sweep-$name.json") ms" || { echo "sweep-$name failed"; failed=1; }
  done < <(grep -v '^#' bench/calibration/sweep/sweep.txt)
  return $failed
}
# A step's time limit: until the deadline and a minute more.
limit() { local left=$(( DLC_DEADLINE + 60 - $(date +%s) )); echo $(( left > 10 ? left : 10 )); }
[ -d $G/bin ] || tar xzf $G/bin.tar.gz -C $G || exit 1
export DLC_BIN=$G/bin LD_LIBRARY_PATH="$(cd "$G" && pwd)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Both sides' kernel caches start empty on a bare machine: NVRTC's compile
# is part of a plan's first run, never of its timed steps.
{
  echo "dlc revision $(cat $G/revision 2>/dev/null)  call $CALL  $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, jax; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "jax", jax.__version__)' 2>&1 | tail -1
  nproc
} | tee "$RESULTS/environment-call$CALL.txt"

case $CALL in
1)
  # The checks get the call's first DLC_CHECK_SECONDS (default 250), the
  # sweep's profiles the rest.
  check_deadline=$(( $(date +%s) + ${DLC_CHECK_SECONDS:-250} ))
  timeout -k 5 $(( check_deadline + 60 - $(date +%s) )) env DLC_DEADLINE=$check_deadline \
    DLC_PART="tests checks" bash bench/gpu/run_gpu_tests.sh $G/plans "$RESULTS" 2>&1 |
    tee "$RESULTS/checks.txt"
  s1=${PIPESTATUS[0]}
  device_sweep 90
  # Only the sweep's plans are profiled; the checks above left theirs.
  mkdir -p /tmp/sweep-plans && cp $G/plans/*-b[0-9]*.plan $G/plans/nchw-*.plan $G/plans/sweep.txt \
    /tmp/sweep-plans/ 2>/dev/null
  timeout -k 5 $(limit) env DLC_PART=bench bash bench/gpu/run_gpu_tests.sh /tmp/sweep-plans "$RESULTS" 2>&1 |
    tee "$RESULTS/sweep.txt"
  s2=${PIPESTATUS[0]}
  echo "run_all.sh 1: checks exit $s1, sweep exit $s2"
  [ $s1 = 0 ] && [ $s2 = 0 ]
  ;;
lease)
  # The unit tests first: a failing one says more about the figures after.
  timeout -k 5 100 env DLC_PART=tests bash bench/gpu/run_gpu_tests.sh $G/plans "$RESULTS" \
    > "$RESULTS/tests.txt" 2>&1
  echo "unit tests: exit $? ($(grep -hE '^\[  (PASSED|FAILED) ' "$RESULTS/gtest.log" | tr '\n' ' '))"
  tail -3 "$RESULTS/bandwidth.txt" 2>/dev/null
  device_sweep 60
  # Call 2's deadline counts from its own start, after the tests.
  WORKLOADS=${WORKLOADS:-resnet50:256:amp bert_base:32:amp gpt2:8:amp-bf16}
  PROFILE=${PROFILE:-$(for s in $WORKLOADS; do IFS=: read -r m b p <<< "$s"
    echo -n "$m-b$b-$p-paddle $m-b$b-$p-xla "; done)}
  trap - EXIT # call 2 packs RESULTS, the tests' logs with it
  # 100 + 60 + 330 + 60 s of slack: inside the tool's 600.
  WORKLOADS=$WORKLOADS PROFILE=$PROFILE DLC_CALL_SECONDS=${DLC_CALL_SECONDS:-330} \
    exec bash "$PWD/bench/gpu/run_all.sh" 2 "$RESULTS"
  ;;
2|3)
  status=0
  BENCH=$G/bin/dlc-run
  late() { [ "$(date +%s)" -ge "$DLC_DEADLINE" ] && { echo "skipped for want of time: $1" | tee -a "$RESULTS/skipped.txt"; }; }
  peer() { # NAME TOOL MODEL BATCH MODE
    late "$1" && return 0
    echo "== $1"
    # A peer that compiles for minutes must not cost the call its figures.
    local t=$(limit); [ $t -gt ${PEER_SECONDS:-150} ] && t=${PEER_SECONDS:-150}
    timeout -k 5 $t python3 bench/peers/$2 "$3" --batch "$4" --mode "$5" --device cuda \
      --warmup ${PEER_WARMUP:-5} --steps ${PEER_STEPS:-20} --repeats ${PEER_REPEATS:-3} \
      -o "$RESULTS/$1.json" 2> >(tail -3 >&2) || { echo "peer $1 failed or timed out"; status=1; }
  }
  # The issue's headline workloads first (a call that runs short of time
  # loses fp32), and within them dlc and the eager peer before the peers
  # that compile for minutes.
  specs=${WORKLOADS:-resnet50:256:amp bert_base:32:amp gpt2:8:amp-bf16 resnet50:256:fp32 bert_base:32:fp32}
  sdpa_twins=""
  for phase in ${PHASES:-dlc jax compile}; do
  for spec in $specs; do
    IFS=: read -r m batch precision <<< "$spec"
    [ $phase = dlc ] && for fusion in none paddle xla; do
      name=$m-b$batch-$precision-$fusion
      [ -e $G/plans/$name.plan ] || continue
      late "$name" && continue
      echo "== $name"
      timeout -k 5 $(limit) $BENCH $G/plans/$name.plan --backend cuda --warmup 3 --steps 10 --repeats 3 \
        --gpu "${DLC_GPU:-H100-SXM}" --format json -o "$RESULTS/$name.json" > /dev/null || status=1
      # PROFILE: plans also profiled in this call (call 1's sweep may not
      # have reached them).
      if [[ " ${PROFILE:-} " == *" $name "* ]]; then
        # --gpu: the cost model's prediction beside each kind (the run checks it).
        timeout -k 5 $(limit) $BENCH $G/plans/$name.plan --backend cuda --warmup 1 --steps 2 --repeats 1 \
          --gpu "${DLC_GPU:-H100-SXM}" --profile --format json -o "$RESULTS/$name.profile.json" \
          2> "$RESULTS/$name.profile.txt" > /dev/null || status=1
        head -12 "$RESULTS/$name.profile.txt"; grep -h '^cost model' "$RESULTS/$name.profile.txt"
      fi
      # The attention fusion on the GPU, in the same call: the xla plan with
      # the SIMT flash kernels instead of the tensor-core ones, and the xla
      # plan without the fusion (ratio_table.py's second table).
      if [ $fusion = xla ] && [ -e $G/plans/$name-noattn.plan ] && ! late "$name attention"; then
        echo "== $name: SIMT attention, and no attention fusion"
        timeout -k 5 $(limit) env DLC_CUDA_ATTENTION=simt $BENCH $G/plans/$name.plan --backend cuda \
          --warmup 3 --steps 10 --repeats 3 --format json -o "$RESULTS/$name.simt.json" > /dev/null || status=1
        timeout -k 5 $(limit) $BENCH $G/plans/$name-noattn.plan --backend cuda --warmup 3 --steps 10 \
          --repeats 3 --format json -o "$RESULTS/$name.noattn.json" > /dev/null || status=1
      fi
      # The padded rows of the logits (docs/Layout.md), same call: the xla
      # plan with dense rows (ratio_table.py's last columns).
      if [ $fusion = xla ] && [ -e $G/plans/$name-denserows.plan ] && ! late "$name dense rows"; then
        echo "== $name: dense rows"
        timeout -k 5 $(limit) $BENCH $G/plans/$name-denserows.plan --backend cuda --warmup 3 --steps 10 \
          --repeats 3 --format json -o "$RESULTS/$name.denserows.json" > /dev/null || status=1
      fi
      # cuDNN's SDPA against the flash kernels: after every peer (below).
      [ $fusion = xla ] && [ -e $G/plans/$name-nodropout.plan ] && sdpa_twins+=" $name"
      # What `dlc-bench calibrate` reads: the step, and where profiled,
      # every launch (copy RESULTS/calibration/ to bench/calibration/h100-DATE/).
      mkdir -p "$RESULTS/calibration"
      if [ -s "$RESULTS/$name.profile.json" ]; then
        python3 bench/calibration/profile_to_json.py "$RESULTS/$name.profile.txt" "$RESULTS/$name.json" - \
          "$RESULTS/calibration/$name.json" --launches "$RESULTS/$name.profile.json" || status=1
      elif [ -s "$RESULTS/$name.json" ]; then
        python3 bench/calibration/profile_to_json.py - "$RESULTS/$name.json" - \
          "$RESULTS/calibration/$name.json" || status=1
      fi
    done
    case $phase:$precision in
      dlc:fp32) peer torch-$m-eager-$batch torch_peer.py $m $batch eager ;;
      dlc:amp) peer torch-$m-channels-last-amp-$batch torch_peer.py $m $batch channels-last-amp ;;
      dlc:amp-bf16)
        peer torch-$m-channels-last-amp-bf16-$batch torch_peer.py $m $batch channels-last-amp-bf16 ;;
      jax:amp|jax:amp-bf16) peer jax-$m-xla-amp-$batch jax_peer.py $m $batch xla-amp ;;
      compile:amp) peer torch-$m-compile-amp-$batch torch_peer.py $m $batch compile-amp ;;
      compile:amp-bf16)
        peer torch-$m-compile-amp-bf16-$batch torch_peer.py $m $batch compile-amp-bf16 ;;
    esac
  done
  done
  # cuDNN's SDPA against the flash kernels, same call, with what time the
  # peers left: the dropout-free twin of the xla plan on each
  # (ratio_table.py's SDPA columns).
  for name in $sdpa_twins; do
    late "$name SDPA" && continue
    echo "== $name without dropout: cuDNN's SDPA, and the flash kernels"
    # stderr kept: a graph cuDNN refused says so in a "cuda:" line.
    timeout -k 5 $(limit) $BENCH $G/plans/$name-nodropout.plan --backend cuda --warmup 3 --steps 10 \
      --repeats 3 --format json -o "$RESULTS/$name.sdpa.json" 2> "$RESULTS/$name.sdpa.txt" > /dev/null ||
      status=1
    grep -h '^cuda:' "$RESULTS/$name.sdpa.txt" || true
    timeout -k 5 $(limit) env DLC_CUDA_ATTENTION=flash $BENCH $G/plans/$name-nodropout.plan \
      --backend cuda --warmup 3 --steps 10 --repeats 3 --format json \
      -o "$RESULTS/$name.flash.json" > /dev/null || status=1
  done
  python3 bench/gpu/ratio_table.py "$RESULTS" --gpu-peak-tflops "${DLC_PEAK_TFLOPS:-989.4}" |
    tee "$RESULTS/table.md"
  [ -e "$RESULTS/skipped.txt" ] && [ $status = 0 ] && status=3
  exit $status
  ;;
sweep) device_sweep ${DLC_SWEEP_SECONDS:-90} ;;
esac
