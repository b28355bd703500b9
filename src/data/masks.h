/* masks: which pixels of a photo take part in training. A mask is an image beside the dataset
 * (DATA/<data.masks>/<image name>.png, e.g. IMG_1.jpg.png as COLMAP and brush name them, or
 * <stem>.png, or the image's own name; nerfstudio's per-frame mask_path), black (0) for pixels
 * left out and white (255) for pixels kept, inverted by data.invert_masks; with
 * data.alpha_as_mask the photo's own alpha channel is one too. Such pixels become a weight
 * channel of the ground truth (1 byte a pixel): the loss and the metrics leave them out
 * (loss.h), and so does everything fed by the loss's gradient (densification statistics). */
#ifndef CS_MASKS_H
#define CS_MASKS_H

#include <stdint.h>

#include "config.h"
#include "dataset.h"
#include "image.h"

/* Finds the mask of every camera that has none yet in DATA->path/DATA->masks (when that folder
 * exists) and marks S weighted when a camera has one or alpha is a mask. -1 with a message (a
 * mask_path a reader set that does not exist). */
int cs_masks_find(cs_scene *s, const cs_data_cfg *data);
/* The weight of each pixel of camera C's decoded photo PHOTO (its file size, before
 * compositing): 255 where kept, 0 where masked, from its mask file and/or the photo's alpha.
 * *W is a new PHOTO->width x PHOTO->height array. -1 with a message naming the mask. */
int cs_masks_weight(const cs_scene *s, const cs_camera *c, const cs_image *photo, uint8_t **w);
/* True when the ray from O along D (t >= 0) passes through region R's prism. */
int cs_ground_ray_hits(const cs_ground_region *r, const double o[3], const double d[3]);
/* Block training (data.block_mask): sets the weight of IMG's pixels (camera C's ground truth
 * at training size, with its weight channel) to 0 where the surface the pixel sees lies outside
 * S's block region. The surface is the nearest of the scene's sparse points that project into
 * the pixel's 16 x 16 cell; a cell no point reaches (sky) keeps the pixels whose ray passes
 * through the region. Nothing when the region is off. *KEPT (may be NULL) gets the share kept. */
int cs_masks_region(const cs_scene *s, const cs_camera *c, cs_image *img, double *kept);
/* IMG (RGB) with the weight W as a fourth channel. */
int cs_masks_attach(cs_image *img, const uint8_t *w);

#endif
