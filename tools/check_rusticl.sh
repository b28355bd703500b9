#!/bin/sh
# make check-rusticl: the whole test suite (the README's test command's tests) on Mesa's rusticl
# with its llvmpipe CPU device, beside the PoCL run of `make test` (#24). rusticl is picked
# alone through OCL_ICD_VENDORS and RUSTICL_ENABLE, so the CLI tests' clsplat runs there too.
# What llvmpipe differs in: 32 work-items a group for clsplat's kernels (the rasterizer covers
# 8 pixels a work-item there), 32 KiB local memory, no fp64 / int64 atomics / cl_khr_fp16, and
# profiling events without times (tools/rusticl_repro/profiling.c: the tuner keeps its defaults),
# loops that stop after 65535 iterations (tools/rusticl_repro/loop_limit.c: clsplat probes for
# it and takes the deterministic backward and the tiled LPIPS convolution there).
#   usage: tools/check_rusticl.sh [BUILD] [FILTER...]   (run_tests' filters: a group or name
#   part selects, -PART leaves out; make check-rusticl-ci passes CI's list)
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
[ $# -gt 0 ] && shift
ICD=/etc/OpenCL/vendors/rusticl.icd
[ -f "$ICD" ] || { echo "check-rusticl: Mesa's rusticl is not installed ($ICD; make deps installs mesa-opencl-icd)" >&2; exit 1; }
export OCL_ICD_VENDORS=$ICD RUSTICL_ENABLE=llvmpipe
if ! "$BUILD/clsplat" devices 2>&1 | grep -q llvmpipe; then
    echo "check-rusticl: rusticl lists no llvmpipe device:" >&2
    "$BUILD/clsplat" devices >&2
    exit 1
fi
T=$(mktemp -d /tmp/clsplat-rusticl.XXXXXX)
export XDG_CACHE_HOME="$T/cache" CLSPLAT_BIN="$BUILD/clsplat" CLSPLAT_GEN_DEMO="$BUILD/gen_demo"
t0=$(date +%s)
"$BUILD/run_tests" "$@"
rc=$?
echo "check-rusticl: $( [ $rc = 0 ] && echo ok || echo FAILED ) in $(( $(date +%s) - t0 )) s"
# the scratch folder (kernel cache) is this script's own: removed unless the run failed
[ $rc = 0 ] && rm -rf "$T"
exit $rc
