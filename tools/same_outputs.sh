#!/bin/sh
# same_outputs: trains the demo scene with deterministic backward sums under four model
# layouts (graphdeco densify, MCMC, mip 3D filter with fp16 SH and fp16 Adam, resume from a
# checkpoint) with binary OLD and binary NEW, and compares the saved PLYs byte for byte.
# A refactor that changes no behaviour must print "same" for every case. The tuning is off
# (16x16 tiles, work-groups of 256) for both: a measured tile size changes how the deterministic
# backward groups its sums, so two binaries tuned on a busy machine can differ in the last bits.
# usage: [CASES="mip_fp16 ..."] tools/same_outputs.sh OLD_CLSPLAT NEW_CLSPLAT SCENE WORK
#        (exit 1 when any differ)
set -eu
OLD=$1 NEW=$2 SCENE=$3 WORK=$4
mkdir -p "$WORK"
common="--set device.tune=off --set optim.deterministic=true --set optim.iterations=400 --set optim.steps_scale=0.04 --set optim.random_init_points=4000 --set data.eval=false"
run() { # BIN NAME ARGS...
    bin=$1 name=$2; shift 2
    "$bin" train -s "$SCENE" -o "$WORK/$name" --force $common "$@" >"$WORK/$name.log" 2>&1 ||
        { echo "same_outputs: $name failed (log $WORK/$name.log)"; tail -5 "$WORK/$name.log"; return 1; }
}
status=0
for case in ${CASES:-graphdeco mcmc mip_fp16 resume}; do
    case $case in
    graphdeco) args="" ;;
    mcmc) args="-c configs/mcmc.json --set densify.cap_max=8000" ;;
    mip_fp16) args="-c configs/mip.json --set memory.sh_dtype=fp16 --set memory.optimizer_dtype=fp16" ;;
    resume) args="--checkpoint_iterations 200" ;;
    esac
    for side in old new; do
        bin=$OLD; [ $side = new ] && bin=$NEW
        # shellcheck disable=SC2086
        run "$bin" "$case.$side" $args || status=1
    done
    if [ $case = resume ]; then
        # the new binary resumes the old binary's checkpoint and must end where the old run did
        "$NEW" train --resume "$WORK/resume.old/checkpoints/chkpnt_200.bin" -o "$WORK/resume.old" --force \
            >"$WORK/resume.cross.log" 2>&1 || { echo "same_outputs: resume of the old checkpoint failed"; tail -5 "$WORK/resume.cross.log"; status=1; }
    fi
    a=$(ls "$WORK/$case.old/point_cloud" | sort | tail -1)
    for f in "$WORK/$case.old/point_cloud/$a/point_cloud.ply"; do
        if cmp -s "$f" "$WORK/$case.new/point_cloud/$a/point_cloud.ply"; then echo "same_outputs: $case: same ($a)"
        else echo "same_outputs: $case: DIFFERENT ($a)"; status=1; fi
    done
done
exit $status
