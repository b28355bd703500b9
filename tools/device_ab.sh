#!/bin/bash
# A/B of two clsplat bundles on one scene, on the GPU machine in one call: RUNS runs of each,
# alternating A, B, A, B (so drift between leases or over time hits both alike), each through
# tools/device_train.sh, then one table: loop seconds, test PSNR, Gaussians, accounted and
# driver peak per run, and the medians.
#   usage: tools/device_ab.sh BUNDLE_A BUNDLE_B SCENE ITERATIONS RUNS [--set key=value ...]
# Each bundle holds clsplat, lib/ (shared/tools/bundle-libs.sh) and data/SCENE. Logs go to $OUT.
set -u
A=${1:?bundle A}; B=${2:?bundle B}; SCENE=${3:?scene}; IT=${4:?iterations}; RUNS=${5:?runs}; shift 5
R=${OUT:-/tmp}
rows=()
for i in $(seq "$RUNS"); do
  for side in A B; do
    bundle=$A; [ $side = B ] && bundle=$B
    out=$(TAG=${side}$i OUT=$R bash "$(dirname "$0")/device_train.sh" "$bundle" "$SCENE" "$IT" "$@" 2>&1)
    echo "$out" >> "$R/ab_${SCENE}_${IT}.log"
    loop=$(echo "$out" | sed -n 's/.*iterations in \([0-9.]*\) s.*/\1/p' | tail -1)
    psnr=$(echo "$out" | sed -n 's/.*\] test:.*PSNR \([0-9.]*\),.*/\1/p' | tail -1)
    gs=$(echo "$out" | sed -n 's/^training done:.*s, \([0-9]*\) Gaussians.*/\1/p' | tail -1)
    acc=$(echo "$out" | sed -n 's/^accounted peak: \([0-9.]*\) MiB/\1/p' | tail -1)
    drv=$(echo "$out" | sed -n 's/^driver-reported peak: \([0-9]*\) MiB.*/\1/p' | tail -1)
    rows+=("$side $i ${loop:-?} ${psnr:-?} ${gs:-?} ${acc:-?} ${drv:-?}")
  done
done
printf '%-4s %-4s %8s %8s %10s %10s %10s\n' side run loop_s psnr gaussians acc_MiB drv_MiB
for r in "${rows[@]}"; do printf '%-4s %-4s %8s %8s %10s %10s %10s\n' $r; done
for side in A B; do
  printf '%s median loop %s s, PSNR %s\n' $side \
    "$(printf '%s\n' "${rows[@]}" | awk -v s=$side '$1==s{print $3}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')" \
    "$(printf '%s\n' "${rows[@]}" | awk -v s=$side '$1==s{print $4}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')"
done
