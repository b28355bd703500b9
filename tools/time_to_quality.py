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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_chart import chart, write_atomic  # noqa: E402


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
    write_atomic(argv[0], chart([(label, [(x, y) for x, y, _, _ in pts], False) for label, pts in curves], title,
                                "training seconds (evaluations excluded)", "test PSNR (dB)"))


if __name__ == "__main__":
    main(sys.argv[1:])
