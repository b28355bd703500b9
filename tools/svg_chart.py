"""svg_chart.py: a line chart as a self-contained SVG, written by hand (standard library only),
shared by tools/time_to_quality.py and tools/budget_curve.py.

chart(curves, title, xlabel, ylabel, xlog=False) -> str
    curves: [(label, [(x, y), ...], dashed[, colour index]), ...]; one pair of axes, a legend on
    the right; without an index each curve takes the next colour.
    xlog: a logarithmic x axis with a tick at every x of the points (budgets: 100k, 1M, ...)."""
import math

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
W, H, ML, MR, MT, MB = 720, 440, 64, 190, 40, 52


def esc(text):
    return text.replace("&", "&amp;").replace("<", "&lt;")


def nice_step(span, ticks=6):
    raw = span / ticks
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 0.1
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def short(x):
    """1000000 -> 1M, 250000 -> 250k"""
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:g}{suffix}"
    return f"{x:g}"


def chart(curves, title, xlabel, ylabel, xlog=False):
    xs = [p[0] for c in curves for p in c[1]]
    ys = [p[1] for c in curves for p in c[1]]
    tx = (lambda x: math.log(x)) if xlog else (lambda x: x)
    x0, x1 = (tx(min(xs)), tx(max(xs))) if xlog else (0.0, max(xs) * 1.05)
    if xlog:
        pad = 0.06 * (x1 - x0 or 1)
        x0, x1 = x0 - pad, x1 + pad
    y0, y1 = min(ys), max(ys)
    pad = max(0.5, 0.05 * (y1 - y0))
    y0, y1 = y0 - pad, y1 + pad
    pw, ph = W - ML - MR, H - MT - MB

    def px(x):
        return ML + pw * (tx(x) - x0) / (x1 - x0)

    def py(y):
        return MT + ph * (1 - (y - y0) / (y1 - y0))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{ML + pw / 2}" y="22" text-anchor="middle" font-size="14">{esc(title)}</text>']
    if xlog:
        xticks = [(x, short(x)) for x in sorted(set(xs))]
    else:
        sx, xticks, t = nice_step(max(xs) * 1.05), [], 0.0
        while t <= max(xs) * 1.05:
            xticks.append((t, f"{t:g}"))
            t += sx
    for t, text in xticks:
        out.append(f'<line x1="{px(t):.1f}" y1="{MT}" x2="{px(t):.1f}" y2="{MT + ph}" stroke="#ddd"/>')
        out.append(f'<text x="{px(t):.1f}" y="{MT + ph + 16}" text-anchor="middle">{text}</text>')
    sy = nice_step(y1 - y0)
    t = sy * int(y0 / sy + 1)
    while t <= y1:
        out.append(f'<line x1="{ML}" y1="{py(t):.1f}" x2="{ML + pw}" y2="{py(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{ML - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
        t += sy
    out.append(f'<rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{ML + pw / 2}" y="{H - 12}" text-anchor="middle">{esc(xlabel)}</text>')
    out.append(f'<text transform="translate(16 {MT + ph / 2}) rotate(-90)" text-anchor="middle">{esc(ylabel)}</text>')
    for i, curve in enumerate(curves):
        label, pts, dashed = curve[:3]
        c = COLORS[(curve[3] if len(curve) > 3 else i) % len(COLORS)]
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        line = " ".join(f"{px(p[0]):.1f},{py(p[1]):.1f}" for p in pts)
        out.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for p in pts:
            out.append(f'<circle cx="{px(p[0]):.1f}" cy="{py(p[1]):.1f}" r="3" fill="{c}"/>')
        ly = MT + 16 + 18 * i
        out.append(f'<line x1="{ML + pw + 14}" y1="{ly - 4}" x2="{ML + pw + 34}" y2="{ly - 4}" stroke="{c}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{ML + pw + 40}" y="{ly}">{esc(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    import os
    os.replace(tmp, path)
