/* mesh_pseudo: views between the training views, drawn by the splat model, as more targets for
 * the mesh's refinement (mesh --pseudo-views N). A mesh fitted to the photos alone follows what
 * each training view sees of it; the splat model draws places between those views more
 * faithfully than the mesh does, so its drawings there are extra views the mesh has to agree
 * with. Each training view gets N cameras, one halfway to each of its N nearest training views
 * (centres linear, rotations by spherical interpolation, the first view's intrinsics). */
#ifndef CS_MESH_PSEUDO_H
#define CS_MESH_PSEUDO_H

#include "dataset.h"
#include "image.h"
#include "viewer.h"

typedef struct {
    cs_camera *cams;
    cs_image *imgs; /* the model's drawing of each camera (RGB and the model's opacity as the weight, 8 bit) */
    int n, per_view;
    int capped; /* per_view was lowered to keep the drawings under the memory bound */
} cs_mesh_pseudo;

/* The camera between A and B at fraction F (0: A, 1: B): centre on the segment, rotation on
 * the shortest arc between theirs, A's size and intrinsics, no lens, no photo. */
void cs_mesh_pseudo_between(const cs_camera *a, const cs_camera *b, double f, cs_camera *out);
/* N cameras for each of SCENE's training views (halfway to its N nearest, by centre) into
 * P->cams (P->imgs left empty), fewer a view (P->per_view) where there are not N other training
 * views, or where their drawings (4 bytes a pixel) would take more than MAX_BYTES (P->capped). -1 with a message (out of
 * memory); 0 with none when the scene has fewer than two training views. */
int cs_mesh_pseudo_cameras(const cs_scene *scene, int n, double max_bytes, cs_mesh_pseudo *p);
/* The cameras drawn by W's model (SH up to DEGREE) into P->imgs: RGB, and as the weight its
 * opacity, so what it leaves see-through (its background colour) is no target. */
int cs_mesh_pseudo_draw(cs_viewer *w, const cs_scene *scene, int degree, cs_mesh_pseudo *p);
void cs_mesh_pseudo_free(cs_mesh_pseudo *p);

#endif
