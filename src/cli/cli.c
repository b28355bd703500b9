/* cli: option table, parsing and per-command help of the clsplat command line. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "depth_check.h"
#include "exposure.h"
#include "mesher.h"
#include "mesh_raster.h"
#include "mesh_shell.h"
#include "mesh_step.h"
#include "mesh_tex.h"
#include "util.h"

#define C(x) (1u << (x))
#define RUNS_ON_DEVICE (C(CS_CMD_TRAIN) | C(CS_CMD_RENDER) | C(CS_CMD_EVAL) | C(CS_CMD_BENCH) | C(CS_CMD_TUNE) | C(CS_CMD_MESH))
/* training settings a batch passes to every job */
#define TRAINS (C(CS_CMD_TRAIN) | C(CS_CMD_BATCH))
/* commands that open a device and take its options */
#define OPENS_DEVICE (RUNS_ON_DEVICE | C(CS_CMD_METRICS) | C(CS_CMD_MERGE))

typedef enum { O_FLAG, O_VALUE, O_LIST } opt_kind;
/* how a value becomes a config assignment: as a JSON string, as it is (numbers), a list */
typedef enum { V_NONE, V_STRING, V_RAW, V_TRUE, V_DEVICE, V_OPTIMIZER } value_kind;

typedef struct {
    const char *name, *alias; /* "--source", "-s" (alias may be NULL) */
    opt_kind kind;
    unsigned commands;        /* C(command) bits */
    const char *key;          /* config key it sets (NULL: an option of the command itself) */
    value_kind as;
    const char *arg, *help;
} opt_desc;

