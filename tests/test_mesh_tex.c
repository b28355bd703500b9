/* #38's texture stage: the lattice's taps (cl/mesh_tex.h) against what they promise, the atlas
 * against a bilinear texture fetch written here as a GPU does one, and the device's drawing,
 * gradient and step against the host (mesh_texture.h, mesh_texture_dev.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mesh_device.h"
#include "mesh_gltf.h"
#include "mesh_raster.h"
#include "mesh_texture.h"
#include "mesh_texture_dev.h"
#include "ref_mesh.h"
#include "test.h"
#include "util.h"

/* a point of a triangle: barycentric weights of corners 1 and 2, on its edges and corners now and then */
static void random_point(uint64_t *rs, float *w1, float *w2)
{
    double a = test_rand(rs), b = test_rand(rs);
    if (a + b > 1) a = 1 - a, b = 1 - b;
    int edge = (int)(test_rand(rs) * 8);
    if (edge == 0) a = 0;
    if (edge == 1) b = 1 - a;
    if (edge == 2) a = 1, b = 0;
    *w1 = (float)a, *w2 = (float)b;
}

/* the taps: weights summing to 1; a node field planar in (i, j) drawn as that plane anywhere
   (the square past the diagonal included); each node drawn as itself at its own place */
int test_mesh_tex_taps(void)
{
    uint64_t rs = test_seed() ^ 0x7e4;
    int checked = 0;
    for (int round = 0; round < 400; round++) {
        int r = 1 + (int)(test_rand(&rs) * CS_TEX_MAX_R), idx[6];
        float wt[6], node[CS_TEX_NODES(CS_TEX_MAX_R)];
        double a = test_randn(&rs), b = test_randn(&rs), c = test_randn(&rs);
        for (int j = 0; j <= r; j++)
            for (int i = 0; i + j <= r; i++) node[cs_tex_node(r, i, j)] = (float)(a + b * i + c * j);
        float w1, w2;
        random_point(&rs, &w1, &w2);
        int n = cs_tex_taps(r, w1, w2, idx, wt);
        double sum = 0, v = 0;
        CHECK(n >= 1 && n <= 6, "r %d: %d taps", r, n);
        for (int k = 0; k < n; k++) {
            CHECK(idx[k] >= 0 && idx[k] < CS_TEX_NODES(r), "r %d: tap %d at node %d", r, k, idx[k]);
            sum += wt[k], v += wt[k] * node[idx[k]];
        }
        double want = a + b * r * w1 + c * r * w2;
        CHECK(fabs(sum - 1) < 1e-5 && fabs(v - want) < 1e-4 * (1 + fabs(want)),
              "r %d at (%g, %g): weights sum to %.7f, the plane drawn as %.6f, want %.6f", r, w1, w2, sum, v, want);
        int i = (int)(test_rand(&rs) * (r + 1)), j = (int)(test_rand(&rs) * (r + 1 - i));
        n = cs_tex_taps(r, (float)i / r, (float)j / r, idx, wt);
        v = 0;
        for (int k = 0; k < n; k++) v += wt[k] * (idx[k] == cs_tex_node(r, i, j));
        CHECK(fabs(v - 1) < 1e-5, "r %d: node (%d, %d) drawn at its place with weight %.6f", r, i, j, v);
        checked++;
    }
    printf("  %d points: weights sum to 1, planes drawn as planes, nodes at their places\n", checked);
    return 0;
}

/* texel (X, Y) of IMG fetched bilinearly at texel-centre coordinates (x, y), as a GPU's LINEAR
   filter with clamp to edge does */
static double fetch(const cs_image *img, double x, double y, int ch)
{
    int x0 = (int)floor(x), y0 = (int)floor(y);
    double fx = x - x0, fy = y - y0, v = 0;
    for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++) {
            int xx = x0 + dx, yy = y0 + dy;
            xx = xx < 0 ? 0 : xx >= img->width ? img->width - 1 : xx;
            yy = yy < 0 ? 0 : yy >= img->height ? img->height - 1 : yy;
            v += (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * img->px[3 * ((size_t)yy * img->width + xx) + ch];
        }
    return v;
}

