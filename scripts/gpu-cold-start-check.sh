#!/bin/bash
# Issue 30's cold start on the device: `lifegen run --rule R --size 4096x4096 --gens 1 --backend
# gpu` for rules never seen, whole-process wall time, with a fresh search cache and the driver's
# JIT cache removed before each run; OLD (a second binary, optional) alternates with G/lifegen.
#   G=.gpu/sNN OLD=.gpu/sNN/lifegen-old bash scripts/gpu-cold-start-check.sh   (carry G)
set -u
G=${G:-.gpu}
OLD=${OLD:-}
wall() { local s=$(date +%s.%N); "$@" > /dev/null 2>&1; local rc=$?; local e=$(date +%s.%N)
  awk -v s=$s -v e=$e -v rc=$rc 'BEGIN{printf "%.3f%s", e-s, (rc==0?"":" (rc " rc ")")}'; }
nvidia-smi --query-gpu=name --format=csv,noheader
for rule in B36/S125 B1256/S127 B34/S0246 B2357/S1348 B378/S245 B356/S2378; do
  for round in 1 2; do
    for b in $OLD $G/lifegen; do
      rm -rf ~/.nv/ComputeCache; export LIFEGEN_CACHE_DIR=$(mktemp -d)
      echo "$rule round $round $b $(wall $b run --rule $rule --size 4096x4096 --gens 1 --backend gpu) s"
    done
  done
done