static const opt_desc OPTS[] = {
    {"--config", "-c", O_VALUE, TRAINS | C(CS_CMD_RENDER) | C(CS_CMD_BENCH) | C(CS_CMD_TUNE) | C(CS_CMD_METRICS) | C(CS_CMD_PARTITION), NULL, V_NONE,
     "FILE", "JSON config over the built-in defaults (graphdeco's 3DGS)"},
    {"--source", "-s", O_VALUE, (RUNS_ON_DEVICE & ~C(CS_CMD_TUNE)) | C(CS_CMD_PARTITION), "data.path", V_STRING, "DIR", "dataset folder (data.path)"},
    {"--output", "-o", O_VALUE, C(CS_CMD_TRAIN), "output.dir", V_STRING, "DIR", "output folder (output.dir)"},
    {"--model", "-m", O_VALUE, C(CS_CMD_TRAIN), "output.dir", V_STRING, "DIR", "graphdeco's name for -o"},
    {"--model", "-m", O_VALUE, C(CS_CMD_RENDER) | C(CS_CMD_EVAL) | C(CS_CMD_EXPORT) | C(CS_CMD_MESH) | C(CS_CMD_REPORT) | C(CS_CMD_VIEW), NULL, V_NONE, "DIR", "a trained model's output folder"},
    {"--model", "-m", O_VALUE, C(CS_CMD_MERGE), NULL, V_NONE, "ROOT", "the batch folder the blocks trained in (ROOT/block_K/)"},
    {"--output", "-o", O_VALUE, C(CS_CMD_PARTITION), NULL, V_NONE, "PLAN", "the plan's folder: PLAN/plan.json, PLAN/jobs.json"},
    {"--output", "-o", O_VALUE, C(CS_CMD_MERGE), NULL, V_NONE, "OUT", "the merged model's run folder (clsplat eval, render, view, mesh -m OUT)"},
    {"--blocks", NULL, O_VALUE, C(CS_CMD_PARTITION), NULL, V_NONE, "N", "blocks (1 to 64), balanced by the sparse points"},
    {"--finetune", NULL, O_VALUE, C(CS_CMD_MERGE), NULL, V_NONE, "N",
     "then train the merged model N iterations on the whole scene (no densification) into OUT/finetune/, evaluated"},
    {"--gaussians", NULL, O_VALUE, C(CS_CMD_PARTITION), NULL, V_NONE, "N",
     "the scene's Gaussian total: each block's memory.max_gaussians is its core's share of the points x --headroom"},
    {"--headroom", NULL, O_VALUE, C(CS_CMD_PARTITION), NULL, V_NONE, "F",
     "with --gaussians: room for a block's Gaussians outside its core, which the merge drops (default 1.3)"},
    {"--margin", NULL, O_VALUE, C(CS_CMD_PARTITION), NULL, V_NONE, "F",
     "each block's expanded region: its core grown by F of its size on each inner side (default 0.2)"},
    {"--min-share", NULL, O_VALUE, C(CS_CMD_PARTITION), NULL, V_NONE, "F",
     "a camera trains a block when it sees F of the block's core points (default 0.25), or stands in its expanded region"},
    {"--output", "-o", O_VALUE, C(CS_CMD_REPORT), NULL, V_NONE, "FILE", "the page to write (default OUT/report.html)"},
    {"--view", NULL, O_VALUE, C(CS_CMD_TRAIN), NULL, V_NONE, "PORT",
     "serve the run's live page on 127.0.0.1:PORT while it trains (0: a free port; see clsplat view)"},
    {"--port", NULL, O_VALUE, C(CS_CMD_VIEW), NULL, V_NONE, "PORT", "port to listen on (default 0: a free one, printed)"},
    {"--host", NULL, O_VALUE, C(CS_CMD_VIEW) | C(CS_CMD_TRAIN), NULL, V_NONE, "ADDR",
     "IPv4 address to listen on (default 127.0.0.1); any other address requires the printed access token"},
    {"--output", "-o", O_VALUE, C(CS_CMD_RENDER), NULL, V_NONE, "DIR", "folder for the PNGs"},
    {"--output", "-o", O_VALUE, C(CS_CMD_BATCH), NULL, V_NONE, "ROOT", "the batch's folder: ROOT/<job>/, ROOT/summary.json"},
    {"--output", "-o", O_VALUE, C(CS_CMD_EXPORT), NULL, V_NONE, "FILE",
     "the file to write (default: beside the PLY, point_cloud.spz, .splat, .compressed.ply, _baked.ply)"},
    {"--output", "-o", O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "FILE",
     "the mesh to write: .ply, or .glb for binary glTF (default OUT/mesh.ply)"},
    {"--voxel", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "SIZE",
     "voxel side in scene units (default: the bounds' longest side / --grid)"},
    {"--grid", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "voxels along the bounds' longest side (default: a training pixel at the cameras' median distance a voxel, "
     "64 to 512 along the longest side)"},
    {"--max-triangles", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N", "simplify to at most N triangles (meshoptimizer)"},
    {"--depth", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "median|mean", "the rendered depth fused (default median)"},
    {"--max-depth", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "D",
     "depths past D (camera z) count as no surface (default: where the training views see 99% of the opaque "
     "Gaussians, +25%)"},
    {"--contract", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "S",
     "keep what lies past the box of the model's opaque Gaussians, out to the depth limit, in voxels that grow with "
     "the distance: a band of S times the box's half-size on each side holds it all (default: 1 with the focus, "
     "else 0, the grid ending at the box)"},
    {"--focus", NULL, O_FLAG, C(CS_CMD_MESH), NULL, V_NONE, NULL,
     "the grid's fine voxels span where the Gaussians half the training views see lie, and the rest, out to the "
     "depth limit, is a band of voxels that grow with the distance (--contract S sets its width, default 1); the "
     "default on a capture (COLMAP, nerfstudio), not on a Blender scene"},
    {"--no-focus", NULL, O_FLAG, C(CS_CMD_MESH), NULL, V_NONE, NULL,
     "the grid's fine voxels span the box of the model's opaque Gaussians (the default on a Blender scene)"},
    {"--trunc", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "VOXELS", "truncation of the signed distance (default 4; on COLMAP and nerfstudio captures at least 1% of the training views' median depth)"},
    {"--volume-mb", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "MB",
     "the volume's largest slab (default: half of what memory.vram_budget_mb leaves)"},
    {"--refine", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "fit the written mesh's vertex colours to the training photos over N views (after --max-triangles), then its "
     "positions too (--refine-geometry)"},
    {"--refine-samples", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "the refinement fits each photo pixel with the mean of N x N samples of the drawing (drawn at N times the "
     "size: the anti-aliased drawing --psnr-samples N judges; 1-" CS_STR(CS_MESH_RASTER_MAX_SAMPLES)
     ", default 1: the pixel's centre)"},
    {"--refine-dssim", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "W",
     "the refinement's loss: (1 - W) L1 + W D-SSIM over the drawn image, as training's (default 0.2)"},
    {"--carve", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "W",
     "a voxel a view sees past (in front of its surface by more than the truncation) weighs 1 + W in the fusion "
     "(default 0)"},
    {"--carve-dropped", NULL, O_FLAG, C(CS_CMD_MESH), NULL, V_NONE, NULL,
     "a rendered depth the --consistency check drops still counts as free space in front of it (by more than the "
     "truncation), so the views that see past a floater carve it away (default: a dropped depth fuses nothing)"},
    {"--shell-fit", NULL, O_FLAG, C(CS_CMD_MESH), NULL, V_NONE, NULL,
     "bring the background shell in to the background the training views see each way from its centre (the depths "
     "the --consistency check drops or the depth limit leaves out), keeping the training cameras inside it (default: "
     "the shell stays far)"},
    {"--pseudo-views", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "the refinement also fits the model's drawings of N views between each training view and its N nearest "
     "(default 0; at most " CS_STR(CS_MESH_PSEUDO_MAX_GIB) " GiB of drawings, fewer a view past that)"},
    {"--no-exposure", NULL, O_FLAG, C(CS_CMD_MESH) | C(CS_CMD_RENDER), NULL, V_NONE, NULL,
     "ignore the model's exposure.json (optim.exposure): render draws every view at the identity, mesh's refinement "
     "compares the training photos with the mesh drawn at the identity and its --psnr draws every view so (default: "
     "each training view under its transform, a held-out view under the blend of its " CS_STR(CS_EXPOSURE_NEAREST)
     " nearest training views')"},
    {"--refine-exposure", NULL, O_FLAG, C(CS_CMD_MESH), NULL, V_NONE, NULL,
     "the refinement learns each training view's exposure (a 3x4 colour transform, as optim.exposure) with the "
     "colours and positions, from the model's exposure.json or the identity; --psnr draws a held-out view under the "
     "blend of its nearest training views' learned ones"},
    {"--refine-geometry", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "after --refine's colours, fit the vertex positions and colours together over N more views (anti-aliased "
     "silhouettes, Laplacian and normal-consistency regularisers; default twice --refine's N; 0: colours only)"},
    {"--refine-step", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "S|S1,S2,..|auto",
     "the geometry stage's Adam step in mean edge lengths, decayed to a tenth (default: auto on captures, "
     CS_STR(CS_MESH_GEOM_LR) " on Blender scenes); several steps (auto: 0.025,0.05,0.1): each refines over a "
     "quarter of the views on the training views less every " CS_STR(CS_MESH_STEP_HOLD_EVERY) "th, and the best "
     "drawn at those refines on all (an object captured all round on a plain backdrop takes 0.1, a building 0.025: "
     "README)"},
    {"--refine-laplacian", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "W",
     "weight of the Laplacian regulariser (default " CS_STR(CS_MESH_GEOM_LAPLACIAN) "; 0: none)"},
    {"--refine-normal", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "W",
     "weight of the normal-consistency regulariser (default " CS_STR(CS_MESH_GEOM_NORMAL) "; 0: none)"},
    {"--texture", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "R|auto",
     "after the refinement's other stages, give each triangle its own colours on a lattice of R subdivisions an "
     "edge (1-8; a texture atlas in the .glb, which it needs), fitted to the photos over --refine-texture views; "
     "auto: the most whose atlas fits 4096 texels a side"},
    {"--refine-texture", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "views of the texture stage (default: --refine's N)"},
    {"--shell", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "L",
     "a background sphere of 20 x 4^L triangles far around the scene, coloured by --refine (default with --refine: 6 "
     "for COLMAP and nerfstudio captures, at most an eighth of --max-triangles; 0 for Blender scenes; 0: none)"},
    {"--near-cut", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "F",
     "drop triangles nearer a training camera than F times the views' median depth: floaters against the lens "
     "(default " CS_STR(CS_MESH_NEAR_CUT) "; 0: keep them)"},
    {"--consistency", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "fuse a view's rendered depth only where at least N of its 8 nearest training views see a surface alike "
     "(within 2% of the depth): the model's guesses on a plain backdrop left out (default " CS_STR(CS_MESH_CONSISTENCY)
     " on COLMAP and nerfstudio captures, 0 on Blender scenes; 0: every depth)"},
    {"--keep-components", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "keep the N largest connected pieces of the mesh, dropping floaters (default: all)"},
    {"--psnr", NULL, O_FLAG, C(CS_CMD_MESH), NULL, V_NONE, NULL,
     "draw the mesh with its colours (vertex colours, or --texture) at the test views and print its PSNR against the photos"},
    {"--from", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "MESH.ply",
     "take this mesh (a PLY of polygons, vertex colours optional; another extractor's, or clsplat's own) in place "
     "of fusing the model's depths, then cut it to --max-triangles, refine it against the photos and --psnr it as "
     "clsplat's own (the model still gives the scene, its exposures and --pseudo-views)"},
    {"--psnr-samples", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "N",
     "--psnr, drawing each pixel as the mean of N x N samples (anti-aliased, as a viewer's multisampling draws; "
     "1-" CS_STR(CS_MESH_RASTER_MAX_SAMPLES) ", default 1: the pixel's centre)"},
    {"--renders", NULL, O_VALUE, C(CS_CMD_MESH), NULL, V_NONE, "DIR", "--psnr, and write those drawings to DIR as PNGs and print each view's PSNR"},
    {"--profile", NULL, O_FLAG, C(CS_CMD_MESH) | C(CS_CMD_TRAIN), NULL, V_NONE, NULL,
     "time every kernel: mesh --refine's a view; train's an iteration, per phase of the resolution schedule, against "
     "the loop's wall time (a finish every ~100 iterations: slower)"},
    {"--format", NULL, O_VALUE, C(CS_CMD_EXPORT), NULL, V_NONE, "spz|splat|compressed-ply|ply", "the format to write"},
    {"--bake", NULL, O_FLAG, C(CS_CMD_EXPORT), NULL, V_NONE, NULL,
     "with --format ply: fold the 3D filter into scales and opacities (the compact formats always do)"},
    {"--resume", NULL, O_VALUE, C(CS_CMD_TRAIN), NULL, V_NONE, "CKPT",
     "continue from OUT/checkpoints/chkpnt_N.bin with OUT/config.json"},
    {"--force", NULL, O_FLAG, C(CS_CMD_TRAIN), NULL, V_NONE, NULL,
     "train into an output folder that holds another run (its outputs are removed first)"},
    {"--resolution", "-r", O_VALUE, (RUNS_ON_DEVICE & ~C(CS_CMD_TUNE)) | C(CS_CMD_BATCH), "data.resolution", V_RAW, "N",
     "1, 2, 4, 8 (divide), a width >= 16, or -1 (data.resolution)"},
    {"--eval", NULL, O_FLAG, TRAINS | C(CS_CMD_RENDER) | C(CS_CMD_PARTITION), "data.eval", V_TRUE, NULL, "hold out test views (data.eval)"},
    {"--white_background", "-w", O_FLAG, TRAINS | C(CS_CMD_RENDER), "data.white_background", V_TRUE, NULL,
     "white background (data.white_background)"},
    {"--iterations", NULL, O_VALUE, TRAINS, "optim.iterations", V_RAW, "N", "optim.iterations"},
    {"--data_device", NULL, O_VALUE, TRAINS, "data.image_residency", V_DEVICE, "cpu|cuda",
     "graphdeco's: cpu keeps the training images in host memory (data.image_residency host), cuda on the device"},
    {"--optimizer_type", NULL, O_VALUE, TRAINS, "optim.sparse_adam", V_OPTIMIZER, "default|sparse_adam",
     "graphdeco's: sparse_adam steps only the Gaussians each view sees (optim.sparse_adam)"},
    {"--test_iterations", NULL, O_LIST, TRAINS, "eval.test_iterations", V_RAW, "N...",
     "eval.test_iterations (-1: none but the last iteration)"},
    {"--save_iterations", NULL, O_LIST, TRAINS, "output.save_iterations", V_RAW, "N...",
     "output.save_iterations"},
    {"--checkpoint_iterations", NULL, O_LIST, TRAINS, "output.checkpoint_iterations", V_RAW, "N...",
     "output.checkpoint_iterations"},
    {"--sh_degree", NULL, O_VALUE, TRAINS, "model.sh_degree", V_RAW, "N", "model.sh_degree"},
    {"--ply", NULL, O_VALUE, C(CS_CMD_RENDER) | C(CS_CMD_BENCH) | C(CS_CMD_INFO) | C(CS_CMD_EXPORT), NULL, V_NONE, "FILE",
     "a Gaussian scene: PLY, compressed PLY, .spz or .splat"},
    {"--split", NULL, O_VALUE, C(CS_CMD_RENDER), NULL, V_NONE, "train|test|all", "views to render (default test)"},
    {"--orbit", NULL, O_VALUE, C(CS_CMD_RENDER), NULL, V_NONE, "N",
     "N frames circling the scene instead (OUT/orbit/orbit_000.png ..., contact_sheet.png)"},
    {"--depth-maps", NULL, O_FLAG, C(CS_CMD_RENDER), NULL, V_NONE, NULL,
     "also each view's expected and median depth as 16-bit PNGs (<name>_depth_mean.png, _depth_median.png; "
     "depth_scale.json gives the scale)"},
    {"--iters", NULL, O_VALUE, C(CS_CMD_BENCH), NULL, V_NONE, "N", "timed iterations (default 20)"},
    {"--iters", NULL, O_VALUE, C(CS_CMD_METRICS), NULL, V_NONE, "N", "also time LPIPS N times: \"lpips_ms\", the median"},
    {"--view", NULL, O_VALUE, C(CS_CMD_BENCH), NULL, V_NONE, "I", "camera index (default 0)"},
    {"--set", NULL, O_VALUE, OPENS_DEVICE | C(CS_CMD_BATCH) | C(CS_CMD_EXPORT) | C(CS_CMD_PARTITION), "", V_RAW, "KEY=VALUE",
     "any config key (clsplat config --list); partition passes them on to every block's job"},
    {"--devices", NULL, O_VALUE, C(CS_CMD_BATCH), NULL, V_NONE, "all|P:D,...",
     "devices to run jobs on (default all: every GPU, else the CPU)"},
    {"--per-device", NULL, O_VALUE, C(CS_CMD_BATCH), NULL, V_NONE, "K",
     "at most K jobs at once on a GPU; a job without its own budget gets 1/K of the memory"},
    {"--task", NULL, O_VALUE, C(CS_CMD_BATCH), NULL, V_NONE, "I", "run only job I (0-based; a Slurm array task)"},
    {"--collect", NULL, O_FLAG, C(CS_CMD_BATCH), NULL, V_NONE, NULL, "rebuild ROOT/summary.* from ROOT, run nothing"},
    {"--device", NULL, O_VALUE, OPENS_DEVICE, "device.id", V_STRING, "P:D|NAME", "OpenCL device (device.id)"},
    {"--kernel-dir", NULL, O_VALUE, OPENS_DEVICE, NULL, V_NONE, "DIR", "load the .cl files from DIR"},
    {"--no-kernel-cache", NULL, O_FLAG, OPENS_DEVICE, NULL, V_NONE, NULL, "do not use the kernel binary cache"},
    {"--list", NULL, O_FLAG, C(CS_CMD_CONFIG), NULL, V_NONE, NULL, "every config key: default, range, meaning"},
    {"--help", "-h", O_FLAG, ~0u, NULL, V_NONE, NULL, "this help"},
};
#define NOPTS (sizeof OPTS / sizeof OPTS[0])

static const struct {
    const char *name, *usage, *what;
} CMDS[CS_CMD_COUNT] = {
    [CS_CMD_DEVICES] = {"devices", "clsplat devices", "list OpenCL platforms and devices (id P:D, memory, paths)"},
    [CS_CMD_TRAIN] = {"train", "clsplat train [-c CONFIG] -s DATA [-o OUT] [--set key=value ...] [options]",
                      "train a Gaussian Splatting scene; outputs in OUT"},
    [CS_CMD_RENDER] = {"render", "clsplat render -m OUT [-o DIR] [--split train|test|all [--depth-maps] [--no-exposure] | --orbit N]   or\n"
                                 "       clsplat render --ply FILE -s DATA -o DIR [--split ... | --orbit N]",
                       "render a model's views to PNG (with -m: OUT/<split>/ours_N/renders and gt)"},
    [CS_CMD_EVAL] = {"eval", "clsplat eval -m OUT [-r N] [--set key=value]",
                     "evaluate a trained model on its test views; appends to OUT/metrics.json"},
    [CS_CMD_INFO] = {"info", "clsplat info FILE", "format, count, SH degree, bounds, 3D filter of a PLY, compressed PLY, .spz or .splat"},
    [CS_CMD_BENCH] = {"bench", "clsplat bench -s DATA --ply FILE [--iters N] [--view I]",
                      "per-stage medians of one training iteration"},
    [CS_CMD_TUNE] = {"tune", "clsplat tune [-c CONFIG] [--set key=value]",
                     "measure tile and work-group sizes for the device and store them"},
    [CS_CMD_CONFIG] = {"config", "clsplat config --list", "print every config key with its default, range and meaning"},
    [CS_CMD_BATCH] = {"batch", "clsplat batch JOBS.json -o ROOT [--devices all|P:D,...] [--task I] [--collect]   or\n"
                               "       clsplat batch [-c CONFIG] -o ROOT [--set key=value ...] SCENE_DIR...",
                      "train many scenes: every GPU, jobs packed by memory, restartable; ROOT/summary.json"},
    [CS_CMD_METRICS] = {"metrics", "clsplat metrics IMAGE_A IMAGE_B [--set eval.lpips_weights=FILE] [--iters N]",
                        "PSNR, SSIM and LPIPS of two images of one size, as one JSON object"},
    [CS_CMD_EXPORT] = {"export", "clsplat export (-m OUT | --ply FILE) --format spz|splat|compressed-ply|ply [-o FILE] [--bake]",
                       "write a trained scene in a web viewer's format (.spz, .splat, compressed PLY) or a baked PLY"},
    [CS_CMD_MESH] = {"mesh", "clsplat mesh -m OUT [-o mesh.ply|mesh.glb] [--voxel SIZE | --grid N] [--max-triangles N] "
                             "[--depth median|mean] [--max-depth D] [--contract S] [--focus | --no-focus] [--keep-components N] [--consistency N] [--carve W] [--carve-dropped] [--shell-fit] [--near-cut F] [--refine N] [--refine-samples N] [--refine-dssim W] [--pseudo-views N] [--no-exposure] [--refine-exposure] [--refine-geometry N] [--refine-step S|S1,S2,..|auto] [--refine-laplacian W] [--refine-normal W] [--texture R|auto] [--refine-texture N] [--shell L] [--from MESH.ply] [--psnr] [--psnr-samples N] [--renders DIR] [--profile]",
                     "a coloured triangle mesh of a trained model (depth fusion, marching tetrahedra), as a PLY"},
    [CS_CMD_VIEW] = {"view", "clsplat view -m OUT [--port PORT] [--host ADDR]",
                     "serve a run's (or batch folder's) live page over HTTP, read-only, until Ctrl-C"},
    [CS_CMD_PARTITION] = {"partition", "clsplat partition -s DATA -o PLAN --blocks N [--eval] [--gaussians N [--headroom F]] [--margin F] [--min-share F] [-c CONFIG] [--set key=value ...]",
                          "cut a scene into blocks for block training: PLAN/plan.json and PLAN/jobs.json for clsplat batch"},
    [CS_CMD_MERGE] = {"merge", "clsplat merge PLAN -m ROOT -o OUT [--finetune N]",
                      "merge the blocks trained in ROOT (clsplat batch PLAN/jobs.json -o ROOT) into one model, evaluated on the whole scene"},
    [CS_CMD_REPORT] = {"report", "clsplat report -m OUT [-o FILE]",
                       "one self-contained HTML page of a run (charts, evaluations, previews, config), OUT/report.html"},
};

void cs_cli_usage(FILE *out)
{
    fprintf(out, "usage: clsplat <command> [options]   (clsplat <command> -h for its options)\ncommands:\n");
    for (int c = 0; c < CS_CMD_COUNT; c++) fprintf(out, "  %-8s %s\n", CMDS[c].name, CMDS[c].what);
    fprintf(out, "clsplat --version prints the version. README.md has a guide and the config keys.\n");
}

void cs_cli_help(cs_command c, FILE *out)
{
    fprintf(out, "usage: %s\n%s.\noptions:\n", CMDS[c].usage, CMDS[c].what);
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_desc *o = &OPTS[i];
        if (!(o->commands & C(c))) continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
                 o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(out, "  %-34s %s\n", left, o->help);
    }
    if (c == CS_CMD_TRAIN)
        fprintf(out, "settings: built-in defaults < config file < the flags above and --set, in order;\n"
                     "optim.iterations_on_cpu never overrides an explicit --iterations / --set optim.iterations.\n"
                     "Keys: clsplat config --list\n");
}