/* the atlas drawn by a viewer (each corner's UV interpolated by the point's weights, a bilinear
   fetch) shows what the host draws from the lattice, up to the 8-bit rounding of the texels
   past the diagonal; nodes in 96-160 so that none of those leaves 0-255 */
int test_mesh_tex_atlas(void)
{
    uint64_t rs = test_seed() ^ 0xa71;
    for (int round = 0; round < 6; round++) {
        cs_mesh m = {0};
        m.nt = 1 + (size_t)(test_rand(&rs) * 300), m.tex_r = 1 + (int)(test_rand(&rs) * CS_TEX_MAX_R);
        size_t nodes = (size_t)CS_TEX_NODES(m.tex_r) * m.nt;
        m.tex = malloc(3 * nodes);
        float *uv = malloc(sizeof(float) * 6 * m.nt);
        CHECK(m.tex && uv, "out of memory");
        for (size_t i = 0; i < 3 * nodes; i++) m.tex[i] = (uint8_t)(96 + test_rand(&rs) * 65);
        cs_image img = {0};
        CHECK_OK(cs_mesh_tex_atlas(&m, &img, uv));
        CHECK(img.width <= CS_TEX_ATLAS_SIDE && img.height <= CS_TEX_ATLAS_SIDE, "a %dx%d atlas", img.width, img.height);
        double worst = 0;
        for (int q = 0; q < 200; q++) {
            size_t t = (size_t)(test_rand(&rs) * m.nt);
            float w1, w2, rgb[3];
            random_point(&rs, &w1, &w2);
            double w0 = 1.0 - w1 - w2, u = 0, v = 0;
            const double w[3] = {w0, w1, w2};
            for (int k = 0; k < 3; k++) u += w[k] * uv[6 * t + 2 * k], v += w[k] * uv[6 * t + 2 * k + 1];
            cs_mesh_tex_sample(&m, t, w1, w2, rgb);
            for (int ch = 0; ch < 3; ch++)
                worst = fmax(worst, fabs(fetch(&img, u * img.width - 0.5, v * img.height - 0.5, ch) - rgb[ch]));
        }
        CHECK(worst <= 0.5 + 1e-3, "%zu triangles of %d subdivisions: the atlas draws %.3f off the lattice", m.nt,
              m.tex_r, worst);
        cs_image_free(&img);
        free(uv);
        cs_mesh_free(&m);
    }
    CHECK(cs_mesh_tex_auto(1000000) == 3 && cs_mesh_tex_auto(250000) == 7 && cs_mesh_tex_auto(100) == CS_TEX_MAX_R &&
              cs_mesh_tex_auto(20000000) == 0,
          "auto subdivisions: %d at 1M, %d at 250k, %d at 100, %d at 20M", cs_mesh_tex_auto(1000000),
          cs_mesh_tex_auto(250000), cs_mesh_tex_auto(100), cs_mesh_tex_auto(20000000));
    return 0;
}

/* random overlapping triangles (ref_mesh_random_soup), with random vertex colours
   and a texture of R subdivisions made from them and then scrambled */
static int random_textured(cs_mesh *m, int nt, int r, uint64_t *rs)
{
    memset(m, 0, sizeof *m);
    m->nv = 3 * (size_t)nt, m->nt = (size_t)nt;
    m->pos = malloc(sizeof(float) * 3 * m->nv), m->rgb = malloc(3 * m->nv), m->tri = malloc(sizeof(uint32_t) * 3 * m->nt);
    if (!m->pos || !m->rgb || !m->tri) return -1;
    ref_mesh_random_soup(m->pos, nt, rs);
    for (size_t i = 0; i < 3 * m->nv; i++) m->rgb[i] = (uint8_t)(255 * test_rand(rs));
    for (size_t i = 0; i < 3 * m->nt; i++) m->tri[i] = (uint32_t)i;
    if (cs_mesh_tex_from_vertices(m, r)) return -1;
    for (size_t i = 0; i < 3 * (size_t)CS_TEX_NODES(r) * m->nt; i++)
        if (test_rand(rs) < 0.5) m->tex[i] = (uint8_t)(255 * test_rand(rs));
    return 0;
}

