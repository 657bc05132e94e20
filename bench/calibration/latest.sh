#!/bin/sh
# The calibration set: every H100 run's profiles (h100-DATE/NAME.json, one per
# configuration), the latest run's where several measured the same NAME. The
# model compiles each configuration at today's code, so a newer measurement of
# a configuration replaces an older one (its kernels may have changed since:
# ResNet-50 AMP NHWC's batch norm took 1.3 s of 1.35 s on 2026-11-25, 17.6 ms
# of 63 ms on 2026-11-26); a configuration measured only once stays.
# Prints the paths relative to this directory, sorted by name; "$1" (a glob
# on NAME, default all) picks a model.
#   bench/calibration/latest.sh ['resnet50-*']
set -eu
cd "$(dirname "$0")"
for run in $(ls -d h100-20*/ | sort -r); do
  for f in $run${1:-*}.json; do
    [ -e "$f" ] && echo "$(basename "$f") ${run%/}"
  done
done | sort -s -k1,1 -u | awk '{ print $2 "/" $1 }'