static int find_command(const char *name)
{
    for (int c = 0; c < CS_CMD_COUNT; c++)
        if (!strcmp(CMDS[c].name, name)) return c;
    return -1;
}

static const opt_desc *find_opt(const char *arg, cs_command c)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_desc *o = &OPTS[i];
        if ((!strcmp(arg, o->name) || (o->alias && !strcmp(arg, o->alias))) && (o->commands & C(c))) return o;
    }
    return NULL;
}

/* The message for FLAG, which is no option of command C: the closest of C's options when one
 * is near ("did you mean"). */
static int unknown_option(const char *flag, cs_command c)
{
    const char *best = NULL;
    size_t bd = (size_t)-1, len = strlen(flag);
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_desc *o = &OPTS[i];
        if (!(o->commands & C(c)) || o->commands == ~0u) continue;
        size_t d = cs_edit_distance(flag, o->name);
        if (d < bd) bd = d, best = o->name;
    }
    if (best && bd <= (len > 8 ? 3 : len > 4 ? 2 : 1))
        return cs_fail("'%s' is not an option of 'clsplat %s' (did you mean '%s'? clsplat %s --help lists them)", flag,
                       CMDS[c].name, best, CMDS[c].name);
    return cs_fail("'%s' is not an option of 'clsplat %s' (clsplat %s --help lists them)", flag, CMDS[c].name,
                   CMDS[c].name);
}