/* the device's textured drawing against the host's at every sample (S a side: the drawing at S
   times the photo's size); its gradient of the training loss at lambda 0 against the image
   gradient (the samples', spread from the photo's pixels) taken through the taps on the host;
   one Adam step */
static int tex_case(cs_cl *cl, int S, uint64_t *rs)
{
    cs_camera c;
    ref_mesh_test_camera(&c);
    int r = 1 + (int)(test_rand(rs) * CS_TEX_MAX_R);
    cs_mesh m;
    CHECK_OK(random_textured(&m, 300, r, rs));
    size_t npx = (size_t)c.width * c.height * S * S, nf = 3 * (size_t)CS_TEX_NODES(r) * m.nt;
    float *img = malloc(sizeof(float) * 3 * npx), *v = malloc(sizeof(float) * 3 * npx), *w = malloc(sizeof(float) * 3 * npx);
    float *grad = calloc(nf, sizeof(float)), *dgrad = malloc(sizeof(float) * nf), *dtex = malloc(sizeof(float) * nf);
    int32_t *tri = malloc(sizeof(int32_t) * npx);
    cs_image photo = {c.width, c.height, 3, malloc(npx * 3)};
    CHECK(img && v && w && grad && dgrad && dtex && tri && photo.px, "out of memory");
    for (size_t i = 0; i < (size_t)c.width * c.height * 3; i++) photo.px[i] = (uint8_t)(255 * test_rand(rs));
    cs_mesh_dev d;
    const float bg[3] = {0.2f, 0.4f, 0.6f};
    CHECK_OK(cs_mesh_dev_open(&d, cl, &m, (size_t)c.width * c.height, S, bg));
    CHECK_OK(cs_mesh_dev_tex_open(&d, &m));
    float nanv = NAN;
    CHECK_OK(cs_buf_fill(cl, &d.img, 0, d.img.bytes, &nanv, 4)); /* poisoned */
    CHECK_OK(cs_mesh_dev_visibility(&d, &c));
    double loss = 0;
    CHECK_OK(cs_mesh_dev_tex_grad(&d, &photo, 0.f, &loss));
    CHECK_OK(cs_mesh_dev_read_visibility(&d, tri, w));
    CHECK_OK(cs_buf_read(cl, &d.img, 0, 12 * npx, img));
    CHECK_OK(cs_buf_read(cl, S > 1 ? &d.v_hi : &d.loss.v_img, 0, 12 * npx, v));
    CHECK_OK(cs_mesh_dev_tex_read(&d, dtex, dgrad));
    long drawn = 0, off = 0;
    for (size_t p = 0; p < npx; p++) {
        float rgb[3] = {bg[0] * 255.f, bg[1] * 255.f, bg[2] * 255.f};
        if (tri[p] >= 0) cs_mesh_tex_sample(&m, (size_t)tri[p], w[3 * p + 1], w[3 * p + 2], rgb), drawn++;
        for (int ch = 0; ch < 3; ch++) off += !(fabs(img[ch * npx + p] * 255.0 - rgb[ch]) <= 1e-3);
        if (tri[p] < 0) continue;
        int idx[6];
        float wt[6];
        int n = cs_tex_taps(r, w[3 * p + 1], w[3 * p + 2], idx, wt);
        for (int k = 0; k < n; k++)
            for (int ch = 0; ch < 3; ch++)
                grad[3 * ((size_t)tri[p] * CS_TEX_NODES(r) + idx[k]) + ch] += v[ch * npx + p] * wt[k];
    }
    double gmax = 0;
    long gbad = 0;
    for (size_t i = 0; i < nf; i++) gmax = fmax(gmax, fabs(grad[i]));
    for (size_t i = 0; i < nf; i++) gbad += !(fabs(dgrad[i] - grad[i]) <= 1e-5 * gmax);
    printf("  %d x %d samples, %d subdivisions: %ld of %zu samples drawn, %ld channels off the host; gradient of %zu values, %ld off\n", S,
           S, r, drawn, npx, off, nf, gbad);
    CHECK(drawn > (long)npx / 3 && off == 0 && gmax > 0 && gbad == 0 && loss > 0,
          "drawn %ld, %ld channels off, %ld gradient values off (largest %.3g), loss %g", drawn, off, gbad, gmax, loss);
    const double lr = 0.01; /* Adam's first step: lr against the gradient's sign, kept in 0-1 */
    CHECK_OK(cs_mesh_dev_tex_adam(&d, lr, 1));
    float *after = malloc(sizeof(float) * nf);
    CHECK(after != NULL, "out of memory");
    CHECK_OK(cs_mesh_dev_tex_read(&d, after, dgrad));
    long stepped = 0;
    for (size_t i = 0; i < nf; i++) {
        if (fabs(grad[i]) < 1e-3 * gmax) continue;
        double want = fmin(1.0, fmax(0.0, dtex[i] - lr * (grad[i] > 0 ? 1 : -1)));
        stepped++;
        CHECK(fabs(after[i] - want) <= 1e-5 && dgrad[i] == 0.f, "node value %zu: %.6f after the step, want %.6f", i,
              after[i], want);
    }
    CHECK(stepped > 100, "only %ld values stepped", stepped);
    cs_mesh_dev_close(&d);
    cs_mesh_free(&m);
    free(img), free(v), free(w), free(grad), free(dgrad), free(dtex), free(tri), free(after), free(photo.px);
    return 0;
}

