#!/bin/bash
# The batch measurements of README "Batch" (one call on a machine with two GPUs): four jobs
# (lego 7k, south_building 7k, and both with fp16 SH) on both GPUs, on one GPU (--devices
# with the first GPU), and on both with two jobs per GPU allowed (--per-device 2); wall time of each, the
# per-job table, and the driver memory one process holds before allocating anything.
# Each run also samples which GPUs each process holds a context on (nvidia-smi compute apps).
#   usage: [RUNS="two_gpus one_gpu packed"] tools/device_batch.sh BUNDLE_DIR DATA_DIR
#   (BUNDLE_DIR: clsplat and lib/; DATA_DIR: lego and south_building). RUNS picks and orders the
#   runs; a name may repeat (two_gpus one_gpu two_gpus one_gpu for two samples of each).
set -u
B=$(cd "${1:?bundle dir}" && pwd); D=$(cd "${2:?data dir}" && pwd); R=${OUT:-/tmp}
export LD_LIBRARY_PATH=$B/lib XDG_CACHE_HOME=/tmp/cs_cache
C="$B/clsplat"
cat > "$B/jobs4.json" <<JOBS
{"set": ["optim.iterations=7000", "eval.test_iterations=[7000]", "output.save_iterations=[7000]",
         "data.eval=true", "device.tune=off"],
 "jobs": [{"name": "lego", "data": "$D/lego", "set": ["data.white_background=true"]},
          {"name": "south_building", "data": "$D/south_building"},
          {"name": "lego_fp16", "data": "$D/lego", "set": ["data.white_background=true", "memory.sh_dtype=fp16"]},
          {"name": "south_building_fp16", "data": "$D/south_building", "set": ["memory.sh_dtype=fp16"]}]}
JOBS
"$C" devices | grep -E "^[0-9]|global memory" | tee "$R/batch_results.txt"
# warm the kernel cache (as any second run would find it)
"$C" batch -o /tmp/warm --set optim.iterations=50 --set device.tune=off "$D/lego" > /tmp/warm.log 2>&1
grep -h "driver memory" /tmp/warm/lego/train.log | tee -a "$R/batch_results.txt"
run() { # NAME ARGS...
    local name=$1; shift
    rm -rf "/tmp/$name"
    nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 200 > "/tmp/${name}_smi.txt" 2>/dev/null &
    local smi=$!
    nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader -lms 500 > "/tmp/${name}_apps.txt" 2>/dev/null &
    local apps=$! t0=$(date +%s.%N)
    "$C" batch "$B/jobs4.json" -o "/tmp/$name" "$@" > "/tmp/$name.log" 2>&1
    local rc=$? t1=$(date +%s.%N)
    kill $smi $apps 2>/dev/null
    {
        echo "=== $name: clsplat batch jobs4.json $* (exit $rc): wall $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s"
        grep -E "running on|done on|failed" "/tmp/$name.log"
        sed -n '/^job /,$p' "/tmp/$name.log"
        for g in 0 1; do awk -F', ' -v g=$g '$1==g && $2>m {m=$2} END {printf "GPU %d driver-reported peak: %d MiB\n", g, m}' "/tmp/${name}_smi.txt"; done
        sort -u "/tmp/${name}_apps.txt" | awk -F', ' '/^[0-9]/ {n[$1]++; g[$1]=g[$1] " " substr($2,1,12)}
            END {for (p in n) printf "process %s held contexts on %d GPU(s):%s\n", p, n[p], g[p]}' | sort
    } | tee -a "$R/batch_results.txt"
}
# the first GPU's id (P:D) as clsplat devices lists it
ONE=$("$C" devices | awk '/^[0-9]+:[0-9]+ /{id=$1} /type: GPU/{print id; exit}')
k=0
for r in ${RUNS:-two_gpus one_gpu packed}; do
    k=$((k + 1))
    case $r in
    two_gpus) run "two_gpus_$k" ;;
    one_gpu) run "one_gpu_$k" --devices "$ONE" ;;
    packed) run "packed_$k" --per-device 2 ;;
    *) echo "device_batch: unknown run $r" >&2; exit 2 ;;
    esac
done
