#!/bin/bash
# MCMC against the default strategy on one scene, on a GPU machine (tools/device_train.sh per run).
#   usage: tools/device_mcmc.sh BUNDLE_DIR SCENE ITERATIONS "RUNS..." [LPIPS_WEIGHTS]
#   RUNS: default (graphdeco's strategy) | same (MCMC capped at the default run's final count,
#   or at $N_DEFAULT when that run is not in this call) | a number (MCMC with that cap)
#   e.g.   tools/device_mcmc.sh dev_bundle south_building 30000 "default same 1000000 3000000"
set -u
B=${1:?bundle dir}; SCENE=${2:?scene}; IT=${3:?iterations}; RUNS=${4:?runs}; W=${5:-}
L=(); [ -n "$W" ] && L=(--set eval.lpips_weights="$W")
n=${N_DEFAULT:-0}
for r in $RUNS; do
    if [ "$r" = default ]; then
        TAG=default bash tools/device_train.sh "$B" "$SCENE" "$IT" "${L[@]}"
        n=$(grep -o "training done: [0-9]* iterations in [0-9.]* s, [0-9]*" "${OUT:-/tmp}/${SCENE}_${IT}_default.log" |
            awk '{print $NF}')
        continue
    fi
    cap=$r; [ "$r" = same ] && cap=$n
    TAG=mcmc$cap bash tools/device_train.sh "$B" "$SCENE" "$IT" "${L[@]}" -c configs/mcmc.json --set densify.cap_max="$cap"
    grep -E "^mcmc:" "${OUT:-/tmp}/${SCENE}_${IT}_mcmc$cap.log"
done
