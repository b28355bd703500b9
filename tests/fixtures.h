/* fixtures: small datasets and files the tests and the fuzzers' seed corpora are made from. */
#ifndef CS_TEST_FIXTURES_H
#define CS_TEST_FIXTURES_H

#include <stdint.h>
#include <stdio.h>

#include "dataset.h"
#include "image.h"

/* Writes TEXT to PATH atomically. */
int write_text(const char *path, const char *text);
/* True when FILE can be read and contains TEXT. */
int file_contains(const char *file, const char *text);
/* Little-endian fields of COLMAP's binary files. */
void fx_put(FILE *f, const void *v, size_t n);
void fx_put_i32(FILE *f, int32_t v);
void fx_put_u64(FILE *f, uint64_t v);
void fx_put_f64(FILE *f, double v);
/* IMG (RGB) as a quality-100 JPEG without chroma subsampling. */
int write_jpeg(const char *path, const cs_image *img);
/* The same with an EXIF orientation tag (1-8; 0: no EXIF), in big-endian TIFF order when BE. */
int write_jpeg_exif(const char *path, const cs_image *img, int orientation, int be);
/* A black W x H RGB PNG. */
void write_gray_png(const char *path, int w, int h);
/* A 10-image COLMAP model (binary or text) with 2 cameras and 3 points under ROOT, and its
 * 32x24 images: camera 1 has model MODEL0 (0 SIMPLE_PINHOLE, 1 PINHOLE, else unsupported);
 * BAD_CAM_REF makes image 5 name camera 9; BAD_SIZE makes image 3 33 pixels wide. */
void write_colmap(const char *root, int binary, int model0, int bad_cam_ref, int bad_size);
/* The dataset at DIR under the default config into S: its test split when EVAL, photos it lists
 * but lacks left out when SKIP_MISSING (data.skip_missing_images). 0, or -1 with the message. */
int load_dataset(const char *dir, int eval, int skip_missing, cs_scene *s);

#endif
