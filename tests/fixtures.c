/* fixtures: small datasets and files the tests and the fuzzers' seed corpora are made from. */
#include "fixtures.h"

#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "config.h"
#include "image.h"
#include "scene.h"
#include "util.h"

int file_contains(const char *file, const char *text)
{
    char *d = cs_read_file(file, NULL);
    int r = d && strstr(d, text);
    free(d);
    return r;
}

int write_text(const char *path, const char *text) { return cs_write_file_atomic(path, text, strlen(text)); }

void fx_put(FILE *f, const void *v, size_t n) { fwrite(v, 1, n, f); }
void fx_put_i32(FILE *f, int32_t v) { fx_put(f, &v, 4); }
void fx_put_u64(FILE *f, uint64_t v) { fx_put(f, &v, 8); }
void fx_put_f64(FILE *f, double v) { fx_put(f, &v, 8); }

void write_gray_png(const char *path, int w, int h)
{
    cs_image img = {w, h, 3, calloc((size_t)w * h * 3, 1)};
    cs_image_save_png(path, &img);
    cs_image_free(&img);
}

/* writes a 10-image COLMAP model (binary or text) with 2 cameras and 3 points */
void write_colmap(const char *root, int binary, int model0, int bad_cam_ref, int bad_size)
{
    char p[700];
    snprintf(p, sizeof p, "%s/sparse/0", root);
    cs_mkdirs(p);
    snprintf(p, sizeof p, "%s/images", root);
    cs_mkdirs(p);
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/images/img_%02d.png", root, i);
        write_gray_png(p, bad_size && i == 3 ? 33 : 32, 24);
    }
    if (binary) {
        snprintf(p, sizeof p, "%s/sparse/0/cameras.bin", root);
        FILE *f = fopen(p, "wb");
        fx_put_u64(f, 2);
        fx_put_i32(f, 1), fx_put_i32(f, model0), fx_put_u64(f, 32), fx_put_u64(f, 24);
        if (model0 == 1) fx_put_f64(f, 30), fx_put_f64(f, 31), fx_put_f64(f, 15), fx_put_f64(f, 11);
        else if (model0 == 0) fx_put_f64(f, 30), fx_put_f64(f, 15), fx_put_f64(f, 11);
        else fx_put_f64(f, 30), fx_put_f64(f, 15), fx_put_f64(f, 11), fx_put_f64(f, 0.1);
        fx_put_i32(f, 2), fx_put_i32(f, 0), fx_put_u64(f, 32), fx_put_u64(f, 24), fx_put_f64(f, 28), fx_put_f64(f, 16), fx_put_f64(f, 12);
        fclose(f);
        snprintf(p, sizeof p, "%s/sparse/0/images.bin", root);
        f = fopen(p, "wb");
        fx_put_u64(f, 10);
        for (int i = 9; i >= 0; i--) { /* reverse order: the reader sorts by name */
            fx_put_i32(f, i + 1);
            fx_put_f64(f, 1), fx_put_f64(f, 0), fx_put_f64(f, 0), fx_put_f64(f, 0);
            fx_put_f64(f, 0.1 * i), fx_put_f64(f, 0), fx_put_f64(f, 4);
            fx_put_i32(f, bad_cam_ref && i == 5 ? 9 : 1 + i % 2);
            char name[32];
            snprintf(name, sizeof name, "img_%02d.png", i);
            fx_put(f, name, strlen(name) + 1);
            fx_put_u64(f, 1), fx_put_f64(f, 1), fx_put_f64(f, 2), fx_put_u64(f, (uint64_t)-1);
        }
        fclose(f);
        snprintf(p, sizeof p, "%s/sparse/0/points3D.bin", root);
        f = fopen(p, "wb");
        fx_put_u64(f, 3);
        for (int i = 0; i < 3; i++) {
            fx_put_u64(f, (uint64_t)i);
            fx_put_f64(f, i), fx_put_f64(f, 2 * i), fx_put_f64(f, 3 * i);
            unsigned char c[3] = {10, 20, (unsigned char)(30 + i)};
            fx_put(f, c, 3);
            fx_put_f64(f, 0.5), fx_put_u64(f, 2), fx_put_i32(f, 1), fx_put_i32(f, 0), fx_put_i32(f, 2), fx_put_i32(f, 0);
        }
        fclose(f);
    } else {
        snprintf(p, sizeof p, "%s/sparse/0/cameras.txt", root);
        write_text(p, model0 == 1 ? "# c\n1 PINHOLE 32 24 30 31 15 11\n2 SIMPLE_PINHOLE 32 24 28 16 12\n"
                                  : "1 OPENCV 32 24 30 31 15 11 0 0 0 0\n2 FOV 32 24 28 28 16 12 0.5\n");
        char buf[4096] = "# images\n";
        for (int i = 0; i < 10; i++) {
            char line[256];
            snprintf(line, sizeof line, "%d 1 0 0 0 %g 0 4 %d img_%02d.png\n1 2 -1\n", i + 1, 0.1 * i,
                     bad_cam_ref && i == 5 ? 9 : 1 + i % 2, i);
            strcat(buf, line);
        }
        snprintf(p, sizeof p, "%s/sparse/0/images.txt", root);
        write_text(p, buf);
        snprintf(p, sizeof p, "%s/sparse/0/points3D.txt", root);
        write_text(p, "0 0 0 0 10 20 30 0.5 1 0\n1 1 2 3 10 20 31 0.5 1 0\n2 2 4 6 10 20 32 0.5\n");
    }
}

