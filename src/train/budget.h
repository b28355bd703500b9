/* budget: the Gaussian target of a run whose budget is derived from the scene
 * (densify.budget_momentum), after DashGaussian's momentum rule: the target starts at a
 * multiple of the initial count and, after each refinement, grows toward what the
 * refinements keep asking for. The refinements' curve (densify.budget's line from
 * densify.from to densify.until) then leads to this target instead of a fixed number. Pure
 * arithmetic on integers: the unit tests drive it without a device, and the target is all the
 * state a checkpoint keeps for it (cs_model.target). */
#ifndef CS_BUDGET_H
#define CS_BUDGET_H

#include "config.h"

/* The share of the target a refinement keeps from the one before (DashGaussian's 0.98): with
   W wanted at every refinement the target settles at W / (1 - CS_BUDGET_KEEP). */
#define CS_BUDGET_KEEP 0.98

/* The starting target of a run from INITIAL Gaussians: INITIAL x (1 + densify.budget_momentum),
   at most densify.budget when set, MAX_ROWS (the memory plan; 0: no limit) and
   CS_CKPT_MAX_GAUSSIANS; 0 when
   densify.budget_momentum is 0 (no momentum: densify.budget's fixed line, or none). */
int cs_budget_start(const cs_densify_cfg *d, int initial, int max_rows);
/* The target after a refinement whose candidates asked for WANTED new Gaussians (before any
   budget held them back): the larger of TARGET and CS_BUDGET_KEEP x TARGET + WANTED (WANTED
   counted at most TARGET, so one refinement at most doubles it), within the same caps as
   cs_budget_start. TARGET 0 stays 0. */
int cs_budget_update(const cs_densify_cfg *d, int target, long wanted, int max_rows);
/* The Gaussians a refinement at FRACTION (0-1) of the budget's line may leave: TARGET x
   FRACTION rounded up; 0 (no limit) when TARGET is 0. */
int cs_budget_rows(int target, double fraction);

#endif
