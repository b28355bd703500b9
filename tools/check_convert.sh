#!/bin/sh
# make check-convert: tools/convert.sh on gen_demo's 320x240 photos (60 views of an analytic
# scene). It must register most of them, write a dataset clsplat trains on, leave input/
# byte for byte as it was, and refuse to run again over its own output.
#   usage: tools/check_convert.sh BUILD_DIR
set -u
B=${1:-build}
fail() { echo "check_convert: FAIL: $*" >&2; exit 1; }
t=$(mktemp -d "${TMPDIR:-/tmp}/clsplat-convert.XXXXXX") || fail "mktemp"
"$B/gen_demo" "$t/demo" 320 240 --format colmap > /dev/null || fail "gen_demo"
mkdir "$t/scene" && mv "$t/demo/images" "$t/scene/input" || fail "cannot arrange $t/scene/input"
before=$(cd "$t/scene/input" && cat ./* | cksum)
sh tools/convert.sh -s "$t/scene" --camera PINHOLE --matcher sequential > "$t/convert.log" 2>&1 ||
  { cat "$t/convert.log"; fail "convert.sh failed"; }
cat "$t/convert.log"
reg=$(sed -n 's/^convert: \([0-9]*\) of 60 photos registered.*/\1/p' "$t/convert.log")
[ "${reg:-0}" -ge 30 ] || fail "only ${reg:-0} of 60 photos registered (30 wanted)"
n=$(ls "$t/scene/images" | wc -l)
[ "$n" = "$reg" ] || fail "$n undistorted photos for $reg registered"
for f in cameras images points3D; do [ -s "$t/scene/sparse/0/$f.bin" ] || fail "no sparse/0/$f.bin"; done
[ "$(cd "$t/scene/input" && cat ./* | cksum)" = "$before" ] || fail "input/ changed"
if sh tools/convert.sh -s "$t/scene" > "$t/again.log" 2>&1; then fail "a second run over its own output was not refused"; fi
grep -q "will not replace" "$t/again.log" || fail "the refusal does not say why: $(cat "$t/again.log")"
"$B/clsplat" train -s "$t/scene" -o "$t/out" --eval --iterations 200 --set device.tune=off \
  --set eval.test_iterations=[200] --set output.save_iterations=[] > "$t/train.log" 2>&1 ||
  { tail -5 "$t/train.log"; fail "clsplat could not train on the converted scene"; }
psnr=$(sed -n 's/.*eval 200 .*PSNR \([0-9.]*\).*/\1/p' "$t/train.log")
echo "check_convert: $reg of 60 registered; 200 iterations on the converted scene: test PSNR $psnr"
awk -v p="${psnr:-0}" 'BEGIN { exit !(p > 15) }' || fail "test PSNR ${psnr:-?} after 200 iterations (over 15 wanted)"
rm -rf "$t"
echo "check_convert: ok"
