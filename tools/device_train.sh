#!/bin/bash
# Trains one scene on a GPU machine in one call and prints wall time, it/s, peak accounted and
# driver-reported memory, Gaussians and test PSNR. lego gets the NeRF-synthetic settings (white
# background, its test split); other scenes use data.eval (every 8th image held out).
#   usage: tools/device_train.sh BUNDLE_DIR SCENE ITERATIONS [--set key=value ...]
# BUNDLE_DIR holds clsplat (with lib/ from shared/tools/bundle-libs.sh) and data/SCENE.
#   e.g.   tools/device_train.sh dev_bundle lego 7000
set -u
B=${1:?bundle dir}; SCENE=${2:?scene}; IT=${3:?iterations}; shift 3
extra=()
[ "$SCENE" = lego ] && extra=(--set data.white_background=true)
R=${OUT:-/tmp}
export LD_LIBRARY_PATH=$B/lib
run=/tmp/${SCENE}_$IT
rm -rf "$run"
base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1)
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$R/${SCENE}_smi_$IT.txt" 2>/dev/null &
smi=$!
t0=$(date +%s.%N)
"$B/clsplat" train -c configs/default.json -s "$B/data/$SCENE" -o "$run" --set data.eval=true \
    "${extra[@]}" --set optim.iterations="$IT" --set eval.test_iterations="[$IT]" \
    --set output.save_iterations="[$IT]" "$@" > "$R/${SCENE}_$IT.log" 2>&1
rc=$?
t1=$(date +%s.%N)
kill $smi 2>/dev/null
peak=$(sort -n "$R/${SCENE}_smi_$IT.txt" | tail -1)
cp "$run/metrics.json" "$R/${SCENE}_metrics_$IT.json" 2>/dev/null
cp "$run/memory.json" "$R/${SCENE}_memory_$IT.json" 2>/dev/null
echo "=== $SCENE $IT iterations (exit $rc), process wall $(awk "BEGIN{print $t1 - $t0}") s"
grep -E "^device|kernels:|memory plan|training done|\[eval" "$R/${SCENE}_$IT.log"
tail -3 "$R/${SCENE}_$IT.log" | grep -i error
echo "driver-reported peak: ${peak:-?} MiB (before the run: ${base:-?} MiB)"
grep -o '"total": [0-9]*' "$run/memory.json" | tail -1 | awk '{printf "accounted peak: %.1f MiB\n", $2/1048576}'
