#!/usr/bin/env python3
"""time_to_quality.py: test PSNR against training seconds, one curve per run, as an SVG.

    python3 tools/time_to_quality.py OUT.svg LABEL=RUN_DIR [LABEL=RUN_DIR ...] [--title T]

Each RUN_DIR is a clsplat output folder: its metrics.json gives, for every evaluation of the
test split made during training, the iteration, the mean PSNR and "train_seconds" (training
time before the evaluation, evaluations excluded). The curves share one pair of axes. Only the
standard library is used: the SVG is written by hand. Also prints the points as a table."""
import json
import os
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
W, H, ML, MR, MT, MB = 720, 440, 64, 150, 40, 52


def points(run_dir):
    """(seconds, psnr, iteration, gaussians) of the run's test evaluations, in time order."""
    path = os.path.join(run_dir, "metrics.json")
    with open(path, encoding="utf-8") as f:
        recs = json.load(f)
    pts = []
    for r in recs:
        if r.get("split") != "test" or r.get("source", "train") != "train":
            continue
        if "train_seconds" not in r:
            sys.exit(f"{path}: an evaluation without train_seconds (written by an older clsplat)")
        pts.append((float(r["train_seconds"]), float(r["psnr"]), int(r["iteration"]), int(r.get("gaussians", 0))))
    if not pts:
        sys.exit(f"{path}: no test evaluation made during training (set eval.test_iterations)")
    return sorted(pts)


def esc(text):
    return text.replace("&", "&amp;").replace("<", "&lt;")


def nice_step(span, ticks=6):
    raw = span / ticks
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 0.1
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def svg(curves, title):
    xs = [p[0] for _, pts in curves for p in pts]
    ys = [p[1] for _, pts in curves for p in pts]
    x1 = max(xs) * 1.05
    y0, y1 = min(ys), max(ys)
    pad = max(0.5, 0.05 * (y1 - y0))
    y0, y1 = y0 - pad, y1 + pad
    pw, ph = W - ML - MR, H - MT - MB

    def px(x):
        return ML + pw * x / x1

    def py(y):
        return MT + ph * (1 - (y - y0) / (y1 - y0))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{ML + pw / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>']
    sx, sy = nice_step(x1), nice_step(y1 - y0)
    t = 0.0
    while t <= x1:
        out.append(f'<line x1="{px(t):.1f}" y1="{MT}" x2="{px(t):.1f}" y2="{MT + ph}" stroke="#ddd"/>')
        out.append(f'<text x="{px(t):.1f}" y="{MT + ph + 16}" text-anchor="middle">{t:g}</text>')
        t += sx
    t = sy * int(y0 / sy + 1)
    while t <= y1:
        out.append(f'<line x1="{ML}" y1="{py(t):.1f}" x2="{ML + pw}" y2="{py(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{ML - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
        t += sy
    out.append(f'<rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{ML + pw / 2}" y="{H - 12}" text-anchor="middle">training seconds (evaluations excluded)</text>')
    out.append(f'<text transform="translate(16 {MT + ph / 2}) rotate(-90)" text-anchor="middle">test PSNR (dB)</text>')
    for i, (label, pts) in enumerate(curves):
        c = COLORS[i % len(COLORS)]
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _, _ in pts)
        out.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"/>')
        for x, y, _, _ in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        ly = MT + 16 + 18 * i
        out.append(f'<line x1="{ML + pw + 14}" y1="{ly - 4}" x2="{ML + pw + 34}" y2="{ly - 4}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{ML + pw + 40}" y="{ly}">{esc(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    title = "test PSNR against training time"
    if "--title" in argv:
        i = argv.index("--title")
        title = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        sys.exit(__doc__)
    curves = []
    for a in argv[1:]:
        label, run = a.split("=", 1)
        curves.append((label, points(run)))
    for label, pts in curves:
        for x, y, it, g in pts:
            print(f"{label:12s} iteration {it:6d}  {x:8.1f} s  {y:7.3f} dB  {g:8d} Gaussians")
    tmp = argv[0] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(svg(curves, esc(title)))
    os.replace(tmp, argv[0])


if __name__ == "__main__":
    main(sys.argv[1:])
