#!/bin/bash
# The training modes side by side on one scene, on a GPU machine in one call, interleaved so that
# drift hits each alike: d = the default 30k, m = MCMC 30k (cap CAP), f = configs/fast.json,
# F = configs/fast_mcmc.json, q = configs/mcmc_4k.json, each through tools/device_train.sh; one
# line per run (loop seconds, test PSNR / SSIM / LPIPS, Gaussians, process wall, accounted and
# driver peak).
#   usage: [CAP=300000] [BUDGET=N] [FCAP=N] tools/device_modes.sh BUNDLE_DIR SCENE "ORDER" [--set key=value ...]
# (BUDGET: fast.json's densify.budget, FCAP: fast_mcmc.json's densify.cap_max; unset: the configs' own)
#   e.g.   tools/device_modes.sh dev_bundle fox "d F m d F m d F" -r 2 --set eval.lpips_weights=W
# (the fox table of 2026-11-27 in the README). BUNDLE_DIR holds clsplat, lib/ and data/SCENE.
set -u
B=${1:?bundle dir}; S=${2:?scene}; ORDER=${3:?order}; shift 3
R=${OUT:-/tmp}
declare -A n=()
for o in $ORDER; do
  case $o in
    d) it=30000; a=() ;;
    m) it=30000; a=(-c configs/mcmc.json --set densify.cap_max="${CAP:-300000}") ;;
    f) it=12500; a=(-c configs/fast.json ${BUDGET:+--set densify.budget=$BUDGET}) ;;
    F) it=12500; a=(-c configs/fast_mcmc.json ${FCAP:+--set densify.cap_max=$FCAP}) ;;
    q) it=4000; a=(-c configs/mcmc_4k.json) ;;
    *) echo "device_modes: unknown mode '$o' (d, m, f, F or q)" >&2; exit 2 ;;
  esac
  n[$o]=$(( ${n[$o]:-0} + 1 )); t=$o${n[$o]}
  TAG=$t OUT=$R bash "$(dirname "$0")/device_train.sh" "$B" "$S" "$it" "$@" "${a[@]}" > "$R/$t.txt" 2>&1
  m=$R/${S}_${it}_$t.log
  echo "$t $(grep -o 'iterations in [0-9.]* s, [0-9]* Gaussians' "$m" | tail -1)" \
       "$(grep -o 'PSNR [0-9.]*, SSIM [0-9.]*\(, LPIPS [0-9.]*\)\?' "$m" | tail -1)" \
       "$(grep -o 'process wall [0-9.]* s' "$R/$t.txt")" \
       "$(grep -o 'accounted peak: [0-9.]* MiB' "$R/$t.txt")" \
       "$(grep -o 'driver-reported peak: [0-9]*' "$R/$t.txt") MiB"
done