/* A whole decimal integer >= MIN (and < 2^31) for option OPT. */
static int parse_int(const char *opt, const char *text, int min, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > 2147483647L)
        return cs_fail("%s: '%s' is not a whole number >= %d", opt, text, min);
    *out = (int)v;
    return 0;
}

/* samples a side of a pixel (mesh --psnr-samples, --refine-samples): 1 to the rasterizer's most */
static int parse_samples(const char *opt, const char *text, int *out)
{
    if (parse_int(opt, text, 1, out) || *out > CS_MESH_RASTER_MAX_SAMPLES)
        return cs_fail("%s %s: from 1 to %d samples a side", opt, text, CS_MESH_RASTER_MAX_SAMPLES);
    return 0;
}

/* a number in [0, 1] */
static int parse_unit(const char *opt, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= 0 && v <= 1))
        return cs_fail("%s: '%s' is not a number from 0 to 1", opt, text);
    *out = v;
    return 0;
}

/* a number >= 0 */
static int parse_nonneg(const char *opt, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= 0) || !isfinite(v))
        return cs_fail("%s: '%s' is not a number >= 0", opt, text);
    *out = v;
    return 0;
}

static int parse_pos(const char *opt, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v > 0) || !isfinite(v))
        return cs_fail("%s: '%s' is not a positive number", opt, text);
    *out = v;
    return 0;
}

