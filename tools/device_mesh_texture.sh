#!/bin/bash
# Vertex colours against the texture stage on one trained model, on a GPU machine in one call:
# for each budget, `clsplat mesh --refine N` with vertex colours, then with `--texture auto`
# (same refinement otherwise); one line per mesh (test PSNR, lowest view, coverage, the texture's
# subdivisions, refinement seconds, whole command's wall seconds). VARIANTS (';' between them,
# default ";--texture auto") sets the options compared, e.g. ";--focus;--focus --texture auto".
#   usage: [REFINE=1000] [BUDGETS="250000 1000000"] [VARIANTS="..."] tools/device_mesh_texture.sh CLSPLAT RUN_DIR [mesh options ...]
#   e.g.   tools/device_mesh_texture.sh dev_bundle/clsplat /tmp/south_30000_d1
# (RUN_DIR: a trained run whose dataset path still resolves on this machine.)
set -u
C=${1:?clsplat binary}; RUN=${2:?run dir}; shift 2
R=${OUT:-/tmp}
for b in ${BUDGETS:-250000 1000000}; do
  IFS=';' read -r -a vs <<< "${VARIANTS:-;--texture auto}"
  for i in "${!vs[@]}"; do
    t=${vs[$i]}
    log=$R/mesh_${b}_$i.log
    t0=$(date +%s.%N)
    "$C" mesh -m "$RUN" -o "/tmp/mesh_$b.glb" --max-triangles "$b" --refine "${REFINE:-1000}" --psnr $t "$@" > "$log" 2>&1
    rc=$?
    echo "$b ${t:-(no options)} (exit $rc): $(grep -o 'PSNR [0-9.]* dB (lowest [0-9.]*), [0-9.]*%' "$log")" \
         "$(grep -o 'texture of [0-9]* subdivisions' "$log")" \
         "refine $(grep -o 'tenth), [0-9.]* s' "$log" | grep -o '[0-9.]* s' | paste -sd+ -)" \
         "wall $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
  done
done
