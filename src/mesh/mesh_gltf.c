/* mesh_gltf: binary glTF 2.0 of a mesh (mesh_gltf.h). */
#include "mesh_gltf.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

enum { GLB_MAGIC = 0x46546C67, GLB_JSON = 0x4E4F534A, GLB_BIN = 0x004E4942 };
enum { GL_FLOAT = 5126, GL_UNSIGNED_SHORT = 5123, GL_UNSIGNED_INT = 5125 };
enum { ARRAY_BUFFER = 34962, ELEMENT_ARRAY_BUFFER = 34963, TRIANGLES = 4 };

static json_t *view(size_t offset, size_t length, int target)
{
    return json_pack("{s:i, s:I, s:I, s:i}", "buffer", 0, "byteOffset", (json_int_t)offset, "byteLength",
                     (json_int_t)length, "target", target);
}

static json_t *accessor(int view, int type, size_t count, const char *shape, bool normalized)
{
    json_t *a = json_pack("{s:i, s:i, s:I, s:s}", "bufferView", view, "componentType", type, "count", (json_int_t)count,
                          "type", shape);
    if (normalized) json_object_set_new(a, "normalized", json_true());
    return a;
}

/* the JSON chunk: positions at 0, colours after them, indices after those (BIN offsets) */
static json_t *document(const cs_mesh *m, size_t pos_bytes, size_t col_bytes, size_t idx_bytes)
{
    float lo[3] = {m->pos[0], m->pos[1], m->pos[2]}, hi[3] = {m->pos[0], m->pos[1], m->pos[2]};
    for (size_t v = 0; v < m->nv; v++)
        for (int c = 0; c < 3; c++) {
            float x = m->pos[3 * v + c];
            lo[c] = x < lo[c] ? x : lo[c], hi[c] = x > hi[c] ? x : hi[c];
        }
    json_t *pos = accessor(0, GL_FLOAT, m->nv, "VEC3", false);
    json_object_set_new(pos, "min", json_pack("[f,f,f]", lo[0], lo[1], lo[2]));
    json_object_set_new(pos, "max", json_pack("[f,f,f]", hi[0], hi[1], hi[2]));
    json_t *doc = json_pack(
        "{s:{s:s, s:s}, s:i, s:[{s:[i]}], s:[{s:i}], s:[{s:[{s:{s:i, s:i}, s:i, s:i, s:i}]}], s:[{s:s, s:{s:[f,f,f,f], "
        "s:f, s:f}, s:b, s:{s:{}}}], s:[s], s:[o, o, o], s:[o, o, o], s:[{s:I}]}",
        "asset", "version", "2.0", "generator", "clsplat mesh", "scene", 0, "scenes", "nodes", 0, "nodes", "mesh", 0,
        "meshes", "primitives", "attributes", "POSITION", 0, "COLOR_0", 1, "indices", 2, "material", 0, "mode", TRIANGLES,
        "materials", "name", "vertex colours", "pbrMetallicRoughness", "baseColorFactor", 1.0, 1.0, 1.0, 1.0,
        "metallicFactor", 0.0, "roughnessFactor", 1.0, "doubleSided", 1, "extensions", "KHR_materials_unlit",
        "extensionsUsed", "KHR_materials_unlit", "bufferViews", view(0, pos_bytes, ARRAY_BUFFER),
        view(pos_bytes, col_bytes, ARRAY_BUFFER), view(pos_bytes + col_bytes, idx_bytes, ELEMENT_ARRAY_BUFFER),
        "accessors", pos, accessor(1, GL_UNSIGNED_SHORT, m->nv, "VEC4", true), accessor(2, GL_UNSIGNED_INT, 3 * m->nt, "SCALAR", false),
        "buffers", "byteLength", (json_int_t)(pos_bytes + col_bytes + idx_bytes));
    return doc;
}

static int put_u32(FILE *f, uint32_t v) { return fwrite(&v, 4, 1, f) == 1 ? 0 : -1; }

/* the BIN chunk's payload: positions, RGBA colours, indices (each a multiple of 4 bytes). glTF's
   COLOR_0 is linear (loaders turn it to sRGB on output) and clsplat's colours are sRGB as the
   photos are: they are linearised, in 16 bits so that dark ones keep their steps */
static int write_bin(FILE *f, const cs_mesh *m)
{
    uint16_t lin[256];
    for (int i = 0; i < 256; i++) lin[i] = (uint16_t)lrint(65535.0 * cs_srgb_to_linear(i / 255.0));
    if (fwrite(m->pos, 12, m->nv, f) != m->nv) return -1;
    for (size_t v = 0; v < m->nv; v++) {
        uint16_t c[4] = {lin[m->rgb[3 * v]], lin[m->rgb[3 * v + 1]], lin[m->rgb[3 * v + 2]], 65535};
        if (fwrite(c, 8, 1, f) != 1) return -1;
    }
    return fwrite(m->tri, 12, m->nt, f) == m->nt ? 0 : -1;
}

double cs_srgb_to_linear(double c)
{
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

bool cs_mesh_is_glb(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".glb");
}

int cs_mesh_write_glb(const char *path, const cs_mesh *m)
{
    if (!m->nt || !m->nv) return cs_fail("%s: a mesh with no triangle is not written", path);
    if (m->nv > 0xffffffffu / 12 || m->nt > 0xffffffffu / 12)
        return cs_fail("%s: %zu vertices and %zu triangles are more than one glTF buffer holds", path, m->nv, m->nt);
    size_t pos_bytes = 12 * m->nv, col_bytes = 8 * m->nv, idx_bytes = 12 * m->nt, bin = pos_bytes + col_bytes + idx_bytes;
    json_t *doc = document(m, pos_bytes, col_bytes, idx_bytes);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text) return cs_fail("%s: out of host memory for the glTF document", path);
    size_t jn = strlen(text), jpad = (4 - jn % 4) % 4, total = 12 + 8 + jn + jpad + 8 + bin;
    if (total > 0xffffffffu) {
        free(text);
        return cs_fail("%s: %zu bytes are more than a .glb holds (4 GiB)", path, total);
    }
    cs_atomic_file af;
    if (cs_atomic_open(&af, path)) return free(text), -1;
    FILE *f = af.f;
    int bad = put_u32(f, GLB_MAGIC) || put_u32(f, 2) || put_u32(f, (uint32_t)total) ||
              put_u32(f, (uint32_t)(jn + jpad)) || put_u32(f, GLB_JSON) || fwrite(text, 1, jn, f) != jn ||
              fwrite("   ", 1, jpad, f) != jpad || put_u32(f, (uint32_t)bin) || put_u32(f, GLB_BIN) || write_bin(f, m);
    free(text);
    if (bad) {
        cs_atomic_abort(&af);
        return cs_fail("%s: write failed", path);
    }
    return cs_atomic_commit(&af);
}