/* --refine-step S, auto (mesh_step.h's list) or S1,S2,.. (each positive, at most CS_MESH_STEPS_MAX) */
static int parse_steps(const char *opt, const char *text, cs_args *a)
{
    _Static_assert(sizeof a->refine_steps / sizeof a->refine_steps[0] == CS_MESH_STEPS_MAX, "the steps' room");
    const double autos[CS_MESH_STEPS_AUTO_N] = CS_MESH_STEPS_AUTO;
    a->n_refine_steps = 0;
    if (!strcmp(text, "auto")) {
        memcpy(a->refine_steps, autos, sizeof autos), a->n_refine_steps = CS_MESH_STEPS_AUTO_N;
        return 0;
    }
    char buf[256], *save = NULL;
    if (strlen(text) >= sizeof buf) return cs_fail("%s: '%.40s...' is too long", opt, text);
    snprintf(buf, sizeof buf, "%s", text);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (a->n_refine_steps == CS_MESH_STEPS_MAX)
            return cs_fail("%s: '%s' lists more than %d steps", opt, text, CS_MESH_STEPS_MAX);
        if (parse_pos(opt, t, &a->refine_steps[a->n_refine_steps++])) return -1;
    }
    if (!a->n_refine_steps || text[strlen(text) - 1] == ',' || text[0] == ',' || strstr(text, ",,"))
        return cs_fail("%s: '%s' is not a step, a list of steps (S1,S2,..) or auto", opt, text);
    a->refine_step = a->refine_steps[0];
    return 0;
}

