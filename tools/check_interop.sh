#!/bin/bash
# make check-interop: clsplat's exports in real tools.
#  (1) PlayCanvas's splat-transform (npm) reads clsplat's PLY, SPZ, .splat and compressed PLY of
#      random Gaussians (SH degree 3, every axis and sign convention showing) and its decoded
#      values equal clsplat's own reader's (tools/interop/check_values.py);
#  (2) Spark (npm, with three) in Debian's headless Chromium (SwiftShader WebGL, page served
#      from 127.0.0.1) renders a trained demo scene's PLY and SPZ from a test camera, and the
#      frame matches clsplat's render of that camera (PSNR at least MIN_DB; a blank or garbled
#      frame is far below it). Camera mapping: the NeRF-synthetic transform_matrix is
#      camera-to-world in three.js's camera axes, used as it is for the PLY (Spark takes a PLY's
#      axes raw); Spark also takes an SPZ raw, i.e. in SPZ's RUB axes, so for the SPZ the world
#      is flipped: diag(1,-1,-1) times the matrix;
#  (2b) three.js's GLTFLoader in that Chromium reads the run's mesh as .glb (clsplat mesh -o
#      mesh.glb): the counts it reads are the file's, the material is unlit with vertex colours,
#      and its frame from that camera resembles clsplat's render (PSNR at least MIN_MESH_DB);
#  (2c) the same with a texture (clsplat mesh --refine --texture auto): three.js's frame of the
#      textured .glb matches clsplat's own drawing of that mesh (--renders; PSNR at least MIN_TEX_DB);
#  (3) the run's report.html opens from the file system in that Chromium with every outside
#      request refused: its charts are drawn and its previews decoded (tools/interop/report_check.js);
#  (4) `clsplat view` of the Spark run: the viewer page in that Chromium draws the model (the
#      canvas is not blank), its dashboard's charts are drawn, a photo shows, and its WebGL2
#      renders of three training cameras match clsplat's renders (PSNR at least MIN_VIEW_DB);
#  (5) `clsplat train --view`: the open page sees the model and the plots change while it trains
#      (tools/interop/viewer_check.js).
# Screenshots and clsplat's renders land in OUT (default build/interop-results) to look at.
#   usage: tools/check_interop.sh [OUT]     (root installs nodejs, npm, chromium when missing)
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
W=$B/interop
OUTD=${1:-$B/interop-results}
MIN_DB=${MIN_DB:-22} # measured 25.1 (PLY) and 25.2 dB (SPZ); a blank frame scores ~8, a wrongly flipped camera ~6
# the viewer draws as clsplat's rasterizer does, in half floats with fp16 SH and 8-bit output on
# both sides: measured 61.9 dB on this run, 60.4 on make demo's; 45 dB allows an RMS error of 1.4 of 255 (a half-pixel
# shift of the model scored 31.8 dB)
MIN_VIEW_DB=${MIN_VIEW_DB:-45}
# the .glb mesh drawn by three.js against clsplat's render of the splats: a mesh is not the
# splats (measured 23.0 dB); sRGB colours written as if linear scored 15.7, the world upside
# down 5.6
MIN_MESH_DB=${MIN_MESH_DB:-18}
# the textured .glb drawn by three.js against clsplat's own drawing of that mesh (--renders): the
# same triangles and colours, so only rasterization and 8-bit rounding differ (measured 40.0 dB;
# UVs upside down 13.2; the texels past the diagonal copied from their left, 37.8: a subtle error
# like that one is test_mesh_tex_atlas's to catch)
MIN_TEX_DB=${MIN_TEX_DB:-30}
sh tools/install-deps.sh interop
if ! command -v npm >/dev/null 2>&1; then # Debian's nodejs comes without npm; nodesource's with it
    [ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null ||
        { echo "check-interop: npm is missing (apt-get install npm)" >&2; exit 1; }
fi
make --no-print-directory "$B/clsplat" "$B/gen_demo" "$B/psnr_dirs" >/dev/null
mkdir -p "$W" "$OUTD"
if ! cmp -s tools/interop/package.json "$W/package.json" || [ ! -d "$W/node_modules/@sparkjsdev/spark" ]; then
    cp tools/interop/package.json "$W/package.json"
    (cd "$W" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
C=$(pwd)/$B/clsplat
fail=0
echo "== splat-transform $(node -p "require('./$W/node_modules/@playcanvas/splat-transform/package.json').version") reads clsplat's files"
python3 tools/interop/random_ply.py "$W/rand.ply" 3000 "$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"
for f in ply spz splat compressed-ply; do
    e=$f; [ $f = compressed-ply ] && e=compressed.ply
    src=$W/rand.$e
    [ $f = ply ] || "$C" export --ply "$W/rand.ply" --format $f -o "$src" >/dev/null
    "$C" export --ply "$src" --format ply -o "$W/decoded_$e.ply" >/dev/null
    if ! (cd "$W" && npx --no-install splat-transform -w "rand.$e" "st_$e.csv" >"st_$e.log" 2>&1); then
        echo "splat-transform failed on $src:"; cat "$W/st_$e.log"; fail=1; continue
    fi
    python3 tools/interop/check_values.py $f "$W/st_$e.csv" "$W/decoded_$e.ply" || fail=1
done

echo "== Spark $(node -p "require('./$W/node_modules/@sparkjsdev/spark/package.json').version") in Chromium ($(chromium --version 2>/dev/null | head -1)) renders clsplat's PLY and SPZ"
S=$W/scene
[ -d "$S" ] || "$B/gen_demo" "$S" 160 120 >/dev/null
run=$W/run
if [ ! -f "$run/point_cloud/iteration_900/point_cloud.spz" ]; then
    "$C" train -s "$S" -o "$run" --force --iterations 900 --set device.tune=off --set optim.random_init_points=6000 \
        --set optim.sh_increase_interval=300 --set output.export_formats='["spz"]' > "$W/train.log" 2>&1 || {
        echo "training failed:"; tail -5 "$W/train.log"; exit 1; }
fi
pc=$run/point_cloud/iteration_900/point_cloud
"$C" render --ply "$pc.ply" -s "$S" -o "$W/clsplat_render" > "$W/render.log" 2>&1 || { cat "$W/render.log"; exit 1; }
www=$W/www
rm -rf "$www" && mkdir -p "$www"
cp tools/interop/spark.html tools/interop/view_setup.js "$W/node_modules/three/build/three.module.js" "$W/node_modules/three/build/three.core.js" \
    "$W/node_modules/@sparkjsdev/spark/dist/spark.module.js" "$www/"
cp -r "$W/node_modules/three/examples/jsm" "$www/addons"
cp "$pc.ply" "$www/scene.ply" && cp "$pc.spz" "$www/scene.spz"
port=$((20000 + RANDOM % 20000))
python3 -m http.server $port --bind 127.0.0.1 --directory "$www" > "$W/http.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
sleep 1
read -r W_ H_ FOV M_PLY M_SPZ <<EOF2
$(python3 - "$S" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1] + "/transforms_test.json"))
from struct import unpack
with open(sys.argv[1] + "/" + d["frames"][0]["file_path"] + ".png", "rb") as f:
    w, h = unpack(">II", f.read(24)[16:24])
