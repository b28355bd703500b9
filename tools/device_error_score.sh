#!/bin/bash
# The error score's ablation (densify.error_views, #35) on a GPU machine: configs/fast.json (or
# the default schedule) with the error score off and with each setting in SETTINGS, one run each
# through tools/device_train.sh, so their PSNR, Gaussians and loop time line up in one call.
#   usage: tools/device_error_score.sh BUNDLE_DIR SCENE ITERATIONS "SETTINGS..." [CONFIG]
#   SETTINGS: VIEWS:THRESHOLD:SCORE (densify.error_views, error_threshold, error_score)
#   e.g.   tools/device_error_score.sh dev_bundle lego 10000 "8:0.1:2 8:0.05:1 16:0.1:1" configs/fast.json
set -u
B=${1:?bundle dir}; SCENE=${2:?scene}; IT=${3:?iterations}; SETTINGS=${4:?settings}; CFG=${5:-configs/fast.json}
line() { grep -E "training done|\[eval" "${OUT:-/tmp}/${SCENE}_${IT}_$1.log" | tr '\n' ' '; echo; }
TAG=off bash tools/device_train.sh "$B" "$SCENE" "$IT" -c "$CFG" > /dev/null
echo "off: $(line off)"
for s in $SETTINGS; do
    IFS=: read -r v t sc <<< "$s"
    tag="e${v}_${t}_${sc}"
    TAG=$tag bash tools/device_train.sh "$B" "$SCENE" "$IT" -c "$CFG" --set densify.error_views="$v" \
        --set densify.error_threshold="$t" --set densify.error_score="$sc" > /dev/null
    echo "$s: $(line "$tag")"
done