static int add_assign(cs_args *a, const char *flag, const char *key, const char *value)
{
    if (a->n_assign == CS_MAX_ASSIGN) return cs_fail("too many settings on the command line");
    size_t n = strlen(key) + strlen(value) + 2;
    char *s = malloc(n);
    if (!s) return cs_fail("out of host memory");
    snprintf(s, n, "%s%s%s", key, key[0] ? "=" : "", value);
    a->assign[a->n_assign] = s;
    a->assign_from[a->n_assign++] = flag;
    return 0;
}

/* The assignment an option with a config key makes from its value(s). */
static int assign_value(cs_args *a, const opt_desc *o, const char *flag, char **vals, int nv)
{
    if (o->as == V_TRUE) return add_assign(a, flag, o->key, "true");
    if (o->as == V_DEVICE) { /* graphdeco's --data_device: where the training images live */
        if (strcmp(vals[0], "cpu") && strcmp(vals[0], "cuda"))
            return cs_fail("%s: '%s' is cpu (images in host memory) or cuda (on the device)", flag, vals[0]);
        return add_assign(a, flag, o->key, !strcmp(vals[0], "cpu") ? "\"host\"" : "\"device\"");
    }
    if (o->as == V_OPTIMIZER) { /* graphdeco's --optimizer_type */
        if (strcmp(vals[0], "default") && strcmp(vals[0], "sparse_adam"))
            return cs_fail("%s: '%s' is default (Adam over every Gaussian) or sparse_adam (over those the view sees)",
                           flag, vals[0]);
        return add_assign(a, flag, o->key, !strcmp(vals[0], "sparse_adam") ? "true" : "false");
    }
    if (o->as == V_STRING) {
        json_t *js = json_string(vals[0]);
        if (!js) return cs_fail("%s: the value is not valid UTF-8 text", flag);
        char *q = json_dumps(js, JSON_ENCODE_ANY);
        json_decref(js);
        int r = q ? add_assign(a, flag, o->key, q) : cs_fail("out of host memory");
        free(q);
        return r;
    }
    if (o->kind != O_LIST) return add_assign(a, flag, o->key, vals[0]);
    char buf[1024] = "[";
    for (int i = 0; i < nv; i++) {
        int v;
        if (nv == 1 && !strcmp(vals[i], "-1")) break; /* graphdeco's "-1": no marks */
        if (parse_int(flag, vals[i], 0, &v)) return -1;
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof buf - used, "%s%d", i ? "," : "", v);
    }
    strncat(buf, "]", sizeof buf - strlen(buf) - 1);
    return add_assign(a, flag, o->key, buf);
}