m = d["frames"][0]["transform_matrix"]
fovy = 2 * math.degrees(math.atan(math.tan(d["camera_angle_x"] / 2) * h / w))
col = lambda a: ",".join(repr(a[r][c]) for c in range(4) for r in range(4))
flip = [[(1, -1, -1, 1)[r] * m[r][c] for c in range(4)] for r in range(4)]
print(w, h, fovy, col(m), col(flip))
PY
)
EOF2
view=$(python3 -c "import json; print(json.load(open('$S/transforms_test.json'))['frames'][0]['file_path'].split('/')[-1])")
cp "$W/clsplat_render/$view.png" "$OUTD/clsplat_$view.png"
for f in ply spz; do
    m=$M_PLY; [ $f = spz ] && m=$M_SPZ
    mkdir -p "$W/spark_$f"
    if ! NODE_PATH=$(pwd)/$W/node_modules node tools/interop/shot.js \
        "http://127.0.0.1:$port/spark.html?file=scene.$f&w=$W_&h=$H_&fovy=$FOV&bg=0&m=$m" "$W/spark_$f/$view.png" "$W_" "$H_" \
        > "$W/spark_$f.log" 2>&1; then
        echo "Spark failed on the $f:"; cat "$W/spark_$f.log"; fail=1; continue
    fi
    cp "$W/spark_$f/$view.png" "$OUTD/spark_$f.png"
    line=$("$B/psnr_dirs" "$W/spark_$f" "$W/clsplat_render")
    db=$(echo "$line" | awk '{print $5}')
    ok=$(awk -v d="$db" -v m="$MIN_DB" 'BEGIN{print (d >= m) ? 1 : 0}')
    echo "Spark's $f frame vs clsplat's render of $view (${W_}x$H_): $db dB (need >= $MIN_DB)"
    [ "$ok" = 1 ] || fail=1
