/* image: PNG/JPEG decode, PNG encode, area resampling, compositing. */
#include "image.h"

#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include <libexif/exif-data.h>
#include <png.h>
#include <setjmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void cs_image_free(cs_image *img)
{
    free(img->px);
    img->px = NULL;
    img->width = img->height = img->channels = 0;
}

/* A declared size within the limits (before anything is allocated or decoded for it). */
static int check_size(const char *path, long w, long h)
{
    if (w <= 0 || h <= 0 || w > CS_IMAGE_MAX_SIDE || h > CS_IMAGE_MAX_SIDE || w * h > CS_IMAGE_MAX_PIXELS)
        return cs_fail("%s: image size %ldx%ld is outside the limits (sides up to %d, %d Mpixels)", path, w, h,
                       CS_IMAGE_MAX_SIDE, (int)(CS_IMAGE_MAX_PIXELS >> 20));
    return 0;
}

static int alloc_image(cs_image *img, int w, int h, int c)
{
    if (w <= 0 || h <= 0 || w > CS_IMAGE_MAX_SIDE || h > CS_IMAGE_MAX_SIDE) return cs_fail("bad image size %dx%d", w, h);
    img->px = malloc((size_t)w * h * c);
    if (!img->px) return cs_fail("out of host memory for a %dx%d image", w, h);
    img->width = w;
    img->height = h;
    img->channels = c;
    return 0;
}

/* ---- PNG ------------------------------------------------------------------------------ */

typedef struct {
    jmp_buf jb;
    char msg[256];
} png_err_ctx;