/* An option of the command itself. */
static int own_option(cs_args *a, const opt_desc *o, const char *flag, const char *v)
{
    const char *n = o->name;
    if (!strcmp(n, "--help")) a->help = true;
    else if (!strcmp(n, "--force")) a->force = true;
    else if (!strcmp(n, "--list")) a->list = true;
    else if (!strcmp(n, "--no-kernel-cache")) a->no_cache = true;
    else if (!strcmp(n, "--config")) a->config = v;
    else if (!strcmp(n, "--resume")) a->resume = v;
    else if (!strcmp(n, "--kernel-dir")) a->kernel_dir = v;
    else if (!strcmp(n, "--ply")) a->ply = v;
    else if (!strcmp(n, "--model")) a->model = v;
    else if (!strcmp(n, "--output")) a->out = v;
    else if (!strcmp(n, "--split")) a->split = v;
    else if (!strcmp(n, "--iters")) return a->iters_set = true, parse_int(flag, v, 1, &a->iters);
    else if (!strcmp(n, "--view") && a->command == CS_CMD_TRAIN) return a->serve = true, parse_int(flag, v, 0, &a->port);
    else if (!strcmp(n, "--view")) return parse_int(flag, v, 0, &a->view);
    else if (!strcmp(n, "--port")) return parse_int(flag, v, 0, &a->port);
    else if (!strcmp(n, "--host")) a->host = v;
    else if (!strcmp(n, "--devices")) a->devices = v;
    else if (!strcmp(n, "--collect")) a->collect = true;
    else if (!strcmp(n, "--format")) a->format = v;
    else if (!strcmp(n, "--orbit")) return parse_int(flag, v, 1, &a->orbit);
    else if (!strcmp(n, "--bake")) a->bake = true;
    else if (!strcmp(n, "--depth-maps")) a->depth_maps = true;
    else if (!strcmp(n, "--task")) return parse_int(flag, v, 0, &a->task);
    else if (!strcmp(n, "--per-device")) return parse_int(flag, v, 1, &a->per_device);
    else if (!strcmp(n, "--voxel")) return parse_pos(flag, v, &a->voxel);
    else if (!strcmp(n, "--max-depth")) return parse_pos(flag, v, &a->max_depth);
    else if (!strcmp(n, "--contract")) return parse_nonneg(flag, v, &a->contract);
    else if (!strcmp(n, "--trunc")) return parse_pos(flag, v, &a->trunc);
    else if (!strcmp(n, "--volume-mb")) return parse_pos(flag, v, &a->volume_mb);
    else if (!strcmp(n, "--grid")) return parse_int(flag, v, 2, &a->grid);
    else if (!strcmp(n, "--depth")) a->depth = v;
    else if (!strcmp(n, "--max-triangles")) return parse_int(flag, v, 1, &a->max_triangles);
    else if (!strcmp(n, "--keep-components")) return parse_int(flag, v, 1, &a->keep_components);
    else if (!strcmp(n, "--refine")) return parse_int(flag, v, 1, &a->refine);
    else if (!strcmp(n, "--shell")) {
        if (parse_int(flag, v, 0, &a->shell)) return -1;
        return a->shell > CS_MESH_SHELL_MAX_LEVEL ? cs_fail("%s %s: a level from 0 to %d (20 x 4^L triangles)", flag, v,
                                                            CS_MESH_SHELL_MAX_LEVEL)
                                                  : 0;
    }
    else if (!strcmp(n, "--texture")) {
        if (!strcmp(v, "auto")) a->texture = -1;
        else if (parse_int(flag, v, 1, &a->texture) || a->texture > CS_TEX_MAX_R)
            return cs_fail("%s %s: subdivisions from 1 to %d, or auto", flag, v, CS_TEX_MAX_R);
    }
    else if (!strcmp(n, "--near-cut")) return parse_nonneg(flag, v, &a->near_cut);
    else if (!strcmp(n, "--consistency")) {
        if (parse_int(flag, v, 0, &a->consistency) || a->consistency > CS_DCHECK_NEIGHBOURS)
            return cs_fail("%s %s: from 0 to %d views", flag, v, CS_DCHECK_NEIGHBOURS);
    }
    else if (!strcmp(n, "--refine-texture")) return parse_int(flag, v, 1, &a->refine_texture);
    else if (!strcmp(n, "--refine-dssim")) return parse_unit(flag, v, &a->refine_dssim);
    else if (!strcmp(n, "--carve")) return parse_nonneg(flag, v, &a->carve);
    else if (!strcmp(n, "--carve-dropped")) a->carve_dropped = true;
    else if (!strcmp(n, "--shell-fit")) a->shell_fit = true;
    else if (!strcmp(n, "--no-exposure")) a->no_exposure = true;
    else if (!strcmp(n, "--refine-exposure")) a->refine_exposure = true;
    else if (!strcmp(n, "--pseudo-views")) return parse_int(flag, v, 0, &a->pseudo_views);
    else if (!strcmp(n, "--refine-geometry")) return parse_int(flag, v, 0, &a->refine_geometry);
    else if (!strcmp(n, "--refine-step")) return parse_steps(flag, v, a);
    else if (!strcmp(n, "--refine-laplacian")) return parse_nonneg(flag, v, &a->refine_laplacian);
    else if (!strcmp(n, "--refine-normal")) return parse_nonneg(flag, v, &a->refine_normal);
    else if (!strcmp(n, "--psnr")) a->psnr = true;
    else if (!strcmp(n, "--from")) a->from = v;
    else if (!strcmp(n, "--refine-samples")) return parse_samples(flag, v, &a->refine_samples);
    else if (!strcmp(n, "--psnr-samples")) {
        if (parse_samples(flag, v, &a->psnr_samples)) return -1;
        a->psnr = true;
    }
    else if (!strcmp(n, "--profile")) a->profile = true;
    else if (!strcmp(n, "--focus")) a->focus = 1;
    else if (!strcmp(n, "--no-focus")) a->focus = 0;
    else if (!strcmp(n, "--blocks")) return parse_int(flag, v, 1, &a->blocks);
    else if (!strcmp(n, "--finetune")) return parse_int(flag, v, 1, &a->finetune);
    else if (!strcmp(n, "--gaussians")) return parse_int(flag, v, 1, &a->gaussians);
    else if (!strcmp(n, "--margin")) return parse_pos(flag, v, &a->margin);
    else if (!strcmp(n, "--headroom")) return parse_pos(flag, v, &a->headroom);
    else if (!strcmp(n, "--min-share")) return parse_pos(flag, v, &a->min_share);
    else if (!strcmp(n, "--renders")) a->renders = v, a->psnr = true;
    return 0;
}

