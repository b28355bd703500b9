#!/bin/sh
# make check-oclgrind: every kernel clsplat has, on tiny inputs, in oclgrind's simulator with
# --data-races; fails on any report (invalid or out-of-bounds access, data race, divergence).
#   usage: tools/check_oclgrind.sh [BUILD]   (BUILD holds run_tests, clsplat and gen_demo)
# Kernel tests of the suite (projection, binning and sort, rasterizer forward, backward in each
# accumulation path incl. mip + 3D filter, fp16 SH, deterministic and CAS atomics, SSIM loss, the
# per-view exposure, the resolution schedule's ground truth, Adam with fp32 and 16-bit moments and sparse, the
# opacity reset's state column, histograms, LPIPS, the depth forward, TSDF fusion and
# marching tetrahedra, the error score), then three 10-iteration training runs from 40 random
# points with densification (clone, split, prune, compaction, opacity reset) and histograms: mip
# with the 3D filter and an evaluation with a TensorBoard image, classic with fp16 SH, 16-bit Adam
# moments and the deterministic backward, and MCMC. Prints seconds per part (10 min 26 s on a
# 2-core machine at 218ef84; with 120 points the three runs took 141 / 166 / 56 s against 78 /
# 75 / 36 now, nearly all of it in the backward's simulation).
# --uninitialized is not used: oclgrind 21.10 reports values written by a kernel into a buffer
# that clEnqueueFillBuffer zeroed (as clsplat zeroes every buffer) as uninitialized when the next
# kernel reads them; tools/oclgrind_repro/fill_then_write.c reproduces it outside clsplat. Tried
# without the zero fill instead: the reports are then reads of memory clsplat zeroes on purpose
# (Adam moments, radix counters), and oclgrind itself crashes (SIGSEGV) in the rasterizer tests.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
command -v oclgrind >/dev/null 2>&1 || { echo "check-oclgrind: oclgrind is not installed (make deps)" >&2; exit 1; }
T=$(mktemp -d /tmp/clsplat-oclgrind.XXXXXX)
export XDG_CACHE_HOME="$T/cache" CLSPLAT_BIN="$BUILD/clsplat" CLSPLAT_GEN_DEMO="$BUILD/gen_demo"
# the tests that can take smaller inputs take them (LPIPS: one pair of 31..40 pixels a side, 365 s
# at the suite's sizes under oclgrind)
export CLSPLAT_TEST_SMALL=1
REPORT='Invalid read|Invalid write|data race|Uninitiali|divergence|Oclgrind: [0-9]+ errors|Work-item finished'
fail=0
part() { # NAME COMMAND...
    name=$1; shift
    t0=$(date +%s)
    oclgrind --data-races "$@" > "$T/$name.log" 2>&1
    rc=$?
    n=$(grep -Ec "$REPORT" "$T/$name.log")
    if [ "$rc" != 0 ] || [ "$n" != 0 ]; then
        echo "check-oclgrind: FAIL $name (exit $rc, $n reports); first ones:" >&2
        grep -E -A6 "$REPORT" "$T/$name.log" | head -40 >&2
        [ "$rc" != 0 ] && tail -5 "$T/$name.log" >&2
        fail=1
    else
        echo "check-oclgrind: ok   $name ($(( $(date +%s) - t0 )) s)"
    fi
}
# the tests' own output unfiltered: oclgrind writes its reports there
export CLSPLAT_TEST_VERBOSE=1
for t in test_scan test_bin_tile_sort test_raster_forward_random test_raster_forward_edge_cases test_mip_kernel_size \
         test_ssim_loss test_exposure_loss test_gt_downsample test_adam_fp32 test_adam_fp16_moments test_adam_sparse test_opacity_reset test_grad_classic test_grad_mip test_grad_fp16_sh test_grad_deterministic \
         test_grad_cas_atomics test_raster_bwd_units test_histo_kernels test_lpips_reference test_mcmc_refine test_mcmc_noise \
         test_regularizer_gradients test_raster_depth test_tsdf_fuse test_marching_sphere test_error_score test_mesh_device test_mesh_geom_device test_mesh_samples test_mesh_tex_device test_mesh_exposure; do
    part "$t" "$BUILD/run_tests" "$t"
done
# the rasterizer with 8 pixels a work-item (llvmpipe's path: 32-item groups) and 16 (16 items)
for px in 8 16; do
    export CLSPLAT_TEST_PIXELS=$px
    part "test_grad_classic_pixels$px" "$BUILD/run_tests" test_grad_classic
    part "test_raster_forward_edge_cases_pixels$px" "$BUILD/run_tests" test_raster_forward_edge_cases
done
unset CLSPLAT_TEST_PIXELS
"$BUILD/gen_demo" "$T/scene" 24 18 >/dev/null
# two test views are enough to run the evaluation's kernels; 20 took 93 of train_mip's 180 s
python3 -c 'import json, sys; p = sys.argv[1]; d = json.load(open(p)); d["frames"] = d["frames"][:2]; json.dump(d, open(p, "w"))' \
    "$T/scene/transforms_test.json"
TRAIN="train -s $T/scene --iterations 10 --set device.tune=off --set optim.random_init_points=40 \
  --set densify.from=2 --set densify.interval=3 --set densify.until=9 --set densify.opacity_reset_interval=7 \
  --set densify.grad_threshold=0.00002 --set log.interval=5 --set log.histogram_interval=5 \
  --set eval.test_iterations=[10] --set eval.tensorboard_views=1"
# shellcheck disable=SC2086
part train_mip "$BUILD/clsplat" $TRAIN -o "$T/mip" --set data.eval=true --set model.filter_3d=true \
  --set model.antialias=mip --set densify.error_views=2
# shellcheck disable=SC2086
part train_fp16_det "$BUILD/clsplat" $TRAIN -o "$T/fp16" --set memory.sh_dtype=fp16 \
  --set memory.optimizer_dtype=fp16 --set optim.deterministic=true
part train_mcmc "$BUILD/clsplat" $TRAIN -o "$T/mcmc" -c configs/mcmc.json --set densify.cap_max=60 \
  --set densify.from=2 --set densify.interval=3 --set model.filter_3d=true --set model.antialias=mip
# the logs are this script's own: kept only when something failed
if [ "$fail" = 0 ]; then echo "check-oclgrind: ok"; rm -rf "$T"; else echo "check-oclgrind: FAILED (logs in $T)" >&2; fi
exit $fail
