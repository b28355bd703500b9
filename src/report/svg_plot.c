/* svg_plot: line charts as inline SVG. */
#include "svg_plot.h"

#include <math.h>

#include "util.h"

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};
enum { N_COLORS = sizeof COLORS / sizeof COLORS[0], ML = 62, MR = 14, MT = 28, MB = 42 };

void cs_html_escape(FILE *f, const char *text)
{
    for (const char *c = text ? text : ""; *c; c++) switch (*c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*c, f);
        }
}

/* a round tick step (1, 2 or 5 times a power of ten) giving about 5 ticks over SPAN */
static double tick_step(double span)
{
    double raw = span / 5, mag = pow(10, floor(log10(raw)));
    return raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
}

typedef struct {
    double x0, x1, y0, y1;
    int pw, ph;
} frame;

static double fx(const frame *r, double x) { return ML + r->pw * (x - r->x0) / (r->x1 - r->x0); }
static double fy(const frame *r, double y) { return MT + r->ph * (1 - (y - r->y0) / (r->y1 - r->y0)); }

/* the bounds of every finite point; 0 when there is none */
static int bounds(const cs_plot_series *s, int ns, frame *r)
{
    int any = 0;
    r->x0 = r->y0 = INFINITY, r->x1 = r->y1 = -INFINITY;
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < s[i].n; j++) {
            double x = s[i].x[j], y = s[i].y[j];
            if (!isfinite(x) || !isfinite(y)) continue;
            any = 1;
            r->x0 = fmin(r->x0, x), r->x1 = fmax(r->x1, x), r->y0 = fmin(r->y0, y), r->y1 = fmax(r->y1, y);
        }
    if (!any) return 0;
    if (r->x1 - r->x0 <= 0) r->x0 -= 1, r->x1 += 1;
    double pad = r->y1 - r->y0 > 0 ? 0.05 * (r->y1 - r->y0) : fmax(fabs(r->y0) * 0.05, 1e-6);
    r->y0 -= pad, r->y1 += pad;
    return 1;
}

static void axes(FILE *f, const cs_plot *p, const frame *r)
{
    double sx = tick_step(r->x1 - r->x0), sy = tick_step(r->y1 - r->y0);
    /* counted loops: a step lost in the rounding of huge values cannot spin */
    for (int k = 0; k < 12; k++) {
        double t = (ceil(r->x0 / sx) + k) * sx;
        if (t > r->x1 + 1e-9 * sx) break;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/><text x=\"%.1f\" y=\"%d\" "
                   "text-anchor=\"middle\">%g</text>\n", fx(r, t), MT, fx(r, t), MT + r->ph, fx(r, t), MT + r->ph + 14,
                fabs(t) < 1e-9 * sx ? 0.0 : t);
    }
    for (int k = 0; k < 12; k++) {
        double t = (ceil(r->y0 / sy) + k) * sy;
        if (t > r->y1 + 1e-9 * sy) break;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/><text x=\"%d\" y=\"%.1f\" "
                   "text-anchor=\"end\">%g</text>\n", ML, fy(r, t), ML + r->pw, fy(r, t), ML - 4, fy(r, t) + 4,
                fabs(t) < 1e-9 * sy ? 0.0 : t);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", ML + r->pw / 2.0, p->height - 6);
    cs_html_escape(f, p->xlabel);
    fprintf(f, "</text><text transform=\"translate(12 %.1f) rotate(-90)\" text-anchor=\"middle\">", MT + r->ph / 2.0);
    cs_html_escape(f, p->ylabel);
    fputs("</text>\n", f);
}

static void series(FILE *f, const frame *r, const cs_plot_series *s, int i)
{
    const char *c = COLORS[i % N_COLORS];
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
    int shown = 0;
    for (int j = 0; j < s->n; j++)
        if (isfinite(s->x[j]) && isfinite(s->y[j])) fprintf(f, "%s%.1f,%.1f", shown++ ? " " : "", fx(r, s->x[j]), fy(r, s->y[j]));
    fputs("\"/>\n", f);
    if (shown <= 12) /* few points: mark each */
        for (int j = 0; j < s->n; j++)
            if (isfinite(s->x[j]) && isfinite(s->y[j]))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", fx(r, s->x[j]), fy(r, s->y[j]), c);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">",
            ML + 8, MT + 12 + 14 * i, ML + 24, MT + 12 + 14 * i, c, ML + 28, MT + 16 + 14 * i);
    cs_html_escape(f, s->label);
    fputs("</text>\n", f);
}

int cs_svg_plot(FILE *f, const cs_plot *p, const cs_plot_series *s, int ns)
{
    frame r;
    r.pw = p->width - ML - MR, r.ph = p->height - MT - MB;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
               "<text x=\"%.1f\" y=\"17\" text-anchor=\"middle\" font-size=\"13\">", p->width, p->height, p->width,
            p->height, p->width, p->height, p->width / 2.0);
    cs_html_escape(f, p->title);
    fputs("</text>\n", f);
    if (bounds(s, ns, &r)) {
        axes(f, p, &r);
        for (int i = 0; i < ns; i++) series(f, &r, &s[i], i);
    } else {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n", ML + r.pw / 2.0,
                MT + r.ph / 2.0);
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n</svg>\n", ML, MT,
            r.pw, r.ph);
    return ferror(f) ? cs_fail("writing a chart: %s", "stream error") : 0;
}
