#!/bin/sh
# Camera poses for a folder of photos, solved with COLMAP into the layout clsplat (and graphdeco's
# train.py) reads: DIR/input/ (the photos, only read) -> DIR/images/ (undistorted) and
# DIR/sparse/0/, with COLMAP's database and distorted model kept in DIR/distorted/.
#   usage: tools/convert.sh -s DIR [--camera MODEL] [--matcher exhaustive|sequential] [--overlap N]
#          [--features N] [--peak T] [--guided] [--relaxed] [--gpu] [--colmap PATH]
# --camera: COLMAP's model for the one shared camera (OPENCV, as graphdeco's convert.py; PINHOLE
#   for photos already free of distortion). --matcher sequential (--overlap N, default 12) for
#   photos taken in order, far cheaper than exhaustive on a CPU. --features / --peak: SIFT's
#   feature count and peak threshold (lower finds more on smooth surfaces). --guided: guided
#   matching. --relaxed: looser mapper thresholds for captures where the defaults register nothing
#   (initial pair angle 2 degrees, 4 inliers; poses from 3 inliers within 8 px). --gpu: COLMAP's
#   CUDA SIFT (Debian's COLMAP has none, so off by default).
# It refuses a DIR that already has images/, sparse/ or distorted/, and works in DIR/.convert.PID,
# moved into place only when every step passed; a failed step names itself and keeps its log there.
# Measured on a plush dog (84 photos at 1500x1000, 2 CPU cores, Debian COLMAP 3.8): exhaustive
# matching with the defaults registered none; --camera PINHOLE --peak 0.003 --features 2000
# --matcher sequential --guided --relaxed registered all 84 in about 6 minutes (README, "Faster
# training"); the same flags with the default exhaustive matching on its 750x500 photos registered
# all 84 too, in 8.5 minutes, with 2.2 times the observations an image (346 against 154) and its
# first photo posed from 286 points instead of 17: a model trained on those poses read 1.6 dB more
# at the test views (README, "Meshes": better poses). Prefer exhaustive where the time allows.
set -u
die() { echo "convert: $*" >&2; exit 1; }
dir= cam=OPENCV matcher=exhaustive overlap=12 features= peak= guided=0 relaxed=0 gpu=0 colmap=colmap
while [ $# -gt 0 ]; do
  case $1 in
    -s|--source|--camera|--matcher|--overlap|--features|--peak|--colmap)
      [ $# -ge 2 ] || die "$1 needs a value (--help lists the arguments)" ;;
  esac
  case $1 in
    -s|--source) dir=$2; shift ;;
    --camera) cam=$2; shift ;;
    --matcher) matcher=$2; shift ;;
    --overlap) overlap=$2; shift ;;
    --features) features=$2; shift ;;
    --peak) peak=$2; shift ;;
    --colmap) colmap=$2; shift ;;
    --guided) guided=1 ;;
    --relaxed) relaxed=1 ;;
    --gpu) gpu=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
  shift
done
[ -n "$dir" ] || die "no dataset folder: -s DIR, with the photos in DIR/input"
[ -d "$dir/input" ] || die "$dir/input: no such folder (put the photos there)"
n=$(find "$dir/input" -maxdepth 1 -type f | grep -ciE '\.(jpe?g|png|tiff?|bmp)$')
[ "$n" -ge 2 ] || die "$dir/input holds $n photos; COLMAP needs at least 2"
for d in images sparse distorted; do
  [ ! -e "$dir/$d" ] || die "$dir/$d exists; convert writes it and will not replace it (move it away)"
done
case $matcher in exhaustive|sequential) ;; *) die "--matcher $matcher: exhaustive or sequential" ;; esac
command -v "$colmap" > /dev/null 2>&1 || die "$colmap not found (Debian: apt-get install colmap; or --colmap PATH)"

tmp=$dir/.convert.$$
mkdir "$tmp" || die "cannot create $tmp"
log=$tmp/colmap.log
export QT_QPA_PLATFORM=offscreen
step() { # NAME, then the COLMAP command
  name=$1; shift
  echo "convert: $name ..."
  if ! "$colmap" "$@" >> "$log" 2>&1; then
    tail -5 "$log" >&2
    die "COLMAP's $name failed; its log: $log"
  fi
}
set -- --database_path "$tmp/database.db" --image_path "$dir/input" --ImageReader.single_camera 1 \
  --ImageReader.camera_model "$cam" --SiftExtraction.use_gpu $gpu
[ -n "$features" ] && set -- "$@" --SiftExtraction.max_num_features "$features"
[ -n "$peak" ] && set -- "$@" --SiftExtraction.peak_threshold "$peak"
step feature_extractor feature_extractor "$@"
set -- --database_path "$tmp/database.db" --SiftMatching.use_gpu $gpu --SiftMatching.guided_matching $guided
[ "$matcher" = sequential ] && set -- "$@" --SequentialMatching.overlap "$overlap"
step "${matcher}_matcher" "${matcher}_matcher" "$@"
mkdir "$tmp/sparse"
set -- --database_path "$tmp/database.db" --image_path "$dir/input" --output_path "$tmp/sparse" \
  --Mapper.ba_global_function_tolerance 0.000001
[ $relaxed = 1 ] && set -- "$@" --Mapper.init_min_tri_angle 2 --Mapper.init_min_num_inliers 4 \
  --Mapper.abs_pose_min_num_inliers 3 --Mapper.abs_pose_max_error 8
step mapper mapper "$@"

# the model with the most registered photos (COLMAP may leave several)
best= most=0
for m in "$tmp"/sparse/*/; do
  [ -f "$m/images.bin" ] || continue
  r=$("$colmap" model_analyzer --path "$m" 2>&1 | sed -n 's/.*Registered images: *\([0-9]*\).*/\1/p' | head -1)
  [ "${r:-0}" -gt "$most" ] && most=$r best=$m
done
[ -n "$best" ] || die "the mapper registered no photos (try --relaxed, --matcher sequential, --peak 0.003); log: $log"
echo "convert: $most of $n photos registered (model $(basename "$best"))"
step image_undistorter image_undistorter --image_path "$dir/input" --input_path "$best" \
  --output_path "$tmp/undistorted" --output_type COLMAP
mkdir "$tmp/undistorted/sparse/0" && mv "$tmp/undistorted/sparse/"*.bin "$tmp/undistorted/sparse/0/" ||
  die "cannot arrange $tmp/undistorted/sparse"
mkdir "$tmp/distorted" "$tmp/done" && mv "$tmp/database.db" "$tmp/sparse" "$log" "$tmp/distorted/" &&
  mv "$tmp/undistorted/images" "$tmp/undistorted/sparse" "$tmp/distorted" "$tmp/done/" ||
  die "cannot arrange the results in $tmp"
# all three or none: a folder moved in is moved back when a later one cannot be
moved=
for d in images sparse distorted; do
  if ! mv "$tmp/done/$d" "$dir/$d"; then
    for m in $moved; do mv "$dir/$m" "$tmp/done/$m"; done
    die "cannot move $tmp/done/$d to $dir/$d; the results stay in $tmp/done"
  fi
  moved="$moved $d"
done
rm -rf "$tmp"
echo "convert: wrote $dir/images ($most photos), $dir/sparse/0 and $dir/distorted; train with clsplat train -s $dir"