done
echo "== three.js GLTFLoader in Chromium reads clsplat mesh's .glb of that run"
"$C" mesh -m "$run" -o "$www/mesh.glb" --max-triangles 50000 > "$W/mesh.log" 2>&1 || { tail -3 "$W/mesh.log"; fail=1; }
cp tools/interop/gltf.html "$www/"
mkdir -p "$W/gltf"
if NODE_PATH=$(pwd)/$W/node_modules node tools/interop/shot.js \
    "http://127.0.0.1:$port/gltf.html?file=mesh.glb&w=$W_&h=$H_&fovy=$FOV&bg=0&m=$M_PLY" "$W/gltf/$view.png" "$W_" "$H_" \
    > "$W/gltf.log" 2>&1; then
    got=$(sed -n 's/^page: gltf: //p' "$W/gltf.log")
    want=$(python3 - "$www/mesh.glb" <<'PY'
import json, struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack("<I", d[12:16])[0]
doc = json.loads(d[20:20 + n])
acc = doc["accessors"]
print(f"{acc[0]['count']} vertices, {acc[2]['count'] // 3} triangles, MeshBasicMaterial, vertex colours true")
PY
)
    cp "$W/gltf/$view.png" "$OUTD/gltf_mesh.png"
    line=$("$B/psnr_dirs" "$W/gltf" "$W/clsplat_render") || line="no PSNR"
    db=$(echo "$line" | awk '{print $5}')
    echo "three.js read: $got (the file holds: $want); its frame vs clsplat's splat render of $view: $db dB (need >= $MIN_MESH_DB)"
    [ "$got" = "$want" ] && [ "$(awk -v d="$db" -v m="$MIN_MESH_DB" 'BEGIN{print (d >= m) ? 1 : 0}')" = 1 ] || fail=1
else
    echo "three.js failed on the .glb:"; cat "$W/gltf.log"; fail=1
fi
echo "== three.js draws clsplat mesh --texture's .glb as clsplat drew it"
# the same mesh refined with a texture (auto subdivisions), drawn by clsplat at the test views
# (--renders) and by three.js from the first: the atlas, its UVs and the sampler must reproduce
# the fitted colours (see MIN_TEX_DB)
rm -rf "$W/tex_drawn" "$W/tex"
"$C" mesh -m "$run" -o "$www/textured.glb" --max-triangles 5000 --refine 100 --texture auto --renders "$W/tex_drawn" \
    > "$W/tex_mesh.log" 2>&1 || { tail -3 "$W/tex_mesh.log"; fail=1; }
