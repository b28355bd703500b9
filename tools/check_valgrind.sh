#!/bin/sh
# make check-valgrind: clsplat's host code under valgrind's memcheck. Fails on any invalid read
# or write, use of an uninitialised value, bad free or definitely lost block, and on an exit code
# other than the one a case expects (a bad input must still end in a clear message and exit 1 or
# 2, not a crash).
#   usage: tools/check_valgrind.sh [BUILD]   (BUILD holds run_tests, clsplat and gen_demo)
# What runs under valgrind: the suite's unit group in one process (configs, schedules, the memory
# plan, datasets, image and PLY readers, the mesh's host stages, exports' encoders...; less
# test_runner_quiet and test_structure_check, which start other programs), then the commands
# that need no OpenCL device on a tiny run trained natively first (info of every format, export
# to every format, report, config --list, partition, and the viewer's server answering
# requests, hostile ones too), and bad input to train, info, export, partition and metrics.
# Commands that build kernels are left out: under valgrind PoCL identifies the CPU anew and
# compiles every kernel again through LLVM (still compiling after 15 minutes on 2 cores), and
# the kernels' host side is what ASan and UBSan check (make sanitize, tests/lsan.supp).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
command -v valgrind >/dev/null 2>&1 || { echo "check-valgrind: valgrind is not installed (make deps)" >&2; exit 1; }
T=$(mktemp -d /tmp/clsplat-valgrind.XXXXXX)
export CLSPLAT_BIN="$BUILD/clsplat" CLSPLAT_GEN_DEMO="$BUILD/gen_demo"
ERR=97
VG="valgrind -q --error-exitcode=$ERR --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --num-callers=30 --suppressions=tests/valgrind.supp"
fail=0
n=0
t0=$(date +%s)
# verdict NAME LOG PASSED DETAIL: counts the case and prints it; a failure also prints the log's
# valgrind reports and its last lines
verdict() {
    n=$((n + 1))
    if [ "$3" = 1 ]; then
        echo "check-valgrind: ok   $1 ($4)"
        return
    fi
    echo "check-valgrind: FAIL $1 ($4)"
    grep -E "==[0-9]+==" "$2" | head -60
    tail -5 "$2"
    fail=$((fail + 1))
}
# case NAME WANT CMD...: runs CMD under valgrind; WANT is the exit code it must end with (never
# ERR, valgrind's own on an error)
case_() {
    name=$1 want=$2
    shift 2
    s=$(date +%s)
    $VG "$@" > "$T/$name.log" 2>&1
    rc=$?
    if [ "$rc" = "$want" ]; then
        verdict "$name" "$T/$name.log" 1 "$(( $(date +%s) - s )) s"
    else
        verdict "$name" "$T/$name.log" 0 "exit $rc, want $want: $*"
    fi
}
C=$BUILD/clsplat
# the fixtures, natively: a Blender demo trained 30 iterations, a COLMAP one for partition
"$BUILD/gen_demo" "$T/demo" 64 48 > "$T/gen.log" 2>&1 &&
    "$BUILD/gen_demo" "$T/colmap" 48 36 --format colmap >> "$T/gen.log" 2>&1 &&
    "$C" train -c configs/demo.json -s "$T/demo" -o "$T/run" --iterations 30 --set device.tune=off \
        --set optim.random_init_points=300 --set densify.from=2 --set log.interval=5 > "$T/train.log" 2>&1 ||
    { echo "check-valgrind: the fixture's training failed:"; tail -20 "$T/train.log" "$T/gen.log"; exit 1; }
PLY=$T/run/point_cloud/iteration_30/point_cloud.ply
case_ unit 0 "$BUILD/run_tests" unit -test_runner_quiet -test_structure_check
case_ config_list 0 "$C" config --list
case_ info_ply 0 "$C" info "$PLY"
for f in spz splat compressed.ply; do
    case_ "export_$f" 0 "$C" export -m "$T/run" --format "$(echo $f | sed 's/\.ply/-ply/')" -o "$T/out.$f"
    case_ "info_$f" 0 "$C" info "$T/out.$f"
