#!/bin/bash
# Export quality (README "Export"): trains SCENE for N iterations with every export format
# written beside the PLY, renders the test views from the PLY and from each export, and prints
# each format's size (bytes a Gaussian) and PSNR against the PLY's renders (build/psnr_dirs).
#   usage: tools/export_quality.sh BUNDLE_DIR DATA_DIR SCENE N [--set key=value ...]
#   (BUNDLE_DIR: clsplat, psnr_dirs and lib/; lego gets a white background)
set -u
B=$(cd "${1:?bundle dir}" && pwd); D=${2:?data dir}; SCENE=${3:?scene}; IT=${4:?iterations}; shift 4
export LD_LIBRARY_PATH=$B/lib
R=${OUT:-/tmp}
bg=(); [ "$SCENE" = lego ] && bg=(--set data.white_background=true)
run=/tmp/export_$SCENE
rm -rf "$run"
"$B/clsplat" train -c configs/default.json -s "$D/$SCENE" -o "$run" --set data.eval=true "${bg[@]}" \
    --set optim.iterations="$IT" --set eval.test_iterations="[$IT]" --set output.save_iterations="[$IT]" \
    --set output.export_formats='["spz","splat","compressed-ply"]' "$@" > "$R/export_${SCENE}_train.log" 2>&1 || {
    echo "training $SCENE failed"; tail -5 "$R/export_${SCENE}_train.log"; exit 1; }
pc=$run/point_cloud/iteration_$IT/point_cloud
n=$("$B/clsplat" info "$pc.ply" | awk '/Gaussians:/{print $2}')
echo "== $SCENE $IT iterations: $n Gaussians, test PSNR $(grep -o '"psnr": [0-9.]*' "$run/metrics.json" | head -1)"
for f in ply spz splat compressed.ply; do
    t0=$(date +%s.%N)
    "$B/clsplat" render --ply "$pc.$f" -s "$D/$SCENE" -o "/tmp/r_${SCENE}_$f" --set data.eval=true "${bg[@]}" "$@" \
        > "$R/export_${SCENE}_render_$f.log" 2>&1 || { echo "render $f failed"; tail -3 "$R/export_${SCENE}_render_$f.log"; }
    t1=$(date +%s.%N)
    bytes=$(stat -c %s "$pc.$f")
    q="(reference)"
    [ $f != ply ] && q=$("$B/psnr_dirs" "/tmp/r_${SCENE}_ply" "/tmp/r_${SCENE}_$f")
    printf "%-15s %11d bytes  %6.1f B/Gaussian  render %.1f s  %s\n" "$f" "$bytes" \
        "$(awk "BEGIN{print $bytes / $n}")" "$(awk "BEGIN{print $t1 - $t0}")" "$q"
done