mkdir -p "$W/tex"
if NODE_PATH=$(pwd)/$W/node_modules node tools/interop/shot.js \
    "http://127.0.0.1:$port/gltf.html?file=textured.glb&w=$W_&h=$H_&fovy=$FOV&bg=0&m=$M_PLY" "$W/tex/$view.png" "$W_" "$H_" \
    > "$W/tex.log" 2>&1 && [ -f "$W/tex_drawn/$view.png" ]; then
    mkdir -p "$W/tex_ref" && cp "$W/tex_drawn/$view.png" "$W/tex_ref/"
    cp "$W/tex/$view.png" "$OUTD/gltf_textured.png"
    line=$("$B/psnr_dirs" "$W/tex" "$W/tex_ref") || line="no PSNR"
    db=$(echo "$line" | awk '{print $5}')
    echo "three.js read: $(sed -n 's/^page: gltf: //p' "$W/tex.log"); its frame vs clsplat's drawing of the textured mesh: $db dB (need >= $MIN_TEX_DB)"
    [ "$(awk -v d="$db" -v m="$MIN_TEX_DB" 'BEGIN{print (d >= m) ? 1 : 0}')" = 1 ] || fail=1
else
    echo "three.js or clsplat failed on the textured .glb:"; tail -3 "$W/tex_mesh.log"; cat "$W/tex.log"; fail=1
fi
echo "== report.html of that run, from the file system, no network"
rrun=$W/report_run # evaluated at 150 and 300: charts of test PSNR, previews
"$C" train -s "$S" -o "$rrun" --force --eval --iterations 300 --test_iterations 150 300 --set device.tune=off \
    --set optim.random_init_points=3000 > "$W/report_train.log" 2>&1 || { tail -5 "$W/report_train.log"; fail=1; }
NODE_PATH=$(pwd)/$W/node_modules node tools/interop/report_check.js "$rrun/report.html" "$OUTD/report.png" || fail=1
echo "== clsplat view of that run in Chromium: the WebGL2 page against clsplat's renders of training cameras"
rm -rf "$W/viewer_clsplat"
"$C" render -m "$run" --split train -o "$W/viewer_clsplat" > "$W/viewer_render.log" 2>&1 || { tail -3 "$W/viewer_render.log"; fail=1; }
vport=$((20000 + RANDOM % 20000))
"$C" view -m "$run" --port $vport > "$W/view.log" 2>&1 &
viewer=$!
trap 'kill $server $viewer 2>/dev/null' EXIT
sleep 1
rm -rf "$OUTD/viewer"
if NODE_PATH=$(pwd)/$W/node_modules node tools/interop/viewer_check.js still "http://127.0.0.1:$vport/" "$OUTD/viewer" 0 7 21; then
    # cameras 0, 7, 21 are of the scene's train/ folder (render writes by the photos' paths)
    line=$("$B/psnr_dirs" "$OUTD/viewer/renders" "$W/viewer_clsplat/train") || line="no PSNR: psnr_dirs failed"
    db=$(echo "$line" | awk '{print $8}')
    echo "viewer's WebGL2 renders vs clsplat's: $line (need a min >= $MIN_VIEW_DB)"
    [ "$(awk -v d="$db" -v m="$MIN_VIEW_DB" 'BEGIN{print (d >= m) ? 1 : 0}')" = 1 ] || fail=1
else
    fail=1
fi
kill $viewer 2>/dev/null; wait $viewer 2>/dev/null || true
echo "== clsplat train --view: the open page follows the run"
lport=$((20000 + RANDOM % 20000))
"$C" train -s "$S" -o "$W/live_run" --force --iterations 3000 --set device.tune=off --set optim.random_init_points=3000 \
    --set log.interval=10 --view $lport > "$W/live_train.log" 2>&1 &
trainer=$!
trap 'kill $server $viewer $trainer 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q "view: http" "$W/live_train.log" && break; sleep 0.3; done
NODE_PATH=$(pwd)/$W/node_modules node tools/interop/viewer_check.js live "http://127.0.0.1:$lport/" 60 || fail=1
kill -TERM $trainer 2>/dev/null; wait $trainer 2>/dev/null || true
grep -h "live-view snapshots\|stopped" "$W/live_train.log" | tail -2
echo "screenshots: $OUTD/spark_ply.png, $OUTD/spark_spz.png, $OUTD/report.png, $OUTD/viewer/page.png, clsplat's: $OUTD/clsplat_$view.png"
[ $fail = 0 ] && echo "check-interop: ok" || echo "check-interop: FAILED"
exit $fail
