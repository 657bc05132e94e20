#!/usr/bin/env bash
# A/B: host sums in float (old) vs double (new), interleaved, same threads.
cd /work/wt/integ
export DLC_CPU_THREADS=${THREADS:-2} OMP_NUM_THREADS=${THREADS:-2}
OUT=/tmp/cov/ab; mkdir -p $OUT
for round in 0 1 2; do
 for w in mlp:32:1000 small_convnet:32:100 tiny_transformer:32:1000 bert_base:4:5; do
  IFS=: read m b s <<< "$w"
  for v in old new; do
   /tmp/cov/dlc-bench-$v models/$m.mlir --batch $b --fusion xla --warmup 3 --steps $s --repeats 3 --format json > $OUT/$m-$v-$round.json 2>$OUT/$m-$v-$round.err || echo "fail $m $v"
  done
 done
done
