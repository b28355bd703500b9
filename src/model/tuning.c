/* tuning: the stored tile and work-group choice of a device (a small JSON file per device,
 * driver, kernel sources and kernel options beside the kernel binary cache), and building the
 * kernels with it. Reading a choice never measures: tune.c does that. */
#include "tuning.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cl_program.h"
#include "util.h"

/* ---- the cache ---------------------------------------------------------------------------- */

int cs_tuning_path(cs_cl *cl, const cs_kernel_opts *o, char *out, size_t n)
{
    uint64_t src;
    if (!cl->use_cache) {
        out[0] = 0;
        return 0;
    }
    /* the sources of the programs the tuning measures (tune.c: render, scan, optim) */
    const int measured[] = {CS_PROG_render, CS_PROG_scan, CS_PROG_optim};
    src = CS_HASH_SEED;
    for (size_t i = 0; i < sizeof measured / sizeof measured[0]; i++) {
        uint64_t h;
        if (cs_cl_sources_hash(cl, cs_program_files[measured[i]], &h)) return -1;
        src = cs_hash64(&h, sizeof h, src);
    }
    char id[2400], opts[1024];
    cs_kernel_opts_string(o, 1, opts, sizeof opts);
    snprintf(id, sizeof id, "%d|%s|%s|%s|%s|%s|%d|%d|%016llx|%s", CS_TUNING_FORMAT, cl->name, cl->vendor, cl->driver,
             cl->platform_version, cl->device_version, (int)cl->atomics, cl->fast_math, (unsigned long long)src, opts);
    snprintf(out, n, "%s/tune-%016llx.json", cl->cache_dir, (unsigned long long)cs_hash64(id, strlen(id), CS_HASH_SEED));
    return 0;
}

/* 0 with T's tile and sizes from PATH; 1 when absent or unusable (a warning says why). */
int cs_tuning_load(const char *path, cs_tuning *t)
{
    if (!path[0]) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    fclose(f);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    int ok = json_is_object(j) && json_integer_value(json_object_get(j, "format")) == CS_TUNING_FORMAT;
    json_t *wg = ok ? json_object_get(j, "work_groups") : NULL;
    if (ok) {
        t->tile = (int)json_integer_value(json_object_get(j, "tile"));
        ok = t->tile == 8 || t->tile == 16;
    }
    for (int g = 0; g < CS_WG_COUNT && ok; g++) {
        json_int_t v = json_integer_value(json_object_get(wg, cs_wg_names[g]));
        ok = v > 0 && v <= 65536 && !(v & (v - 1));
        t->wg[g] = (size_t)v;
    }
    json_decref(j);
    if (!ok) fprintf(stderr, "warning: ignoring the tuning file %s (unreadable or from another format)\n", path);
    return ok ? 0 : 1;
}

void cs_tuning_store(cs_cl *cl, const cs_tuning *t)
{
    if (!t->path[0]) return;
    json_t *j = json_object(), *wg = json_object(), *tiles = json_object(), *st = json_object();
    json_object_set_new(j, "format", json_integer(CS_TUNING_FORMAT));
    json_object_set_new(j, "device", json_string(cl->name));
    json_object_set_new(j, "driver", json_string(cl->driver));
    json_object_set_new(j, "tile", json_integer(t->tile));
    for (int g = 0; g < CS_WG_COUNT; g++) json_object_set_new(wg, cs_wg_names[g], json_integer((json_int_t)t->wg[g]));
    json_object_set_new(j, "work_groups", wg);
    char key[32];
    for (int i = 0; i < CS_TUNE_TILES; i++) {
        snprintf(key, sizeof key, "%d", t->tiles[i]);
        json_object_set_new(tiles, key, t->tile_ms[i] >= 0 ? json_real(t->tile_ms[i]) : json_null());
    }
    json_object_set_new(j, "pass_ms_by_tile", tiles);
    for (int g = 0; g < CS_WG_COUNT; g++) {
        json_t *row = json_object();
        for (int c = 0; c < CS_TUNE_WGS; c++) {
            snprintf(key, sizeof key, "%zu", t->wgs[c]);
            json_object_set_new(row, key, t->wg_ms[g][c] >= 0 ? json_real(t->wg_ms[g][c]) : json_null());
        }
        json_object_set_new(st, cs_wg_names[g], row);
    }
    json_object_set_new(j, "stage_ms_by_work_group", st);
    json_object_set_new(j, "workload", json_pack("{s:i,s:i,s:i,s:i}", "gaussians", t->n_gaussians, "width", t->width,
                                                 "height", t->height, "runs", t->reps));
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(j);
    /* a cache that cannot be written only costs a measurement next time */
    if (text && cs_mkdirs(cl->cache_dir) == 0 && cs_write_file_atomic(t->path, text, strlen(text)))
        fprintf(stderr, "warning: %s\n", cs_last_error());
    free(text);
}

