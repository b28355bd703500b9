#!/bin/bash
# Trains one scene on a GPU machine in one call and prints wall time, it/s, peak accounted and
# driver-reported memory, Gaussians and test PSNR. lego gets the NeRF-synthetic settings (white
# background, its test split); other scenes use data.eval (every 8th image held out).
#   usage: [TAG=name] tools/device_train.sh BUNDLE_DIR SCENE ITERATIONS [--set key=value ...]
# TAG names the run's files (for several runs of one scene and length in one call).
# BUNDLE_DIR holds clsplat (with lib/ from shared/tools/bundle-libs.sh) and data/SCENE; CLSPLAT
# names another binary (an A/B of two builds in one call).
#   e.g.   tools/device_train.sh dev_bundle lego 7000
set -u
B=${1:?bundle dir}; SCENE=${2:?scene}; IT=${3:?iterations}; shift 3
extra=()
[ "$SCENE" = lego ] && extra=(--set data.white_background=true)
R=${OUT:-/tmp}
export LD_LIBRARY_PATH=$B/lib
N=${SCENE}_$IT${TAG:+_$TAG}
run=/tmp/$N
rm -rf "$run"
base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1)
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$R/${N}_smi.txt" 2>/dev/null &
smi=$!
t0=$(date +%s.%N)
"${CLSPLAT:-$B/clsplat}" train -c configs/default.json -s "$B/data/$SCENE" -o "$run" --set data.eval=true \
    "${extra[@]}" --set optim.iterations="$IT" --set eval.test_iterations="[$IT]" \
    --set output.save_iterations="[$IT]" "$@" > "$R/$N.log" 2>&1
rc=$?
t1=$(date +%s.%N)
kill $smi 2>/dev/null
peak=$(sort -n "$R/${N}_smi.txt" | tail -1)
cp "$run/metrics.json" "$R/${N}_metrics.json" 2>/dev/null
cp "$run/memory.json" "$R/${N}_memory.json" 2>/dev/null
echo "=== $N: $SCENE $IT iterations $* (exit $rc), process wall $(awk "BEGIN{print $t1 - $t0}") s"
grep -E "^device|kernels:|tuning:|driver memory|memory plan|training done|\[eval" "$R/$N.log"
tail -3 "$R/$N.log" | grep -i error
echo "driver-reported peak: ${peak:-?} MiB (before the run: ${base:-?} MiB)"
grep -o '"total": [0-9]*' "$run/memory.json" | tail -1 | awk '{printf "accounted peak: %.1f MiB\n", $2/1048576}'
