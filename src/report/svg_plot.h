/* svg_plot: line charts written as inline SVG (for report.html): one or more series of
 * (x, y) points on shared linear axes with ticks at round numbers, a title, axis labels and a
 * legend. Needs nothing but stdio: the page that holds it works offline. */
#ifndef CS_SVG_PLOT_H
#define CS_SVG_PLOT_H

#include <stdio.h>

typedef struct {
    const char *label;    /* legend text (escaped when written) */
    const double *x, *y;  /* N points; non-finite ones are skipped */
    int n;
} cs_plot_series;

typedef struct {
    const char *title, *xlabel, *ylabel;
    int width, height;    /* pixels of the whole chart */
} cs_plot;

/* Writes one <svg> element for the series S (NS of them) to F. A chart with no finite point
 * says "no data" in its frame. Returns 0, or -1 with a message when F fails. */
int cs_svg_plot(FILE *f, const cs_plot *p, const cs_plot_series *s, int ns);
/* Writes TEXT with &, <, >, " and ' escaped for HTML and SVG. */
void cs_html_escape(FILE *f, const char *text);

#endif
