/* orbit: cameras on a circle around a dataset's scene, for a look at a trained model without a
 * viewer (clsplat render --orbit N). The centre is the point nearest to every training
 * camera's optical axis (least squares; their centres' mean when the axes are parallel), "up"
 * the mean of the cameras' up directions; the circle lies at the cameras' mean height above the
 * centre and their mean horizontal distance from it, starting at the first camera's azimuth.
 * Every orbit camera looks at the centre with the first training camera's intrinsics. */
#ifndef CS_ORBIT_H
#define CS_ORBIT_H

#include "dataset.h"

/* N cameras into OUT (named orbit_000.png ...). -1 with a message when the scene has no
 * training camera. */
int cs_orbit_cameras(const cs_scene *scene, int n, cs_camera *out);
/* The centre and up direction cs_orbit_cameras uses. */
int cs_orbit_frame(const cs_scene *scene, double centre[3], double up[3]);

#endif