/* ---- policy ------------------------------------------------------------------------------- */

int cs_kernels_build_with(cs_cl *cl, const cs_kernel_opts *o, cs_tuning *t, cs_kernels *k)
{
    cs_kernel_opts b = *o;
    /* where loops stop early, 8x8 tiles by default: a quarter of the Gaussians a tile, and a
       work-item covers 2 pixels instead of 8, so its loops run about 10x fewer iterations */
    b.tile = t->tile ? t->tile : cl->loop_limited ? 8 : 0;
    if (cs_kernels_build(cl, &b, k)) return -1;
    if (t->source == CS_TUNED_DEFAULT) {
        memcpy(t->wg, k->wg, sizeof t->wg);
        t->tile = k->opts.tile;
        return 0;
    }
    size_t wg[CS_WG_COUNT];
    for (int g = 0; g < CS_WG_COUNT; g++) wg[g] = t->wg[g] < k->wg_max[g] ? t->wg[g] : k->wg_max[g];
    memcpy(t->wg, wg, sizeof wg);
    if (cs_kernels_set_wg(k, wg)) {
        cs_kernels_release(k);
        return -1;
    }
    return 0;
}

int cs_kernels_build_stored(cs_cl *cl, const cs_kernel_opts *o, int policy, cs_kernels *k, cs_tuning *out)
{
    cs_tuning local, *t = out ? out : &local;
    memset(t, 0, sizeof *t);
    if (policy != CS_TUNE_OFF && cs_tuning_path(cl, o, t->path, sizeof t->path)) return -1;
    if (policy != CS_TUNE_OFF && cs_tuning_load(t->path, t) == 0) {
        t->source = CS_TUNED_CACHE;
        return cs_kernels_build_with(cl, o, t, k);
    }
    memset(t->wg, 0, sizeof t->wg);
    t->tile = 0; /* an unusable file may have set it */
    t->source = CS_TUNED_DEFAULT;
    return cs_kernels_build_with(cl, o, t, k);
}

void cs_tuning_summary(const cs_tuning *t, FILE *out)
{
    static const char *const from[] = {"defaults", "from the tuning cache", "measured"};
    fprintf(out, "tuning: %dx%d tiles, work-groups", t->tile, t->tile);
    for (int g = 0; g < CS_WG_COUNT; g++) fprintf(out, "%s %s %zu", g ? "," : "", cs_wg_names[g], t->wg[g]);
    fprintf(out, " (%s", from[t->source]);
    if (t->source == CS_TUNED_MEASURED) fprintf(out, " in %.1f s", t->seconds);
    if (t->source != CS_TUNED_DEFAULT && t->path[0]) fprintf(out, "; %s", t->path);
    fprintf(out, ")\n");
}

void cs_tuning_report(const cs_tuning *t, FILE *out)
{
    if (t->source != CS_TUNED_MEASURED) return;
    fprintf(out, "synthetic view: %d Gaussians, %dx%d, %d runs each (medians)\n", t->n_gaussians, t->width, t->height,
            t->reps);
    for (int i = 0; i < CS_TUNE_TILES; i++) {
        if (t->tile_ms[i] < 0) fprintf(out, "  tile %2dx%-2d  cannot run on this device\n", t->tiles[i], t->tiles[i]);
        else fprintf(out, "  tile %2dx%-2d  training pass %8.3f ms%s\n", t->tiles[i], t->tiles[i], t->tile_ms[i],
                     t->tiles[i] == t->tile ? "  <" : "");
    }
    fprintf(out, "  %-12s", "work-group");
    for (int c = 0; c < CS_TUNE_WGS; c++) fprintf(out, " %9zu", t->wgs[c]);
    fprintf(out, "   (stage ms)\n");
    for (int g = 0; g < CS_WG_COUNT; g++) {
        fprintf(out, "  %-12s", cs_wg_names[g]);
        for (int c = 0; c < CS_TUNE_WGS; c++) {
            if (t->wg_ms[g][c] < 0) fprintf(out, " %9s", "-");
            else fprintf(out, " %8.3f%s", t->wg_ms[g][c], t->wgs[c] == t->wg[g] ? "<" : " ");
        }
        fprintf(out, "\n");
    }
}