static void png_on_error(png_structp png, png_const_charp msg)
{
    png_err_ctx *ctx = png_get_error_ptr(png);
    snprintf(ctx->msg, sizeof ctx->msg, "%s", msg);
    longjmp(ctx->jb, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static int load_png(const char *path, FILE *f, cs_image *out, int header_only, int *pw, int *ph)
{
    png_err_ctx ctx = {0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_on_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *volatile rows = NULL;
    cs_image img = {0};
    volatile int ok = 0;
    if (!png || !info) {
        cs_fail("%s: cannot initialise libpng", path);
        goto done;
    }
    if (setjmp(ctx.jb)) {
        cs_fail("%s: corrupt PNG: %s", path, ctx.msg);
        goto done;
    }
    png_init_io(png, f);
    /* decompression bombs: dimensions and ancillary chunks (text, ICC) are bounded */
    png_set_user_limits(png, CS_IMAGE_MAX_SIDE, CS_IMAGE_MAX_SIDE);
    png_set_chunk_malloc_max(png, CS_IMAGE_MAX_CHUNK);
    png_set_chunk_cache_max(png, 1000);
    /* libpng reports an oversized ancillary chunk as a "benign" error (a warning) and then reads
       past it, allocating its claimed length: here it is an error */
    png_set_benign_errors(png, 0);
    png_read_info(png, info);
    int w = (int)png_get_image_width(png, info), h = (int)png_get_image_height(png, info);
    if (check_size(path, w, h)) goto done;
    if (header_only) {
        *pw = w;
        *ph = h;
        ok = 1;
        goto done;
    }
    int ct = png_get_color_type(png, info);
    if (png_get_bit_depth(png, info) == 16) png_set_scale_16(png);
    if (ct == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (ct == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (ct == PNG_COLOR_TYPE_GRAY || ct == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int c = png_get_channels(png, info);
    if (c != 3 && c != 4) {
        cs_fail("%s: unsupported PNG layout (%d channels)", path, c);
        goto done;
    }
    if (alloc_image(&img, w, h, c)) {
        cs_fail_prefix("%s", path);
        goto done;
    }
    rows = malloc(sizeof(png_bytep) * h);
    if (!rows) {
        cs_fail("%s: out of host memory", path);
        goto done;
    }
    for (int y = 0; y < h; y++) rows[y] = img.px + (size_t)y * w * c;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    ok = 1;
done:
    png_destroy_read_struct(png ? &png : NULL, info ? &info : NULL, NULL);
    free(rows);
    if (!ok || header_only) {
        cs_image_free(&img);
        return ok ? 0 : -1;
    }
    *out = img;
    return 0;
}

static void png_mem_write(png_structp png, png_bytep data, png_size_t n)
{
    cs_bytes_append(png_get_io_ptr(png), data, n);
}

static void png_mem_flush(png_structp png) { (void)png; }

/* Encodes H rows of W pixels (BITS per sample, libpng COLOR type, rows STRIDE bytes apart from
 * ROWS; 16-bit samples big-endian) as a PNG with zlib LEVEL into F, or into MEM when F is NULL;
 * WHAT names it in errors. */
static int encode_png(int w, int h, int bits, int color, const uint8_t *rows, size_t stride, int level, FILE *f,
                      cs_bytes *mem, const char *what)
{
    png_err_ctx ctx = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, png_on_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
        return cs_fail("%s: cannot initialise libpng", what);
    }
    if (setjmp(ctx.jb)) {
        png_destroy_write_struct(&png, &info);
        return cs_fail("%s: PNG write failed: %s", what, ctx.msg);
    }
    if (f) png_init_io(png, f);
    else png_set_write_fn(png, mem, png_mem_write, png_mem_flush);
    png_set_IHDR(png, info, w, h, bits, color, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, level);
    if (level <= 1) png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB); /* fast: one cheap filter */
    png_write_info(png, info);
    for (int y = 0; y < h; y++) png_write_row(png, rows + (size_t)y * stride);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return mem && mem->oom ? cs_fail("%s: out of host memory", what) : 0;
}

/* an 8-bit RGB or RGBA image */
static int encode_image(const cs_image *img, int level, FILE *f, cs_bytes *mem, const char *what)
{
    return encode_png(img->width, img->height, 8, img->channels == 4 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB, img->px,
                      (size_t)img->width * img->channels, level, f, mem, what);
}

int cs_image_save_png16(const char *path, int w, int h, const uint16_t *grey)
{
    size_t n = (size_t)w * h;
    uint8_t *be = malloc(2 * (n ? n : 1));
    if (!be) return cs_fail("out of host memory (a %dx%d 16-bit image)", w, h);
    for (size_t i = 0; i < n; i++) be[2 * i] = (uint8_t)(grey[i] >> 8), be[2 * i + 1] = (uint8_t)grey[i];
    cs_atomic_file af;
    int rc = cs_atomic_open(&af, path);
    if (!rc && encode_png(w, h, 16, PNG_COLOR_TYPE_GRAY, be, (size_t)w * 2, 3, af.f, NULL, path)) {
        cs_atomic_abort(&af);
        rc = -1;
    } else if (!rc) {
        rc = cs_atomic_commit(&af);
    }
    free(be);
    return rc;
}

int cs_image_save_png(const char *path, const cs_image *img)
{
    cs_atomic_file af;
    if (cs_atomic_open(&af, path)) return -1;
    if (encode_image(img, 3, af.f, NULL, path)) {
        cs_atomic_abort(&af);
        return -1;
    }
    return cs_atomic_commit(&af);
}

int cs_image_encode_png(const cs_image *img, int level, uint8_t **out, size_t *n)
{
    cs_bytes mem = {0};
    if (encode_image(img, level, NULL, &mem, "PNG in memory")) {
        cs_bytes_free(&mem);
        return -1;
    }
    *out = mem.buf, *n = mem.len;
    return 0;
}

/* ---- JPEG ----------------------------------------------------------------------------- */

typedef struct {
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
} jpg_err_ctx;

static void jpg_on_error(j_common_ptr cinfo)
{
    jpg_err_ctx *ctx = (jpg_err_ctx *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, ctx->msg);
    longjmp(ctx->jb, 1);
}

/* libjpeg's warnings (level -1: "Premature end of JPEG file", corrupt data) are errors here:
   it would otherwise hand back grey rows for the missing data. Trace messages are ignored. */
static void jpg_on_message(j_common_ptr cinfo, int level)
{
    if (level >= 0) return;
    jpg_err_ctx *ctx = (jpg_err_ctx *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, ctx->msg);
    longjmp(ctx->jb, 1);
}

/* The EXIF orientation tag (1-8) of the APP1 markers libjpeg kept, 1 when absent or invalid. */
static int exif_orientation(j_decompress_ptr cinfo)
{
    int o = 1;
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m && o == 1; m = m->next) {
        if (m->marker != JPEG_APP0 + 1 || m->data_length < 6 || memcmp(m->data, "Exif\0\0", 6) != 0) continue;
        ExifData *ed = exif_data_new_from_data(m->data, m->data_length);
        if (!ed) continue;
        ExifEntry *e = exif_content_get_entry(ed->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
        if (e && e->format == EXIF_FORMAT_SHORT && e->components == 1 && e->size >= 2) {
            int v = exif_get_short(e->data, exif_data_get_byte_order(ed));
            if (v >= 1 && v <= 8) o = v;
        }
        exif_data_unref(ed);
    }
    return o;
}

static int load_jpeg(const char *path, FILE *f, cs_image *out, int header_only, int *pw, int *ph, int *orient)
{
    struct jpeg_decompress_struct cinfo;
    jpg_err_ctx ctx;
    cs_image img = {0};
    uint8_t *volatile pixels = NULL; /* what to free after a longjmp */
    cinfo.err = jpeg_std_error(&ctx.mgr);
    ctx.mgr.error_exit = jpg_on_error;
    ctx.mgr.emit_message = jpg_on_message;
    snprintf(ctx.msg, sizeof ctx.msg, "unsupported layout");
    if (setjmp(ctx.jb)) {
        jpeg_destroy_decompress(&cinfo);
        free(pixels);
        return cs_fail("%s: corrupt JPEG: %s", path, ctx.msg);
    }
    jpeg_create_decompress(&cinfo);
    jpeg_stdio_src(&cinfo, f);
    if (orient) jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xffff);
    jpeg_read_header(&cinfo, TRUE);
    if (orient) *orient = exif_orientation(&cinfo);
    if (check_size(path, (long)cinfo.image_width, (long)cinfo.image_height)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    if (header_only) {
        *pw = (int)cinfo.image_width;
        *ph = (int)cinfo.image_height;
        jpeg_destroy_decompress(&cinfo);
        return 0;
    }
    cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_components != 3) longjmp(ctx.jb, 1);
    if (alloc_image(&img, (int)cinfo.output_width, (int)cinfo.output_height, 3)) {
        jpeg_destroy_decompress(&cinfo);
        return cs_fail_prefix("%s", path);
    }
    pixels = img.px;
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = img.px + (size_t)cinfo.output_scanline * img.width * 3;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    *out = img;
    return 0;
}

/* ---- dispatch ------------------------------------------------------------------------- */

static int load_any(const char *path, cs_image *out, int header_only, int *w, int *h, int *orient)
{
    if (orient) *orient = 1;
    FILE *f = fopen(path, "rb");
    if (!f) return cs_fail("cannot open image %s: %s", path, strerror(errno));
    unsigned char sig[8] = {0};
    size_t n = fread(sig, 1, 8, f);
    rewind(f);
    int r;
    if (n == 8 && png_sig_cmp(sig, 0, 8) == 0)
        r = load_png(path, f, out, header_only, w, h);
    else if (n >= 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF)
        r = load_jpeg(path, f, out, header_only, w, h, orient);
    else
        r = cs_fail("%s: not a PNG or JPEG file", path);
    fclose(f);
    return r;
}

int cs_image_load(const char *path, cs_image *out)
{
    memset(out, 0, sizeof *out);
    return load_any(path, out, 0, NULL, NULL, NULL);
}

int cs_image_size(const char *path, int *w, int *h) { return load_any(path, NULL, 1, w, h, NULL); }

int cs_image_probe(const char *path, int *w, int *h, int *orientation)
{
    return load_any(path, NULL, 1, w, h, orientation);
}

int cs_image_fit_orientation(int w, int h, int orientation, int want_w, int want_h, int tol)
{
    if (abs(w - want_w) <= tol && abs(h - want_h) <= tol) return 1;
    if (orientation >= 5 && abs(h - want_w) <= tol && abs(w - want_h) <= tol) return orientation;
    return 0;
}

int cs_image_orient(cs_image *img, int orientation)
{
    if (orientation <= 1 || orientation > 8) return 0;
    int w = img->width, h = img->height, c = img->channels, swap = orientation >= 5;
    int ow = swap ? h : w, oh = swap ? w : h;
    uint8_t *px = malloc((size_t)w * h * c);
    if (!px) return cs_fail("out of host memory turning a %dx%d image upright", w, h);
    for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++) {
            int u, v; /* the stored pixel shown at (x, y) */
            switch (orientation) {
            case 2: u = w - 1 - x, v = y; break;
            case 3: u = w - 1 - x, v = h - 1 - y; break;
            case 4: u = x, v = h - 1 - y; break;
            case 5: u = y, v = x; break;
            case 6: u = y, v = h - 1 - x; break;
            case 7: u = w - 1 - y, v = h - 1 - x; break;
            default: u = w - 1 - y, v = x; break; /* 8 */
            }
            memcpy(px + ((size_t)y * ow + x) * c, img->px + ((size_t)v * w + u) * c, (size_t)c);
        }
    free(img->px);
    img->px = px, img->width = ow, img->height = oh;
    return 0;
}

int cs_image_composite(cs_image *img, const float bg[3])
{
    if (img->channels == 3) return 0;
    size_t n = (size_t)img->width * img->height;
    uint8_t *rgb = malloc(n * 3);
    if (!rgb) return cs_fail("out of host memory compositing an image");
    for (size_t i = 0; i < n; i++) {
        float a = img->px[i * 4 + 3] / 255.0f;
        for (int c = 0; c < 3; c++) {
            float v = img->px[i * 4 + c] / 255.0f * a + bg[c] * (1.0f - a);
            int q = (int)(v * 255.0f);
            rgb[i * 3 + c] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
        }
    }
    free(img->px);
    img->px = rgb;
    img->channels = 3;
    return 0;
}

int cs_image_dim_by_alpha(cs_image *img)
{
    if (img->channels == 3) return 0;
    size_t n = (size_t)img->width * img->height;
    uint8_t *rgb = malloc(n * 3);
    if (!rgb) return cs_fail("out of host memory dimming an image");
    for (size_t i = 0; i < n; i++) {
        unsigned s = 255 + 3 * img->px[i * 4 + 3]; /* 4 x 255 x (1/4 + 3/4 alpha) */
        for (int c = 0; c < 3; c++) rgb[i * 3 + c] = (uint8_t)(img->px[i * 4 + c] * s / 1020);
    }
    free(img->px);
    img->px = rgb;
    img->channels = 3;
    return 0;
}

int cs_image_shrink(const cs_image *in, int f, cs_image *out)
{
    int w = in->width / f, h = in->height / f, ch = in->channels;
    *out = (cs_image){w, h, ch, malloc((size_t)w * h * ch)};
    if (!out->px) return cs_fail("out of host memory shrinking a %dx%d image", in->width, in->height);
    unsigned *row = calloc((size_t)w * ch, sizeof(unsigned));
    if (!row) {
        cs_image_free(out);
        return cs_fail("out of host memory shrinking a %dx%d image", in->width, in->height);
    }
    for (int y = 0; y < h; y++) {
        memset(row, 0, sizeof(unsigned) * w * ch);
        for (int dy = 0; dy < f; dy++) {
            const uint8_t *src = in->px + (size_t)(y * f + dy) * in->width * ch;
            for (int x = 0; x < w; x++)
                for (int dx = 0; dx < f; dx++)
                    for (int c = 0; c < ch; c++) row[x * ch + c] += src[(x * f + dx) * ch + c];
        }
        for (int i = 0; i < w * ch; i++) out->px[(size_t)y * w * ch + i] = (uint8_t)((row[i] + f * f / 2) / (f * f));
    }
    free(row);
    return 0;
}

/* A / B rounded up, for A >= 0 and B > 0, without A + B - 1 (which overflows for a bound of INT_MAX) */
static int ceil_div(int a, int b)
{
    return a / b + (a % b != 0);
}

int cs_image_shrink_to(cs_image *img, int max_w, int max_h)
{
    if (max_w < 1 || max_h < 1) return cs_fail("image shrink: a bound of %dx%d", max_w, max_h);
    int fw = ceil_div(img->width, max_w), fh = ceil_div(img->height, max_h), f = fw > fh ? fw : fh;
    if (f <= 1) return 0;
    cs_image small;
    if (cs_image_shrink(img, f, &small)) return -1;
    cs_image_free(img);
    *img = small;
    return 0;
}

int cs_image_resize_area(const cs_image *in, int w, int h, cs_image *out)
{
    memset(out, 0, sizeof *out);
    if (alloc_image(out, w, h, in->channels)) return -1;
    int c = in->channels;
    double sx = (double)in->width / w, sy = (double)in->height / h;
    double acc[4];
    for (int oy = 0; oy < h; oy++) {
        double y0 = oy * sy, y1 = (oy + 1) * sy;
        for (int ox = 0; ox < w; ox++) {
            double x0 = ox * sx, x1 = (ox + 1) * sx;
            double wsum = 0;
            for (int k = 0; k < c; k++) acc[k] = 0;
            for (int iy = (int)y0; iy < in->height && iy < y1; iy++) {
                double wy = (iy + 1 < y1 ? iy + 1 : y1) - (iy > y0 ? iy : y0);
                if (wy <= 0) continue;
                for (int ix = (int)x0; ix < in->width && ix < x1; ix++) {
                    double wx = (ix + 1 < x1 ? ix + 1 : x1) - (ix > x0 ? ix : x0);
                    if (wx <= 0) continue;
                    const uint8_t *p = in->px + ((size_t)iy * in->width + ix) * c;
                    for (int k = 0; k < c; k++) acc[k] += wx * wy * p[k];
                    wsum += wx * wy;
                }
            }
            uint8_t *q = out->px + ((size_t)oy * w + ox) * c;
            for (int k = 0; k < c; k++) {
                double v = wsum > 0 ? acc[k] / wsum : 0;
                q[k] = (uint8_t)(v + 0.5 > 255 ? 255 : v + 0.5);
            }
        }
    }
    return 0;
}

int cs_image_tile(const cs_image *imgs, int n, int cols, cs_image *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || cols < 1) return cs_fail("no images to tile");
    int w = imgs[0].width, h = imgs[0].height, rows = (n + cols - 1) / cols;
    if (cols > n) cols = n;
    for (int i = 0; i < n; i++)
        if (imgs[i].width != w || imgs[i].height != h || imgs[i].channels != 3)
            return cs_fail("tiled images differ in size or are not RGB");
    out->width = w * cols, out->height = h * rows, out->channels = 3;
    out->px = calloc((size_t)out->width * out->height * 3, 1);
    if (!out->px) return cs_fail("out of host memory (%dx%d contact sheet)", out->width, out->height);
    for (int i = 0; i < n; i++)
        for (int y = 0; y < h; y++)
            memcpy(out->px + (((size_t)(i / cols) * h + y) * out->width + (size_t)(i % cols) * w) * 3,
                   imgs[i].px + (size_t)y * w * 3, (size_t)w * 3);
    return 0;
}

/* Keys' cubic convolution weights (a = -0.5, Catmull-Rom) of the 4 taps around fraction T. */
static void cubic_weights(float t, float w[4])
{
    float t2 = t * t, t3 = t2 * t;
    w[0] = -0.5f * t3 + t2 - 0.5f * t;
    w[1] = 1.5f * t3 - 2.5f * t2 + 1.f;
    w[2] = -1.5f * t3 + 2.f * t2 + 0.5f * t;
    w[3] = 0.5f * t3 - 0.5f * t2;
}

int cs_image_remap(const cs_image *src, const float *map, int w, int h, cs_image *out, unsigned char *valid)
{
    memset(out, 0, sizeof *out);
    int ch = src->channels;
    if (alloc_image(out, w, h, ch)) return -1;
    memset(out->px, 0, (size_t)w * h * ch);
    int W = src->width, H = src->height;
    for (size_t p = 0; p < (size_t)w * h; p++) {
        float x = map[p * 2] - 0.5f, y = map[p * 2 + 1] - 0.5f; /* in pixel-index space */
        int in = map[p * 2] >= 0 && map[p * 2] <= W && map[p * 2 + 1] >= 0 && map[p * 2 + 1] <= H;
        if (valid) valid[p] = (unsigned char)in;
        if (!in) continue;
        int x0 = (int)floorf(x), y0 = (int)floorf(y), xs[4], ys[4];
        float wx[4], wy[4], acc[4] = {0, 0, 0, 0};
        cubic_weights(x - x0, wx);
        cubic_weights(y - y0, wy);
        for (int k = 0; k < 4; k++) {
            xs[k] = x0 - 1 + k < 0 ? 0 : x0 - 1 + k > W - 1 ? W - 1 : x0 - 1 + k; /* edge pixels repeat */
            ys[k] = y0 - 1 + k < 0 ? 0 : y0 - 1 + k > H - 1 ? H - 1 : y0 - 1 + k;
        }
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++) {
                const uint8_t *q = src->px + ((size_t)ys[j] * W + xs[i]) * ch;
                float wt = wx[i] * wy[j];
                for (int c = 0; c < ch; c++) acc[c] += wt * q[c];
            }
        for (int c = 0; c < ch; c++) {
            float v = acc[c] + 0.5f;
            out->px[p * ch + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    return 0;
}