int cs_cli_parse(int argc, char **argv, cs_args *a)
{
    memset(a, 0, sizeof *a);
    a->iters = 20;
    a->shell = -1;
    a->near_cut = CS_MESH_NEAR_CUT;
    a->consistency = -1;
    a->focus = -1;
    a->refine_dssim = 0.2;
    a->refine_geometry = -1;
    a->refine_step = -1, a->refine_laplacian = CS_MESH_GEOM_LAPLACIAN, a->refine_normal = CS_MESH_GEOM_NORMAL;
    a->task = -1;
    a->margin = a->min_share = -1;
    a->argv0 = argc > 0 ? argv[0] : "clsplat";
    int c = argc > 1 ? find_command(argv[1]) : -1;
    if (c < 0) return cs_fail("unknown command '%s' (clsplat --help lists them)", argc > 1 ? argv[1] : "");
    a->command = (cs_command)c;
    cs_config scratch;
    cs_config_defaults(&scratch);
    for (int i = 2; i < argc; i++) {
        const char *flag = argv[i];
        const opt_desc *o = find_opt(flag, a->command);
        if (!o && c == CS_CMD_INFO && flag[0] != '-' && !a->ply) {
            a->ply = flag;
            continue;
        }
        if (!o && (c == CS_CMD_BATCH || c == CS_CMD_METRICS || c == CS_CMD_MERGE) && flag[0] != '-') {
            if (a->n_positional == CS_MAX_POSITIONAL) return cs_fail("more than %d scene folders", CS_MAX_POSITIONAL);
            a->positional[a->n_positional++] = flag;
            continue;
        }
        if (!o) return unknown_option(flag, a->command);
        char *vals[CS_MAX_MARKS];
        int nv = 0;
        if (o->kind == O_VALUE) {
            if (i + 1 >= argc) return cs_fail("%s needs a value (%s)", flag, o->arg);
            vals[nv++] = argv[++i];
        } else if (o->kind == O_LIST) {
            while (i + 1 < argc && (argv[i + 1][0] != '-' || !strcmp(argv[i + 1], "-1")) && nv < CS_MAX_MARKS)
                vals[nv++] = argv[++i];
            if (!nv) return cs_fail("%s needs at least one value (%s)", flag, o->arg);
        }
        int r = !o->key ? own_option(a, o, flag, nv ? vals[0] : NULL)
              : !o->key[0] ? add_assign(a, flag, "", vals[0]) /* --set */
                           : assign_value(a, o, flag, vals, nv);
        if (r) return -1;
        /* a value no config takes is a usage error here, before any file is read */
        if (o->key && a->n_assign > 0 && cs_config_set_from(&scratch, a->assign[a->n_assign - 1], flag)) return -1;
    }
    return 0;
}

void cs_cli_free(cs_args *a)
{
    for (int i = 0; i < a->n_assign; i++) free(a->assign[i]);
    a->n_assign = 0;
}

/* the key of an assignment */
static void key_of(const char *assign, char *out, size_t n)
{
    const char *eq = strchr(assign, '=');
    size_t len = eq ? (size_t)(eq - assign) : 0;
    if (len >= n) len = n - 1;
    memcpy(out, assign, len);
    out[len] = '\0';
}

bool cs_cli_sets(const cs_args *a, const char *key)
{
    char k[256];
    for (int i = 0; i < a->n_assign; i++) {
        key_of(a->assign[i], k, sizeof k);
        if (!strcmp(k, key)) return true;
    }
    return false;
}

int cs_cli_apply(const cs_args *a, cs_config *cfg)
{
    for (int i = 0; i < a->n_assign; i++)
        if (cs_config_set_from(cfg, a->assign[i], a->assign_from[i])) return -1;
    /* an explicit iteration count wins over the config file's count for CPUs, and is the count
       trained whatever optim.steps_scale (which then shapes only the schedule) */
    if (cs_cli_sets(a, "optim.iterations")) cs_config_explicit_iterations(cfg, cs_cli_sets(a, "optim.iterations_on_cpu"));
    /* so are its marks: --test_iterations 20 40 evaluates at 20 and 40 */
    static const char *const marks[] = {"eval.test_iterations", "output.save_iterations", "output.checkpoint_iterations"};
    for (int i = 0; i < 3; i++)
        if (cs_cli_sets(a, marks[i]) && cs_config_explicit_marks(cfg, marks[i])) return -1;
    return 0;
}
