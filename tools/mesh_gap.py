#!/usr/bin/env python3
"""mesh_gap: where a mesh draws its test views worse than the model it came from.

For each test view, the squared error of the model's render and of the mesh's drawing against
the photo; the mesh's excess (its error less the model's) summed per band of the model's median
depth there (none, near, ordinary, far, relative to the view's median) and per class of the
photo's colour (sky: bright grey; leaves: green leads; the rest), with what the mesh would read
if each colour class alone were drawn at the model's error where that is lower; and, with --out,
a picture of the N worst views: photo | model, mesh | excess (red where the mesh is worse).

  usage: mesh_gap.py RENDERS DRAWINGS PHOTOS [--out DIR] [--worst N] [--leave-out STEM ...]
RENDERS:  `clsplat render -m RUN -o DIR --split test --depth-maps` gives DIR/test with <stem>.png
          and <stem>_depth_median.png, and DIR/depth_scale.json
DRAWINGS: `clsplat mesh -m RUN ... --renders DIR` gives DIR/<stem>.png
PHOTOS:   the dataset's photos (<stem>.<any extension>); box-filtered to the drawings' size when
          the run trained at a lower resolution
--leave-out: views not counted (one the model itself cannot draw swamps the shares)
Needs numpy and pillow (both on the GPU machines; Debian: python3-numpy python3-pil).
"""
import argparse
import json
import os
import sys

import numpy as np
from PIL import Image

COLOURS = ("sky", "leaves", "the rest")
BANDS = (("no surface", None, None), ("near (< 0.3 median)", 0.0, 0.3), ("ordinary", 0.3, 2.0), ("far (> 2 median)", 2.0, None))


def load_rgb(path, size=None):
    im = Image.open(path).convert("RGB")
    if size and im.size != size:
        im = im.resize(size, Image.BOX)
    return np.asarray(im, np.float64) / 255.0


def photos_by_stem(folder):
    return {os.path.splitext(name)[0]: os.path.join(folder, name) for name in os.listdir(folder)}


def band_masks(depth):
    seen = depth > 0
    med = float(np.median(depth[seen])) if seen.any() else 1.0
    out = []
    for name, lo, hi in BANDS:
        if lo is None and hi is None:
            out.append((name, ~seen))
            continue
        m = seen & (depth >= lo * med)
        if hi is not None:
            m &= depth < hi * med
        out.append((name, m))
    return out


def colour_masks(photo):
    """sky (mean above 0.7, channels within 0.12), leaves (green the largest, not sky), the rest"""
    grey = photo.max(2) - photo.min(2)
    sky = (photo.mean(2) > 0.7) & (grey < 0.12)
    leaves = ~sky & (photo[..., 1] > photo[..., 0]) & (photo[..., 1] >= photo[..., 2])
    return zip(COLOURS, (sky, leaves, ~sky & ~leaves))


def psnr(err):
    return -10.0 * np.log10(max(float(err.mean()), 1e-12))


