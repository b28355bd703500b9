#!/bin/sh
# #37's synthetic check: a scene larger than a memory budget, trained in blocks within it.
# gen_demo --tiles 4 lays out four copies of the demo scene in a row (240 views); one run with
# no budget is the reference, one run under memory.vram_budget_mb BUDGET stops densifying where
# the budget ends, and the same budget trains each of 4 blocks (partition -> batch -> merge).
# PSNR is against gen_demo's ray-traced ground truth on the held-out views.
#   usage: tools/block_budget.sh BUILD WORK_DIR [BUDGET_MB [ITERATIONS [WIDTH HEIGHT]]]
set -eu
BUILD=$1; W=$2; BUDGET=${3:-24}; IT=${4:-1500}; WD=${5:-96}; HT=${6:-72}
C=$BUILD/clsplat
[ ! -e "$W" ] || { echo "block_budget: $W exists; give a new folder" >&2; exit 2; }
mkdir -p "$W"
"$BUILD/gen_demo" "$W/scene" "$WD" "$HT" --format colmap --tiles 4 >/dev/null
set -- --set optim.iterations="$IT" --set densify.from=200 --set densify.interval=100 \
    --set densify.until=$((IT * 4 / 5)) --set densify.grad_threshold=0.00005 --set device.tune=off \
    --set log.interval=500 --set eval.test_iterations=["$IT"] --set output.save_iterations=["$IT"]
psnr() { grep "^\[eval" "$1" | tail -1 | sed 's/.*PSNR \([0-9.]*\).*, \([0-9]*\) Gaussians.*/\1 dB, \2 Gaussians/'; }
peak() { grep -o 'peak device memory [0-9.]* MiB' "$1" | head -1 | sed 's/peak device memory //'; }
"$C" train -s "$W/scene" -o "$W/one" --eval "$@" > "$W/one.log" 2>&1
echo "one run, no budget:          $(psnr "$W/one.log"), peak $(peak "$W/one.log")"
"$C" train -s "$W/scene" -o "$W/one_budget" --eval "$@" --set memory.vram_budget_mb="$BUDGET" > "$W/one_budget.log" 2>&1
echo "one run, budget $BUDGET MiB:      $(psnr "$W/one_budget.log"), peak $(peak "$W/one_budget.log")"
"$C" partition -s "$W/scene" -o "$W/plan" --blocks 4 --eval "$@" --set memory.vram_budget_mb="$BUDGET" > "$W/partition.log"
"$C" batch "$W/plan/jobs.json" -o "$W/blocks" --per-device 1 > "$W/batch.log" 2>&1
for b in 0 1 2 3; do echo "  block_$b: peak $(peak "$W/blocks/block_$b/train.log"), $(grep -o '[0-9]* Gaussians, peak' "$W/blocks/block_$b/train.log" | head -1 | sed 's/, peak//')"; done
"$C" merge "$W/plan" -m "$W/blocks" -o "$W/merged" > "$W/merge.log" 2>&1
echo "4 blocks, budget $BUDGET MiB each: $(psnr "$W/merge.log")"