/* the EXIF APP1 marker is written by hand, not by libexif, so the reader is checked against the
   standard's layout: "Exif\0\0", a TIFF header, IFD0 with the orientation only */
int write_jpeg_exif(const char *path, const cs_image *img, int orientation, int be)
{
    unsigned char exif[6 + 26] = {'E', 'x', 'i', 'f', 0, 0};
    unsigned char *t = exif + 6;
    const unsigned char le_head[8] = {'I', 'I', 42, 0, 8, 0, 0, 0}, be_head[8] = {'M', 'M', 0, 42, 0, 0, 0, 8};
    memcpy(t, be ? be_head : le_head, 8);
    /* IFD0: one entry (tag 0x0112, type 3 SHORT, count 1, the value), then no next IFD */
    const unsigned fields[][2] = {{1, 2}, {0x0112, 2}, {3, 2}, {1, 4}, {(unsigned)orientation, 2}, {0, 2}, {0, 4}};
    unsigned char *at = t + 8;
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; at += fields[k][1], k++)
        for (unsigned b = 0; b < fields[k][1]; b++)
            at[be ? fields[k][1] - 1 - b : b] = (unsigned char)(fields[k][0] >> (8 * b));
    FILE *f = fopen(path, "wb");
    if (!f) return cs_fail("cannot create %s", path);
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr jerr;
    ci.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&ci);
    jpeg_stdio_dest(&ci, f);
    ci.image_width = img->width, ci.image_height = img->height, ci.input_components = 3, ci.in_color_space = JCS_RGB;
    jpeg_set_defaults(&ci);
    jpeg_set_quality(&ci, 100, TRUE);
    for (int k = 0; k < 3; k++) ci.comp_info[k].h_samp_factor = ci.comp_info[k].v_samp_factor = 1;
    jpeg_start_compress(&ci, TRUE);
    if (orientation) jpeg_write_marker(&ci, JPEG_APP0 + 1, exif, sizeof exif);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = img->px + (size_t)ci.next_scanline * img->width * 3;
        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    return fclose(f) == 0 ? 0 : cs_fail("writing %s failed", path);
}

int write_jpeg(const char *path, const cs_image *img)
{
    return write_jpeg_exif(path, img, 0, 0);
}

int load_dataset(const char *dir, int eval, int skip_missing, cs_scene *s)
{
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s", dir);
    c.data.eval = eval;
    c.data.skip_missing_images = skip_missing;
    return cs_scene_load(&c.data, s);
}
