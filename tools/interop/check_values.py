#!/usr/bin/python3
"""make check-interop, part 1: splat-transform's decode of a clsplat export against clsplat's own.

usage: check_values.py FORMAT SPLAT_TRANSFORM.csv CLSPLAT_DECODED.ply

CLSPLAT_DECODED.ply is `clsplat export --ply FILE --format ply` of the same export (clsplat's
reader, written as floats). Both decode the same bytes, so they must agree to float precision.
That includes the SPZ axes: both take the file's as RUB and return the PLY's RDF, so an SPZ
written with the wrong axes or signs (y, z, the quaternion's y and z, the SH coefficients odd in
y or z) fails here. One known difference: splat-transform decodes .splat rotation bytes as
b/255*2-1 where antimatter15's viewer and clsplat take (b-128)/128 (1e-3 allowed after
normalising). Exits 1 naming the first mismatch.
"""
import csv
import math
import struct
import sys


def read_ply(path):
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    names, count = [], 0
    for line in data[:end].decode().splitlines():
        p = line.split()
        if p[:2] == ["element", "vertex"]:
            count = int(p[2])
        elif p and p[0] == "property":
            if p[1] != "float":
                raise SystemExit(f"{path}: property {p[2]} is {p[1]}, expected float")
            names.append(p[2])
    rows = struct.iter_unpack("<%df" % len(names), data[end:end + 4 * len(names) * count])
    return [dict(zip(names, r)) for r in rows]


def read_csv(path):
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]


def sigmoid(x):
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, x))))


def unit(q):
    n = math.sqrt(sum(c * c for c in q)) or 1.0
    return [c / n for c in q]


def main():
    fmt, st_path, ply_path = sys.argv[1:4]
    st, ours = read_csv(st_path), read_ply(ply_path)
    if len(st) != len(ours):
        raise SystemExit(f"{fmt}: splat-transform read {len(st)} Gaussians, clsplat {len(ours)}")
    rest = sorted((k for k in ours[0] if k.startswith("f_rest_")), key=lambda k: int(k[7:]))
    worst = {}

    def check(i, what, a, b, tol):
        d = abs(a - b)
        worst[what] = max(worst.get(what, 0.0), d)
        if not d <= tol:
            raise SystemExit(f"{fmt}: Gaussian {i} {what}: splat-transform {a:.6g}, clsplat {b:.6g} (tolerance {tol:g})")

    for i, (s, o) in enumerate(zip(st, ours)):
        for c, axis in enumerate("xyz"):
            check(i, "position", s[axis], o[axis], 1e-5 * (1 + abs(o[axis])))
            check(i, "log-scale", s[f"scale_{c}"], o[f"scale_{c}"], 1e-4)
            check(i, "dc", s[f"f_dc_{c}"], o[f"f_dc_{c}"], 1e-4)
        check(i, "opacity", sigmoid(s["opacity"]), sigmoid(o["opacity"]), 2.5e-3)
        q_st = unit([s[f"rot_{c}"] for c in range(4)])
        q_us = unit([o[f"rot_{c}"] for c in range(4)])
        dot = abs(sum(a * b for a, b in zip(q_st, q_us)))
        check(i, "rotation 1-|cos|", 1 - dot, 0.0, 2e-4 if fmt != "splat" else 1e-3)
        for k, name in enumerate(rest):
            if name not in s:
                raise SystemExit(f"{fmt}: splat-transform has no {name}")
            check(i, "sh", s[name], o[name], 1e-4)
    print(f"{fmt}: {len(st)} Gaussians agree; largest differences: " +
          ", ".join(f"{k} {v:.2g}" for k, v in sorted(worst.items())))


if __name__ == "__main__":
    main()
