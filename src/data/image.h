/* image: PNG (8/16-bit, gray, RGB, RGBA, palette) and JPEG decode, PNG encode, area-filter
 * resampling and compositing over a background colour. Pixels are 8-bit, interleaved. */
#ifndef CS_IMAGE_H
#define CS_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Decoding limits, checked on the declared size before anything is allocated (decompression
 * bombs): sides up to CS_IMAGE_MAX_SIDE, CS_IMAGE_MAX_PIXELS in all (a 12,000 x 11,000 photo
 * fits), PNG ancillary chunks (text, ICC profiles) up to CS_IMAGE_MAX_CHUNK bytes. */
#define CS_IMAGE_MAX_SIDE 32768
#define CS_IMAGE_MAX_PIXELS (1L << 27)
#define CS_IMAGE_MAX_CHUNK (16L << 20)

typedef struct {
    int width, height, channels; /* channels: 3 (RGB) or 4 (RGBA) */
    uint8_t *px;                 /* (H, W, channels) */
} cs_image;

/* Decodes a PNG or JPEG (chosen by content). -1 with a message naming the file, also for a
 * truncated or corrupt file (libjpeg's warnings count as errors) and sizes over the limits. */
int cs_image_load(const char *path, cs_image *out);
/* Reads only the size (of the pixels as stored). */
int cs_image_size(const char *path, int *w, int *h);
/* The stored size and the EXIF orientation (1-8: 1 upright, 2-4 mirrored or turned half
 * round, 5-8 with width and height swapped on display; 1 for PNG and JPEG without the tag). */
int cs_image_probe(const char *path, int *w, int *h, int *orientation);
/* Which orientation makes a photo stored WxH with EXIF ORIENTATION the expected WANT_W x
 * WANT_H (each side within TOL pixels): 1 (the stored pixels, as COLMAP and graphdeco's
 * loader read them) when they fit, ORIENTATION when only the displayed pixels fit (the
 * reconstruction saw the photo upright), 0 when neither does. */
int cs_image_fit_orientation(int w, int h, int orientation, int want_w, int want_h, int tol);
/* Turns IMG into the pixels shown for EXIF ORIENTATION (1 or out of range: unchanged). */
int cs_image_orient(cs_image *img, int orientation);
/* Writes an 8-bit RGB or RGBA PNG atomically. */
int cs_image_save_png(const char *path, const cs_image *img);
/* Writes W x H 16-bit grey samples as a 16-bit PNG, atomically. */
int cs_image_save_png16(const char *path, int w, int h, const uint16_t *grey);
/* Encodes an 8-bit RGB or RGBA PNG with zlib compression LEVEL (0-9) into a new buffer *OUT
 * of *N bytes (the caller frees it). */
int cs_image_encode_png(const cs_image *img, int level, uint8_t **out, size_t *n);
/* Composites RGBA over BG (0..1) as graphdeco does (float, then truncated to 8 bit);
 * RGB images are left alone. Result has 3 channels. */
int cs_image_composite(cs_image *img, const float bg[3]);
/* RGBA to RGB, each colour scaled by 1/4 + 3/4 alpha (a weight channel shown: masked pixels dark).
 * RGB images are left alone. */
int cs_image_dim_by_alpha(cs_image *img);
/* Averages F x F blocks (F >= 1): a (W / F) x (H / F) image (the last partial blocks are
 * dropped); much cheaper than cs_image_resize_area for previews. */
int cs_image_shrink(const cs_image *in, int f, cs_image *out);
/* IMG shrunk in place (cs_image_shrink) by the smallest whole factor that makes it at most
 * MAX_W wide and MAX_H high; unchanged when it already fits. */
int cs_image_shrink_to(cs_image *img, int max_w, int max_h);
/* Area-filter resample to W x H (each output pixel averages the input area it covers). */
int cs_image_resize_area(const cs_image *in, int w, int h, cs_image *out);
/* Resamples SRC (any channel count) into a W x H image OUT by MAP (2 floats a pixel: SRC's pixel
 * coordinates, centres at +0.5; cs_lens_map), bicubic (Keys, a = -0.5; edge pixels repeat). A
 * pixel whose point lies outside SRC is 0 in every channel (a weight channel too) and, when VALID
 * is not NULL, marked 0 there (1 elsewhere). */
int cs_image_remap(const cs_image *src, const float *map, int w, int h, cs_image *out, unsigned char *valid);
/* N RGB images of one size side by side, COLS a row (rows as needed, unused cells black). */
int cs_image_tile(const cs_image *imgs, int n, int cols, cs_image *out);
void cs_image_free(cs_image *img);

#endif