done
case_ export_baked 0 "$C" export -m "$T/run" --format ply --bake -o "$T/baked.ply"
case_ report 0 "$C" report -m "$T/run" -o "$T/report.html"
case_ partition 0 "$C" partition -s "$T/colmap" -o "$T/plan" --blocks 2
# bad input: a clear message and exit 1 or 2
head -c 300 "$PLY" > "$T/cut.ply"
head -c $(( $(wc -c < "$PLY") / 2 )) "$PLY" > "$T/half.ply"
head -c $(( $(wc -c < "$T/out.spz") / 2 )) "$T/out.spz" > "$T/half.spz"
printf '{"optim": {"iterations": 10,' > "$T/bad.json"
case_ bad_info_cut 1 "$C" info "$T/cut.ply"
case_ bad_info_half 1 "$C" info "$T/half.ply"
case_ bad_info_half_spz 1 "$C" info "$T/half.spz"
case_ bad_export_cut 1 "$C" export --ply "$T/cut.ply" --format spz -o "$T/cut.spz"
case_ bad_train_config 1 "$C" train -c "$T/bad.json" -s "$T/demo" -o "$T/never"
case_ bad_train_key 2 "$C" train -s "$T/demo" -o "$T/never" --set optim.no_such_key=1
case_ bad_train_range 2 "$C" train -s "$T/demo" -o "$T/never" --set densify.prune_fraction=2
case_ bad_train_source 1 "$C" train -s "$T/no_such_dataset" -o "$T/never"
case_ bad_partition 2 "$C" partition -s "$T/colmap" -o "$T/plan2" --blocks 0
case_ bad_metrics 1 "$C" metrics "$T/cut.ply" "$T/cut.ply"
# the viewer's server: each resource, unknown and hostile ones, a POST; then SIGTERM ends it
$VG "$C" view -m "$T/run" > "$T/view.log" 2>&1 &
vpid=$!
i=0
while [ $i -lt 240 ] && ! grep -q 'view: http' "$T/view.log"; do sleep 0.5; i=$((i + 1)); done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$T/view.log" | head -1)
got=$(python3 - "$url" <<'PY'
import sys, http.client, urllib.parse
host = urllib.parse.urlparse(sys.argv[1]).netloc
out = []
for method, path in [("GET", "/"), ("GET", "/viewer.js"), ("GET", "/dashboard"), ("GET", "/model.json"),
                     ("GET", "/model.bin"), ("GET", "/photo/0"), ("GET", "/photo/99999"), ("GET", "/photo/abc"),
                     ("GET", "/../../etc/passwd"), ("GET", "/..%2f..%2fetc/passwd"), ("GET", "/train_log.jsonl"),
                     ("HEAD", "/model.json"), ("POST", "/"), ("GET", "/" + "a" * 3000)]:
    try:
        c = http.client.HTTPConnection(host, timeout=60)
        c.request(method, path, body=b"x" * 100 if method == "POST" else None)
        r = c.getresponse()
        r.read()
        out.append(str(r.status))
        c.close()
    except Exception as e:
        out.append("failed:" + type(e).__name__)
print(" ".join(out))
PY
)
kill -TERM $vpid 2>/dev/null
wait $vpid
rc=$?
want="200 200 200 200 200 200 404 404 404 404 200 200 405 404"
if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
    verdict view "$T/view.log" 1 "$(echo $want | wc -w) requests"
else
    verdict view "$T/view.log" 0 "exit $rc, want 0; answers $got, want $want"
fi
[ -e "$T/never" ] && { echo "check-valgrind: FAIL a refused training left $T/never"; fail=$((fail + 1)); }
echo "check-valgrind: $((n - fail)) of $n cases clean ($(( $(date +%s) - t0 )) s)"
[ "$fail" = 0 ] && rm -rf "$T"
[ "$fail" = 0 ]
