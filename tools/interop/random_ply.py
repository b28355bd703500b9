#!/usr/bin/python3
"""Writes N random Gaussians (SH degree 3, graphdeco PLY) for make check-interop's value checks:
positions in a 4-unit box, log-scales -6..-2, any rotation, opacity logits -4..4, DC -1..1,
rest SH -0.5..0.5 (every sign and axis convention shows).   usage: random_ply.py OUT.ply N SEED"""
import math
import random
import struct
import sys

out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
props = ["x", "y", "z", "nx", "ny", "nz"] + [f"f_dc_{c}" for c in range(3)] + [f"f_rest_{k}" for k in range(45)] + \
        ["opacity"] + [f"scale_{c}" for c in range(3)] + [f"rot_{c}" for c in range(4)]
with open(out + ".tmp", "wb") as f:
    f.write(("ply\nformat binary_little_endian 1.0\nelement vertex %d\n" % n).encode())
    f.write("".join(f"property float {p}\n" for p in props).encode() + b"end_header\n")
    for _ in range(n):
        q = [rng.gauss(0, 1) for _ in range(4)]
        row = [rng.uniform(-2, 2) for _ in range(3)] + [0, 0, 0] + [rng.uniform(-1, 1) for _ in range(3)] + \
              [rng.uniform(-0.5, 0.5) for _ in range(45)] + [rng.uniform(-4, 4)] + \
              [rng.uniform(-6, -2) for _ in range(3)] + q
        f.write(struct.pack("<%df" % len(row), *row))
import os  # noqa: E402
os.replace(out + ".tmp", out)
