#!/bin/bash
# Old (main) and new (integer dropout threshold) binaries, fused and unfused attention, alternating rounds.
cd /work/wt/rows
for round in ${ROUNDS:-0 1}; do
  for bin in old new; do
    B=build/bin/dlc-bench; [ $bin = old ] && B=/tmp/mid/dlc-bench
    for attn in fused unfused; do
      extra=""; [ $attn = unfused ] && extra="--disable-fusion=attention"
      $B models/gpt2.mlir --batch 1 --fusion xla $extra --warmup 1 --steps 2 --repeats 1 --format json -o /tmp/ab/nt-gpt2-$bin-$attn-$round.json > /tmp/ab/nt-gpt2-$bin-$attn-$round.log 2>&1
      python3 -c "import json;d=json.load(open('/tmp/ab/nt-gpt2-$bin-$attn-$round.json'));print('$round $bin $attn', d['step_ms']['median'], d['host_load_percent'])"
    done
  done
done