int test_mesh_tex_device(void)
{
    uint64_t rs = test_seed() ^ 0x7ed;
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    for (int S = 1; S <= 2; S++) CHECK_OK(tex_case(&cl, S, &rs));
    cs_cl_close(&cl);
    return 0;
}

/* the BIN bytes of accessor ID of glTF document DOC (its view's offset), and its count */
static const uint8_t *accessor_at(json_t *doc, const uint8_t *bin, size_t bin_len, int id, size_t bytes_each, size_t *count)
{
    json_t *a = json_array_get(json_object_get(doc, "accessors"), (size_t)id);
    json_t *v = json_array_get(json_object_get(doc, "bufferViews"), (size_t)json_integer_value(json_object_get(a, "bufferView")));
    size_t off = (size_t)json_integer_value(json_object_get(v, "byteOffset"));
    *count = (size_t)json_integer_value(json_object_get(a, "count"));
    return a && v && off + bytes_each * *count <= bin_len ? bin + off : NULL;
}

/* a textured mesh written as .glb: each triangle's corners in order with the atlas's UVs, the
   atlas as the embedded PNG, a sampler without mipmaps; assimp reads it with its texture */
int test_mesh_tex_glb(void)
{
    uint64_t rs = test_seed() ^ 0x91b;
    cs_mesh m;
    CHECK_OK(random_textured(&m, 20 + (int)(test_rand(&rs) * 200), 1 + (int)(test_rand(&rs) * CS_TEX_MAX_R), &rs));
    char p[700], png[760], cmd[1600];
    snprintf(p, sizeof p, "%s/textured.glb", test_tmpdir());
    CHECK_OK(cs_mesh_write_glb(p, &m));
    size_t len;
    uint8_t *d = (uint8_t *)cs_read_file(p, &len);
    uint32_t h[5], bin_len = 0;
    CHECK(d && len > 28, "%s: too short", p);
    memcpy(h, d, 20);
    CHECK(h[0] == 0x46546C67 && h[2] == len && h[3] % 4 == 0, "%s: header", p);
    memcpy(&bin_len, d + 20 + h[3], 4);
    const uint8_t *bin = d + 28 + h[3];
    json_t *doc = json_loadb((const char *)d + 20, h[3], 0, NULL);
    json_t *prim = json_array_get(json_object_get(json_array_get(json_object_get(doc, "meshes"), 0), "primitives"), 0);
    json_t *attr = json_object_get(prim, "attributes");
    CHECK(doc && json_object_get(attr, "TEXCOORD_0") && !json_object_get(attr, "COLOR_0"), "the attributes");
    size_t npos, nuv, nidx;
    const uint8_t *pos = accessor_at(doc, bin, bin_len, (int)json_integer_value(json_object_get(attr, "POSITION")), 12, &npos);
    const uint8_t *uv = accessor_at(doc, bin, bin_len, (int)json_integer_value(json_object_get(attr, "TEXCOORD_0")), 8, &nuv);
    const uint8_t *idx = accessor_at(doc, bin, bin_len, (int)json_integer_value(json_object_get(prim, "indices")), 4, &nidx);
    CHECK(pos && uv && idx && npos == 3 * m.nt && nuv == npos && nidx == npos, "%zu corners, %zu UVs, %zu indices for %zu triangles",
          npos, nuv, nidx, m.nt);
    cs_image atlas = {0}, read = {0};
    float *want_uv = malloc(sizeof(float) * 6 * m.nt);
    CHECK(want_uv != NULL, "out of memory");
    CHECK_OK(cs_mesh_tex_atlas(&m, &atlas, want_uv));
    int same = !memcmp(uv, want_uv, 8 * npos);
    for (size_t c = 0; same && c < npos; c++) {
        uint32_t k;
        memcpy(&k, idx + 4 * c, 4);
        same = k == c && !memcmp(pos + 12 * c, m.pos + 3 * m.tri[c], 12);
    }
    CHECK(same, "the corners, their UVs or the indices differ from the mesh's");
    json_t *img = json_array_get(json_object_get(doc, "images"), 0), *smp = json_array_get(json_object_get(doc, "samplers"), 0);
    json_t *iv = json_array_get(json_object_get(doc, "bufferViews"), (size_t)json_integer_value(json_object_get(img, "bufferView")));
    size_t ioff = (size_t)json_integer_value(json_object_get(iv, "byteOffset")), in = (size_t)json_integer_value(json_object_get(iv, "byteLength"));
    CHECK(img && !strcmp(json_string_value(json_object_get(img, "mimeType")), "image/png") && ioff + in <= bin_len &&
              json_integer_value(json_object_get(smp, "minFilter")) == 9729,
          "the image or the sampler");
    snprintf(png, sizeof png, "%s.png", p);
    FILE *f = fopen(png, "wb");
    CHECK(f && fwrite(bin + ioff, 1, in, f) == in && fclose(f) == 0, "writing %s", png);
    CHECK_OK(cs_image_load(png, &read));
    CHECK(read.width == atlas.width && read.height == atlas.height && read.channels == 3 &&
              !memcmp(read.px, atlas.px, (size_t)3 * atlas.width * atlas.height),
          "the embedded PNG (%dx%d) is not the atlas (%dx%d)", read.width, read.height, atlas.width, atlas.height);
    json_decref(doc);
    free(d), free(want_uv);
    cs_image_free(&atlas), cs_image_free(&read);
    snprintf(cmd, sizeof cmd, "assimp info %s > %s.log 2>&1", p, p);
    CHECK(system(cmd) == 0, "assimp info failed: see %s.log", p);
    snprintf(cmd, sizeof cmd, "%s.log", p);
    char *text = cs_read_file(cmd, NULL), want_v[64], want_f[64];
    snprintf(want_v, sizeof want_v, "Vertices:           %zu", 3 * m.nt);
    snprintf(want_f, sizeof want_f, "Faces:              %zu", m.nt);
    CHECK(text && strstr(text, want_v) && strstr(text, want_f) && strstr(text, "Textures (embed.):  1"),
          "assimp (%s, %s, one texture): %s", want_v, want_f, text ? text : "");
    free(text);
    cs_mesh_free(&m);
    return 0;
}
