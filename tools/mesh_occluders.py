#!/usr/bin/env python3
"""mesh_occluders: the mesh's triangles that stand in front of the object in one view, and what
the other training views make of them.

A triangle counts as an occluder in VIEW when its centre projects onto a pixel of the object
(the photo's channels differ by more than --chroma of 255: a coloured object on a plain grey
backdrop) and lies nearer than --ratio times the model's median depth there. For a sample of
them (at most --sample), each other training view (not a test view: every 8th name, as
data.eval) is asked what it saw along the ray through the point: a surface there (its median
depth within --tol of the point's camera z, relative), past it (deeper: the fusion carves the
point from this view, unless the depth check dropped that depth), a surface in front of it, or
nothing (the point outside the view). Prints the occluders' count and the mean count of views
in each class, and the views that see them as surface.

  usage: mesh_occluders.py RUN MESH.ply DEPTHS PHOTOS VIEW [--ratio R] [--tol T] [--chroma C]
RUN:    the trained model's folder (its cameras.json)
MESH:   `clsplat mesh -m RUN -o MESH.ply ...` (binary PLY: vertex x y z first, then faces)
DEPTHS: `clsplat render -m RUN -o DIR --split all --depth-maps` (DIR/depth_scale.json and the
        *_depth_median.png of every view, at the model's resolution)
PHOTOS: the dataset's photos (<stem>.<any extension>), resized to the model's resolution
VIEW:   the view's stem, e.g. IMG_3518
Needs numpy and pillow (Debian: python3-numpy python3-pil; both on the GPU machines).
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
from PIL import Image


def read_ply(path):
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    head = data[:end].decode("ascii").split("\n")
    if "format binary_little_endian 1.0" not in head:
        sys.exit("mesh_occluders: %s is not a binary little-endian PLY" % path)
    types = {"float": "<f4", "uchar": "u1", "int": "<i4", "uint": "<u4", "double": "<f8"}
    nv = nf = 0
    props, cur = [], None
    for line in head:
        w = line.split()
        if w[:1] == ["element"]:
            cur = w[1]
            nv, nf = (int(w[2]), nf) if cur == "vertex" else (nv, int(w[2]) if cur == "face" else nf)
        elif w[:1] == ["property"] and cur == "vertex":
            props.append((w[2], types[w[1]]))
    vert = np.frombuffer(data, dtype=np.dtype(props), count=nv, offset=end)
    xyz = np.stack([vert["x"], vert["y"], vert["z"]], 1).astype(np.float64)
    faces = np.frombuffer(data, dtype=np.dtype([("n", "u1"), ("i", "<i4", 3)]), count=nf, offset=end + vert.nbytes)
    if nf and np.any(faces["n"] != 3):
        sys.exit("mesh_occluders: %s has faces that are not triangles" % path)
    return xyz, faces["i"]


def project(cam, pts):
    """pixel column, row and camera z of PTS (n x 3) in CAM (cameras.json: rotation is c2w)"""
    R = np.array(cam["rotation"])
    x = (pts - np.array(cam["position"])) @ R
    z = x[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = cam["fx"] * x[:, 0] / z + cam["cx"]
        v = cam["fy"] * x[:, 1] / z + cam["cy"]
    ok = (z > 1e-6) & (u >= 0) & (v >= 0) & (u < cam["width"]) & (v < cam["height"])
    return np.where(ok, u, 0).astype(int), np.where(ok, v, 0).astype(int), z, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for a in ("run", "mesh", "depths", "photos", "view"):
        ap.add_argument(a)
    ap.add_argument("--ratio", type=float, default=0.8)
    ap.add_argument("--tol", type=float, default=0.02)
    ap.add_argument("--chroma", type=int, default=40)
    ap.add_argument("--sample", type=int, default=2000)
    a = ap.parse_args()
    cams = {c["img_name"]: c for c in json.load(open(os.path.join(a.run, "cameras.json")))}
    if a.view not in cams:
        sys.exit("mesh_occluders: no view %s in %s/cameras.json" % (a.view, a.run))
    scale = json.load(open(os.path.join(a.depths, "depth_scale.json")))["scale"]

    def depth(stem):
        f = glob.glob(os.path.join(a.depths, "**", stem + "_depth_median.png"), recursive=True)
        if not f:
            sys.exit("mesh_occluders: no %s_depth_median.png under %s" % (stem, a.depths))
        return np.asarray(Image.open(f[0]), dtype=np.float64) * scale

    cam = cams[a.view]
    photo = glob.glob(os.path.join(a.photos, a.view + ".*"))
    if not photo:
        sys.exit("mesh_occluders: no photo %s.* in %s" % (a.view, a.photos))
    rgb = np.asarray(Image.open(photo[0]).convert("RGB").resize((cam["width"], cam["height"]), Image.BOX), dtype=int)
    obj = rgb.max(2) - rgb.min(2) > a.chroma
    xyz, tris = read_ply(a.mesh)
    ctr = xyz[tris].mean(1)
    u, v, z, ok = project(cam, ctr)
    d = depth(a.view)[v, u]
    occ = ok & obj[v, u] & (d > 0) & (z < a.ratio * d)
    print("%s: %d of %d triangles in front of the object (nearer than %.2g of the model's depth)" %
          (a.view, int(occ.sum()), len(tris), a.ratio))
    pts = ctr[occ]
    if not len(pts):
        return 0
    pts = pts[np.random.default_rng(0).permutation(len(pts))[:a.sample]]
    names = sorted(cams)
    tests = set(names[::8])
    counts = {"surface": 0, "sees past": 0, "surface in front": 0, "no depth": 0, "outside": 0}
    surface_views = []
    for n in names:
        if n in tests:
            continue
        uu, vv, zz, okk = project(cams[n], pts)
        dd = np.where(okk, depth(n)[vv, uu], 0.0)
        near = np.abs(dd - zz) <= a.tol * zz
        counts["outside"] += int((~okk).sum())
        counts["no depth"] += int((okk & (dd <= 0)).sum())
        counts["surface"] += int((okk & (dd > 0) & near).sum())
        counts["sees past"] += int((okk & (dd > 0) & ~near & (dd > zz)).sum())
        counts["surface in front"] += int((okk & (dd > 0) & ~near & (dd < zz)).sum())
        surface_views.append((int((okk & (dd > 0) & near).sum()), n))
    print("per occluder (%d sampled), training views that see: %s" %
          (len(pts), ", ".join("%s %.2f" % (k, c / len(pts)) for k, c in counts.items())))
    print("views that see them as surface: " +
          ", ".join("%s %d" % (n, c) for c, n in sorted(surface_views, reverse=True)[:10] if c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