def picture(photo, model, mesh, excess, path):
    h = np.clip(excess * 20.0, 0.0, 1.0)[..., None]
    heat = 0.5 * photo + 0.5 * np.concatenate([h, np.zeros_like(h), 1.0 - h], 2)
    grid = np.concatenate([np.concatenate([photo, model], 1), np.concatenate([mesh, heat], 1)], 0)
    img = Image.fromarray((grid * 255.0 + 0.5).astype(np.uint8))
    tmp = path + ".tmp"
    img.resize((img.width // 2, img.height // 2), Image.BOX).save(tmp, format="JPEG", quality=88)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("renders")
    ap.add_argument("drawings")
    ap.add_argument("photos")
    ap.add_argument("--out", help="folder for the pictures of the worst views")
    ap.add_argument("--worst", type=int, default=3)
    ap.add_argument("--leave-out", nargs="*", default=[], help="the stems of views not to count")
    a = ap.parse_args()
    for what, folder in (("renders", a.renders), ("drawings", a.drawings), ("photos", a.photos)):
        if not os.path.isdir(folder):
            sys.exit(f"mesh_gap: the {what} folder {folder} does not exist")
    if not os.path.exists(os.path.join(a.renders, "depth_scale.json")):
        sys.exit(f"mesh_gap: {a.renders} has no depth_scale.json (render with --depth-maps)")
    views = os.path.join(a.renders, "test") if os.path.isdir(os.path.join(a.renders, "test")) else a.renders
    with open(os.path.join(a.renders, "depth_scale.json")) as f:
        scale = json.load(f)["scale"]
    totals = {name: 0.0 for name, _, _ in BANDS}
    colours = {cls: [0.0, 0.0, []] for cls in COLOURS}  # pixel share, excess share, PSNR bounds
    photos = photos_by_stem(a.photos)
    drawn = {os.path.splitext(name)[0] for name in os.listdir(a.drawings) if name.endswith(".png")}
    unknown = [stem for stem in a.leave_out if stem not in drawn]
    if unknown:
        sys.exit(f"mesh_gap: --leave-out names no drawing in {a.drawings}: {', '.join(unknown)}")
    rows = []
    for name in sorted(os.listdir(a.drawings)):
        stem, ext = os.path.splitext(name)
        if ext != ".png" or stem in a.leave_out:
            continue
        render, depth_png, photo_path = (os.path.join(views, stem + ".png"),
                                         os.path.join(views, stem + "_depth_median.png"), photos.get(stem))
        if not (os.path.exists(render) and os.path.exists(depth_png) and photo_path):
            print(f"{stem}: no model render, depth or photo; left out", file=sys.stderr)
            continue
        mesh = load_rgb(os.path.join(a.drawings, name))
        size = (mesh.shape[1], mesh.shape[0])
        model, photo = load_rgb(render), load_rgb(photo_path, size)
        if model.shape != mesh.shape:
            sys.exit(f"{stem}: the model's render is {model.shape[1]}x{model.shape[0]}, the drawing {size[0]}x{size[1]}")
        depth = np.asarray(Image.open(depth_png), np.float64) * scale
        e_model, e_mesh = ((model - photo) ** 2).mean(2), ((mesh - photo) ** 2).mean(2)
        excess = e_mesh - e_model
        parts = []
        for band, m in band_masks(depth):
            share = float(excess[m].sum()) / excess.size
            totals[band] += share
            parts.append(f"{band} {100.0 * m.mean():.0f}% of the pixels, excess {share * 1e3:.2f}e-3")
        for cls, m in colour_masks(photo):
            colours[cls][0] += float(m.mean())
            colours[cls][1] += float(excess[m].sum()) / excess.size
            colours[cls][2].append(psnr(np.where(m, np.minimum(e_mesh, e_model), e_mesh)))
        p_model, p_mesh = psnr(e_model), psnr(e_mesh)
        rows.append((p_mesh - p_model, stem, p_model, p_mesh, photo, model, mesh, excess))
        print(f"{stem}: model {p_model:.2f} dB, mesh {p_mesh:.2f} dB | " + "; ".join(parts))
    if not rows:
        sys.exit("no view had a drawing, a model render, a depth map and a photo")
    all_excess = sum(totals.values())
    print(f"{len(rows)} views: model {np.mean([r[2] for r in rows]):.2f} dB, "
          f"mesh {np.mean([r[3] for r in rows]):.2f} dB (means of the views' PSNR)")
    print("the mesh's net excess squared error by the model's depth there (a band where the mesh does better "
          "counts against it): " + "; ".join(
        f"{band} {100.0 * v / all_excess if all_excess else 0.0:.1f}%" for band, v in totals.items()))
    all_colour = sum(v[1] for v in colours.values())
    print("by the photo's colour: " + "; ".join(
        f"{cls} {100.0 * v[0] / len(rows):.0f}% of the pixels, {100.0 * v[1] / all_colour if all_colour else 0.0:.0f}% "
        f"of the net excess, the mesh {np.mean(v[2]):.2f} dB with it at the model's error where lower"
        for cls, v in colours.items()))
    rows.sort(key=lambda r: r[0])
    for i, (gap, stem, _, _, photo, model, mesh, excess) in enumerate(rows[:a.worst]):
        line = f"worst {i + 1}: {stem}, the mesh {-gap:.2f} dB under the model"
        if a.out:
            os.makedirs(a.out, exist_ok=True)
            path = os.path.join(a.out, f"gap_{i + 1}_{stem}.jpg")
            picture(photo, model, mesh, excess, path)
            line += f" ({path})"
        print(line)


if __name__ == "__main__":
    main()
