/* mesh_gltf: binary glTF 2.0 of a mesh (mesh_gltf.h). */
#include "mesh_gltf.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "image.h"
#include "mesh_texture.h"
#include "util.h"

enum { GLB_MAGIC = 0x46546C67, GLB_JSON = 0x4E4F534A, GLB_BIN = 0x004E4942 };
enum { GL_FLOAT = 5126, GL_UNSIGNED_SHORT = 5123, GL_UNSIGNED_INT = 5125 };
enum { ARRAY_BUFFER = 34962, ELEMENT_ARRAY_BUFFER = 34963, TRIANGLES = 4 };
enum { GL_LINEAR = 9729, GL_CLAMP_TO_EDGE = 33071 };

/* the BIN chunk as it is built: its bytes and the document's bufferViews into it */
typedef struct {
    cs_bytes bin;
    json_t *views;
} glb_parts;

/* appends N bytes at P as a bufferView (TARGET 0: none, as an image's), padded to 4 bytes; its index */
static int add_view(glb_parts *g, const void *p, size_t n, int target)
{
    size_t off = g->bin.len;
    cs_bytes_append(&g->bin, p, n);
    cs_bytes_append(&g->bin, "\0\0\0", (4 - n % 4) % 4);
    json_t *v = json_pack("{s:i, s:I, s:I}", "buffer", 0, "byteOffset", (json_int_t)off, "byteLength", (json_int_t)n);
    if (target) json_object_set_new(v, "target", json_integer(target));
    json_array_append_new(g->views, v);
    return (int)json_array_size(g->views) - 1;
}

static json_t *accessor(int view, int type, size_t count, const char *shape, bool normalized)
{
    json_t *a = json_pack("{s:i, s:i, s:I, s:s}", "bufferView", view, "componentType", type, "count", (json_int_t)count,
                          "type", shape);
    if (normalized) json_object_set_new(a, "normalized", json_true());
    return a;
}

/* POSITION's accessor for the N points at P, with the bounds glTF asks for */
static json_t *positions(int view, const float *p, size_t n)
{
    float lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
    for (size_t v = 0; v < n; v++)
        for (int c = 0; c < 3; c++) {
            float x = p[3 * v + c];
            lo[c] = x < lo[c] ? x : lo[c], hi[c] = x > hi[c] ? x : hi[c];
        }
    json_t *pos = accessor(view, GL_FLOAT, n, "VEC3", false);
    json_object_set_new(pos, "min", json_pack("[f,f,f]", lo[0], lo[1], lo[2]));
    json_object_set_new(pos, "max", json_pack("[f,f,f]", hi[0], hi[1], hi[2]));
    return pos;
}

/* the document around one primitive of ATTRIBUTES and INDICES and the material MAT */
static json_t *document(glb_parts *g, json_t *attributes, json_t *accessors, int indices, json_t *mat)
{
    return json_pack("{s:{s:s, s:s}, s:i, s:[{s:[i]}], s:[{s:i}], s:[{s:[{s:o, s:i, s:i, s:i}]}], s:[o], s:[s], "
                     "s:O, s:o, s:[{s:I}]}",
                     "asset", "version", "2.0", "generator", "clsplat mesh", "scene", 0, "scenes", "nodes", 0, "nodes",
                     "mesh", 0, "meshes", "primitives", "attributes", attributes, "indices", indices, "material", 0,
                     "mode", TRIANGLES, "materials", mat, "extensionsUsed", "KHR_materials_unlit", "bufferViews",
                     g->views, "accessors", accessors, "buffers", "byteLength", (json_int_t)g->bin.len);
}

/* an unlit material, white or with base colour texture 0 */
static json_t *material(const char *name, bool textured)
{
    json_t *pbr = json_pack("{s:[f,f,f,f], s:f, s:f}", "baseColorFactor", 1.0, 1.0, 1.0, 1.0, "metallicFactor", 0.0,
                            "roughnessFactor", 1.0);
    if (textured) json_object_set_new(pbr, "baseColorTexture", json_pack("{s:i}", "index", 0));
    return json_pack("{s:s, s:o, s:b, s:{s:{}}}", "name", name, "pbrMetallicRoughness", pbr, "doubleSided", 1,
                     "extensions", "KHR_materials_unlit");
}

/* shared vertices with COLOR_0: glTF's colours are linear (loaders turn them to sRGB on output)
   and clsplat's are sRGB as the photos are: linearised, in 16 bits so that dark ones keep their steps */
static json_t *vertex_coloured(glb_parts *g, const cs_mesh *m)
{
    uint16_t lin[256];
    for (int i = 0; i < 256; i++) lin[i] = (uint16_t)lrint(65535.0 * cs_srgb_to_linear(i / 255.0));
    uint16_t *col = malloc(8 * m->nv);
    if (!col) return cs_fail("out of host memory (%zu vertex colours)", m->nv), NULL;
    for (size_t v = 0; v < m->nv; v++)
        for (int c = 0; c < 4; c++) col[4 * v + c] = c < 3 ? lin[m->rgb[3 * v + c]] : 65535;
    int vp = add_view(g, m->pos, 12 * m->nv, ARRAY_BUFFER), vc = add_view(g, col, 8 * m->nv, ARRAY_BUFFER);
    int vi = add_view(g, m->tri, 12 * m->nt, ELEMENT_ARRAY_BUFFER);
    free(col);
    json_t *acc = json_pack("[o, o, o]", positions(vp, m->pos, m->nv), accessor(vc, GL_UNSIGNED_SHORT, m->nv, "VEC4", true),
                            accessor(vi, GL_UNSIGNED_INT, 3 * m->nt, "SCALAR", false));
    return document(g, json_pack("{s:i, s:i}", "POSITION", 0, "COLOR_0", 1), acc, 2, material("vertex colours", false));
}

