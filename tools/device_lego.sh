#!/bin/bash
# Runs the lego benchmark on a GPU machine in one call and prints wall time, it/s, peak
# accounted and driver-reported memory, Gaussians and test PSNR.
#   usage: tools/device_lego.sh BUNDLE_DIR ITERATIONS [--set key=value ...]
# BUNDLE_DIR holds clsplat (with lib/ from shared/tools/bundle-libs.sh) and data/lego.
set -u
B=${1:?bundle dir}; IT=${2:?iterations}; shift 2
R=${OUT:-/tmp}
export LD_LIBRARY_PATH=$B/lib
run=/tmp/lego_$IT
rm -rf "$run"
base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1)
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$R/smi_$IT.txt" 2>/dev/null &
smi=$!
t0=$(date +%s.%N)
"$B/clsplat" train -c configs/default.json -s "$B/data/lego" -o "$run" --set data.eval=true \
    --set data.white_background=true --set optim.iterations="$IT" --set eval.test_iterations="[$IT]" \
    --set output.save_iterations="[$IT]" "$@" > "$R/lego_$IT.log" 2>&1
rc=$?
t1=$(date +%s.%N)
kill $smi 2>/dev/null
peak=$(sort -n "$R/smi_$IT.txt" | tail -1)
cp "$run/metrics.json" "$R/metrics_$IT.json" 2>/dev/null
cp "$run/memory.json" "$R/memory_$IT.json" 2>/dev/null
echo "=== lego $IT iterations (exit $rc), process wall $(awk "BEGIN{print $t1 - $t0}") s"
grep -E "^device|kernels:|memory plan|training done|\[eval" "$R/lego_$IT.log"
tail -3 "$R/lego_$IT.log" | grep -i error
echo "driver-reported peak: ${peak:-?} MiB (before the run: ${base:-?} MiB)"
grep -o '"total": [0-9]*' "$run/memory.json" | tail -1 | awk '{printf "accounted peak: %.1f MiB\n", $2/1048576}'
