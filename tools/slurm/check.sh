#!/bin/sh
# make check-slurm: a real single-node Slurm on this machine (local-cluster.sh) runs a
# three-job array of tiny CPU jobs through clsplat-array.sbatch. One task is requeued while it
# trains (as preemption does): it must stop with a checkpoint and resume from it. Then
# `clsplat batch --collect` must report all three done. Then block training (#37): a COLMAP
# demo scene cut into two blocks by `clsplat partition`, whose job list the same array script
# runs unchanged, merged by `clsplat merge` and evaluated. Stops the daemons it started.
#   usage: tools/slurm/check.sh [BUILD]   (BUILD holds clsplat and gen_demo; default build)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
T=$(mktemp -d /tmp/clsplat-slurm.XXXXXX)
export SLURM_CONF="$T/cluster/slurm.conf" CLSPLAT="$PWD/$BUILD/clsplat" XDG_CACHE_HOME="$T/cache"
fail() {
    echo "check-slurm: FAIL: $*" >&2
    for f in "$T"/clsplat-*.out "$T/cluster/log/slurmctld.log" "$T/cluster/log/slurmd.log"; do
        [ -f "$f" ] && { echo "---- $f (last 25 lines)" >&2; tail -25 "$f" >&2; }
    done
    exit 1
}
ok=0
# the cluster is stopped either way; the folder (this script's own) is removed unless a check failed
cleanup() { sh tools/slurm/local-cluster.sh stop "$T/cluster" >/dev/null 2>&1 || true; [ "$ok" = 1 ] && rm -rf "$T"; }
trap cleanup EXIT
sh tools/slurm/local-cluster.sh start "$T/cluster"
"$BUILD/gen_demo" "$T/scene" 40 30 >/dev/null
cat > "$T/jobs.json" <<JOBS
{"set": ["device.tune=off", "optim.random_init_points=500", "densify.from=2", "log.interval=10", "data.eval=true",
         "eval.test_iterations=[]", "output.save_iterations=[]", "output.checkpoint_interval=100", "densify.until=200"],
 "jobs": [{"name": "short1", "data": "scene", "set": ["optim.iterations=30"]},
          {"name": "short2", "data": "scene", "set": ["optim.iterations=40"]},
          {"name": "long", "data": "scene", "set": ["optim.iterations=1200"]}]}
JOBS
# the GPU, CPU and memory requests of the script are for GPU clusters: this node has 2 CPUs and no GPU
job=$(cd "$T" && sbatch --parsable --array=0-2 --gres=none --cpus-per-task=1 --mem=1G --time=10:00 \
      "$OLDPWD/tools/slurm/clsplat-array.sbatch" jobs.json root)
job=${job%%;*}
echo "check-slurm: submitted array job $job"
i=0
until [ -f "$T/root/long/train_log.jsonl" ] && grep -q '"iteration": 3[0-9][0-9],' "$T/root/long/train_log.jsonl"; do
    i=$((i + 1)); [ $i -lt 600 ] || fail "task 2 never reached iteration 300"; sleep 0.2
done
scontrol requeue "${job}_2"
echo "check-slurm: requeued task 2 at iteration $(tail -1 "$T/root/long/train_log.jsonl" | sed 's/.*"iteration": \([0-9]*\).*/\1/')"
# Slurm holds a requeued job back until its old credential expires (cred_expire, 10 s on this
# cluster); starting it earlier makes slurmd refuse it ("Job credential revoked")
i=0
# a failed squeue (slurmctld busy) is not an empty queue
while q=$(squeue -h -j "$job" 2>/dev/null) || q=unknown; [ -n "$q" ]; do
    i=$((i + 1)); [ $i -lt 1500 ] || { squeue -j "$job"; fail "the array did not finish in 5 minutes"; }; sleep 0.2
done
"$CLSPLAT" batch "$T/jobs.json" -o "$T/root" --collect > "$T/collect.log" 2>&1 || { cat "$T/collect.log"; fail "--collect: not all done"; }
cat "$T/collect.log"
grep -q "resumed from" "$T/root/long/train.log" || fail "the requeued task did not resume from its checkpoint"
n=$(grep -c ',done,' "$T/root/summary.csv") && [ "$n" = 3 ] || fail "summary.csv has $n done jobs"
grep -q "stopped with a checkpoint\|interrupted: checkpoint saved" "$T/root/long/train.log" "$T"/clsplat-*_2.out 2>/dev/null ||
    fail "the requeued task did not save a checkpoint when stopped"
# block training: partition -> the array over PLAN/jobs.json -> merge
"$BUILD/gen_demo" "$T/bscene" 40 30 --format colmap >/dev/null
"$CLSPLAT" partition -s "$T/bscene" -o "$T/plan" --blocks 2 --eval --gaussians 2000 --set device.tune=off \
    --set optim.iterations=150 --set densify.from=50 --set densify.interval=50 --set log.interval=50 \
    --set eval.test_iterations=[150] --set output.save_iterations=[150] > "$T/partition.log" 2>&1 ||
    { cat "$T/partition.log"; fail "partition"; }
job=$(cd "$T" && sbatch --parsable --array=0-1 --gres=none --cpus-per-task=1 --mem=1G --time=10:00 \
      "$OLDPWD/tools/slurm/clsplat-array.sbatch" plan/jobs.json broot)
job=${job%%;*}
echo "check-slurm: submitted the block array job $job"
i=0
while q=$(squeue -h -j "$job" 2>/dev/null) || q=unknown; [ -n "$q" ]; do
    i=$((i + 1)); [ $i -lt 1500 ] || { squeue -j "$job"; fail "the block array did not finish in 5 minutes"; }; sleep 0.2
done
for b in 0 1; do
    [ -f "$T/broot/block_$b/point_cloud/iteration_150/point_cloud.ply" ] || fail "block_$b has no model"
done
"$CLSPLAT" merge "$T/plan" -m "$T/broot" -o "$T/merged" > "$T/merge.log" 2>&1 || { cat "$T/merge.log"; fail "merge"; }
grep -E "merged|\[eval" "$T/merge.log"
grep -q '"psnr_border"' "$T/merged/metrics.json" || fail "the merged model was not evaluated by view"
echo "check-slurm: ok (3 array tasks done, task 2 requeued and resumed; 2 blocks trained by the array and merged)"
ok=1
