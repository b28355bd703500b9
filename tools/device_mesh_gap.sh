#!/bin/bash
# Where a mesh draws the test views worse than its model, on a GPU machine in one call: renders
# the model's test views with depth maps, meshes it with the given options (drawing the test
# views), and runs tools/mesh_gap.py over both (per view: model and mesh PSNR, the mesh's excess
# error by the model's depth there; pictures of the 3 worst views in $OUT/gap).
#   usage: tools/device_mesh_gap.sh CLSPLAT RUN_DIR PHOTOS [mesh options ...]
#   e.g.   tools/device_mesh_gap.sh dev_bundle/clsplat /tmp/south_building_7000_a \
#              dev_bundle/data/south_building/images --max-triangles 1000000 --refine 1000
# (RUN_DIR: a trained run whose dataset path still resolves on this machine; the GPU machines
# have numpy and pillow.)
set -u
C=${1:?clsplat binary}; RUN=${2:?run dir}; PHOTOS=${3:?photos folder}; shift 3
R=${OUT:-/tmp}
W=$(mktemp -d /tmp/mesh_gap.XXXXXX) || exit 1 # a folder of its own: nothing else is written over
"$C" render -m "$RUN" -o "$W/renders" --split test --depth-maps > "$R/gap_render.log" 2>&1 ||
  { echo "render failed:"; tail -3 "$R/gap_render.log"; exit 1; }
"$C" mesh -m "$RUN" -o "$W/mesh.ply" --renders "$W/drawings" "$@" > "$R/gap_mesh.log" 2>&1 ||
  { echo "mesh failed:"; tail -3 "$R/gap_mesh.log"; exit 1; }
grep -E "drawn at" "$R/gap_mesh.log"
python3 "$(dirname "$0")/mesh_gap.py" "$W/renders" "$W/drawings" "$PHOTOS" --out "$R/gap"