/* the textured mesh: each triangle's own three corners (its cell of the atlas is its own) with
   TEXCOORD_0, and the atlas as a PNG (glTF's base colour textures are sRGB, as the colours are),
   sampled bilinearly without mipmaps (mesh_texture.h: what the refinement drew) */
static json_t *textured(glb_parts *g, const cs_mesh *m)
{
    size_t nc = 3 * m->nt;
    float *pos = malloc(12 * nc), *uv = malloc(8 * nc);
    uint32_t *idx = malloc(4 * nc);
    cs_image atlas = {0};
    uint8_t *png = NULL;
    size_t png_n = 0;
    json_t *doc = NULL;
    if (!pos || !uv || !idx) cs_fail("out of host memory (%zu textured corners)", nc);
    else if (!cs_mesh_tex_atlas(m, &atlas, uv) && !cs_image_encode_png(&atlas, 6, &png, &png_n)) {
        for (size_t c = 0; c < nc; c++) {
            memcpy(pos + 3 * c, m->pos + 3 * (size_t)m->tri[c], 12);
            idx[c] = (uint32_t)c;
        }
        int vp = add_view(g, pos, 12 * nc, ARRAY_BUFFER), vu = add_view(g, uv, 8 * nc, ARRAY_BUFFER);
        int vi = add_view(g, idx, 4 * nc, ELEMENT_ARRAY_BUFFER), vimg = add_view(g, png, png_n, 0);
        json_t *acc = json_pack("[o, o, o]", positions(vp, pos, nc), accessor(vu, GL_FLOAT, nc, "VEC2", false),
                                accessor(vi, GL_UNSIGNED_INT, nc, "SCALAR", false));
        doc = document(g, json_pack("{s:i, s:i}", "POSITION", 0, "TEXCOORD_0", 1), acc, 2, material("texture", true));
        json_object_set_new(doc, "images", json_pack("[{s:i, s:s}]", "bufferView", vimg, "mimeType", "image/png"));
        json_object_set_new(doc, "samplers", json_pack("[{s:i, s:i, s:i, s:i}]", "magFilter", GL_LINEAR, "minFilter",
                                                       GL_LINEAR, "wrapS", GL_CLAMP_TO_EDGE, "wrapT", GL_CLAMP_TO_EDGE));
        json_object_set_new(doc, "textures", json_pack("[{s:i, s:i}]", "sampler", 0, "source", 0));
    }
    free(pos), free(uv), free(idx), free(png);
    cs_image_free(&atlas);
    return doc;
}

static int put_u32(FILE *f, uint32_t v) { return fwrite(&v, 4, 1, f) == 1 ? 0 : -1; }

double cs_srgb_to_linear(double c)
{
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

bool cs_mesh_is_glb(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".glb");
}

/* the header, the JSON chunk (TEXT) and the BIN chunk into PATH atomically */
static int write_chunks(const char *path, const char *text, const cs_bytes *bin)
{
    size_t jn = strlen(text), jpad = (4 - jn % 4) % 4, total = 12 + 8 + jn + jpad + 8 + bin->len;
    if (total > 0xffffffffu) return cs_fail("%s: %zu bytes are more than a .glb holds (4 GiB)", path, total);
    cs_atomic_file af;
    if (cs_atomic_open(&af, path)) return -1;
    FILE *f = af.f;
    int bad = put_u32(f, GLB_MAGIC) || put_u32(f, 2) || put_u32(f, (uint32_t)total) ||
              put_u32(f, (uint32_t)(jn + jpad)) || put_u32(f, GLB_JSON) || fwrite(text, 1, jn, f) != jn ||
              fwrite("   ", 1, jpad, f) != jpad || put_u32(f, (uint32_t)bin->len) || put_u32(f, GLB_BIN) ||
              fwrite(bin->buf, 1, bin->len, f) != bin->len;
    if (bad) {
        cs_atomic_abort(&af);
        return cs_fail("%s: write failed", path);
    }
    return cs_atomic_commit(&af);
}

int cs_mesh_write_glb(const char *path, const cs_mesh *m)
{
    if (!m->nt || !m->nv) return cs_fail("%s: a mesh with no triangle is not written", path);
    if (m->nv > 0xffffffffu / 12 || m->nt > 0xffffffffu / 36)
        return cs_fail("%s: %zu vertices and %zu triangles are more than one glTF buffer holds", path, m->nv, m->nt);
    glb_parts g = {{NULL, 0, 0, 0}, json_array()};
    json_t *doc = !g.views                ? (cs_fail("out of host memory"), NULL)
                  : m->tex ? textured(&g, m) : vertex_coloured(&g, m);
    char *text = doc && !g.bin.oom ? json_dumps(doc, JSON_COMPACT) : NULL;
    if (doc && !text) cs_fail("out of host memory for the glTF document");
    json_decref(doc);
    json_decref(g.views);
    int rc = text ? write_chunks(path, text, &g.bin) : cs_fail_prefix("%s", path);
    free(text);
    cs_bytes_free(&g.bin);
    return rc;
}
