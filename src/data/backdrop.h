/* backdrop: the mean colour of the training photos' borders, for data.background "border": a
 * capture's plain backdrop (a studio sweep, a wall, the sky) then needs no Gaussians of its own
 * in front of the cameras to be drawn. */
#ifndef CS_BACKDROP_H
#define CS_BACKDROP_H

#include "dataset.h"

/* Photos the border colour is taken from, evenly spaced over the training views, and the share
   of each side its border band takes. */
#define CS_BACKDROP_PHOTOS 8
#define CS_BACKDROP_BAND 0.05

/* Sets RGB (0-1) to the mean colour of the outer CS_BACKDROP_BAND of up to CS_BACKDROP_PHOTOS
 * training photos, as stored (alpha, where there is one, weighs each pixel), and *PHOTOS to how
 * many were read. -1 with a message naming the photo that could not be read, or when every
 * border pixel is transparent. */
int cs_backdrop_colour(const cs_scene *s, float rgb[3], int *photos);

#endif
