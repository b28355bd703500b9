#!/usr/bin/env python3
"""budget_curve.py: mesh PSNR against triangle budget (clsplat mesh --max-triangles N --psnr),
one curve per scene and stage, as an SVG with a logarithmic budget axis.

    python3 tools/budget_curve.py OUT.svg [--title T] [--dashed] LABEL=N:PSNR,N:PSNR,... ...

--dashed draws the next curve dashed (the fused colours, before --refine); curves whose labels
agree up to the first comma ("lego 7k, fused" and "lego 7k, refined") share a colour. The points come
from the README's table, so the picture is made from the numbers it shows. Standard library
only (tools/svg_chart.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_chart import chart, write_atomic  # noqa: E402


def parse(arg):
    label, pts = arg.split("=", 1)
    out = []
    for p in pts.split(","):
        n, psnr = p.split(":")
        out.append((float(n), float(psnr)))
    return label, sorted(out)


def main(argv):
    title, curves, dashed = "mesh PSNR at the test views against the triangle budget", [], False
    colours = {}  # a scene's colour index
    if len(argv) < 2:
        sys.exit(__doc__)
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--title" and i + 1 < len(argv):
            title, i = argv[i + 1], i + 2
            continue
        if a == "--dashed":
            dashed, i = True, i + 1
            continue
        if "=" not in a:
            sys.exit(__doc__)
        try:
            label, pts = parse(a)
        except ValueError:
            sys.exit(f"{a}: want LABEL=N:PSNR,N:PSNR,...")
        colour = colours.setdefault(label.split(",")[0], len(colours))
        curves.append((label, pts, dashed, colour))
        dashed, i = False, i + 1
    if not curves:
        sys.exit(__doc__)
    write_atomic(argv[0], chart(curves, title, "triangles (--max-triangles)", "mesh PSNR at the test views (dB)", xlog=True))


if __name__ == "__main__":
    main(sys.argv[1:])
