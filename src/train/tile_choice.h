/* tile_choice: device.tile_choice. The rasterizer's tile decides how much work a Gaussian
 * costs: 8x8 tiles blend a quarter of the pixels per pair where Gaussians are small on screen
 * (a view trained at low resolution, an object scene), 16x16 tiles sort fewer pairs where they
 * are large. Neither wins everywhere, so the trainer builds both and times a pass of the
 * iteration's own view with each now and then, keeping the faster. */
#ifndef CS_TILE_CHOICE_H
#define CS_TILE_CHOICE_H

#include <stdbool.h>

#include "config.h"
#include "kernels.h"
#include "loss.h"
#include "render.h"

#define CS_TILE_CHOICE_EVERY 1000 /* iterations between measurements within a phase */

typedef struct {
    bool on;
    const cs_kernels *main; /* the run's (device.tune's tile) */
    cs_kernels alt;         /* the other tile's */
    const cs_kernels *cur;  /* the renderer's now */
    int last_iter, last_factor;
    double alt_seconds;     /* the other kernels' build */
} cs_tile_choice;

/* Builds the other tile's kernels (16 when MAIN's is 8, else 8, with MAIN's work-groups) when
 * MODE (CS_TILES_*) asks for a choice on this device and the run need not be REPRODUCIBLE
 * (optim.deterministic); otherwise a choice that never changes. */
int cs_tile_choice_open(cs_tile_choice *tc, cs_cl *cl, const cs_kernels *main, int mode, bool reproducible);

/* Whether iteration ITER (resolution divisor FACTOR) should measure: the first, a new divisor,
 * or CS_TILE_CHOICE_EVERY iterations since the last measurement. */
bool cs_tile_choice_due(const cs_tile_choice *tc, int iter, int factor);

/* Times training passes of view V (as cs_train_pass runs them, without the loss sums) with each
 * tile's kernels, and leaves R on the faster (the current one unless the other is 3% faster).
 * The passes leave nothing behind but gradients, which the iteration's own pass overwrites.
 * The other tile is dropped for the rest of the run when its pass fails (its scratch did not fit)
 * or when the run holds more than half its memory budget (8x8 tiles need more pair scratch). */
int cs_tile_choice_measure(cs_tile_choice *tc, cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v,
                           int active_degree, const float bg[3], cs_buf *gt, unsigned gt_off, float lambda, int iter,
                           int factor);

/* The iteration's own pass (cs_train_pass) with the chosen tile. The model grows between
 * measurements, so while the other tile's kernels are in use each pass first checks the run's
 * memory: past half its budget, or when the pass fails (the larger scratch did not fit), the
 * other tile is dropped for good and the pass runs (again) with the run's own kernels. */
int cs_tile_choice_pass(cs_tile_choice *tc, cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v,
                        int active_degree, const float bg[3], cs_buf *gt, unsigned gt_off, float lambda, bool want_loss);

void cs_tile_choice_close(cs_tile_choice *tc);

#endif
