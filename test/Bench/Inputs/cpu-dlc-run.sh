#!/usr/bin/env bash
# A stand-in for the GPU machine's dlc-run: the same command on the CPU
# backend (--backend cuda -> cpu, --gpu NAME dropped), for testing
# bench/gpu/run_all.sh's plumbing where no GPU is.
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --gpu) shift ;;
    cuda) args+=(cpu) ;;
    *) args+=("$1") ;;
  esac
  shift
done
exec dlc-run "${args[@]}"
