/* progress: the training progress bar and plain progress lines. */
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util.h"

void cs_format_hms(double s, char *out, size_t n)
{
    if (!(s >= 0) || s > 359999999) {
        snprintf(out, n, "--:--:--");
        return;
    }
    long t = (long)(s + 0.5);
    snprintf(out, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

static int terminal_width(void)
{
    struct winsize w;
    if (ioctl(2, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
    const char *c = getenv("COLUMNS");
    int v = c ? atoi(c) : 0;
    return v > 0 ? v : 80;
}

void cs_progress_start(cs_progress *p, int start, int total)
{
    memset(p, 0, sizeof *p);
    p->tty = isatty(2);
    p->out = p->tty ? stderr : stdout;
    p->start = start, p->total = total, p->it_rate = start;
    p->t_start = p->t_draw = p->t_rate = cs_now();
    p->loss = p->psnr = NAN;
}

static double eta_of(const cs_progress *p, int iter) { return p->its > 0 ? (p->total - iter) / p->its : -1; }

void cs_progress_format(const cs_progress *p, int iter, int gaussians, size_t mem_used, size_t mem_budget, int width,
                        char *line, size_t n)
{
    char el[32], eta[32], fields[7][48];
    cs_format_hms(cs_now() - p->t_start, el, sizeof el);
    cs_format_hms(eta_of(p, iter), eta, sizeof eta);
    double pct = p->total > 0 ? 100.0 * iter / p->total : 100.0;
    /* the fields in the order they are dropped when the line is too narrow: last first */
    snprintf(fields[0], sizeof fields[0], " %5.1f%% %d/%d", pct, iter, p->total);
    snprintf(fields[1], sizeof fields[1], " %s<%s", el, eta);
    snprintf(fields[2], sizeof fields[2], " %.1f it/s", p->its);
    if (isnan(p->loss)) snprintf(fields[3], sizeof fields[3], " loss -");
    else snprintf(fields[3], sizeof fields[3], " loss %.4f", p->loss);
    if (isnan(p->psnr)) snprintf(fields[4], sizeof fields[4], " psnr -");
    else snprintf(fields[4], sizeof fields[4], " psnr %.2f", p->psnr);
    snprintf(fields[5], sizeof fields[5], " %d G", gaussians);
    snprintf(fields[6], sizeof fields[6], " mem %.0f/%.0f MiB", mem_used / 1048576.0, mem_budget / 1048576.0);
    int keep = 7;
    size_t text = 0;
    for (;;) {
        text = 0;
        for (int i = 0; i < keep; i++) text += strlen(fields[i]);
        if ((int)text + 12 <= width || keep == 1) break;
        keep--;
    }
    int bar = width - (int)text - 3;
    if (bar > 40) bar = 40;
    size_t k = 0;
    if (bar >= 5 && k + (size_t)bar + 3 < n) {
        int fill = (int)(bar * (pct / 100.0));
        line[k++] = '[';
        for (int i = 0; i < bar; i++) line[k++] = i < fill ? '#' : '.';
        line[k++] = ']';
    }
    line[k] = '\0';
    for (int i = 0; i < keep; i++) strncat(line, fields[i], n - strlen(line) - 1);
    if ((int)strlen(line) > width - 1 && width > 1) line[width - 1] = '\0';
}

static void update_rate(cs_progress *p, int iter, double now)
{
    if (now - p->t_rate >= 1.0 || p->its == 0) {
        if (now > p->t_rate && iter > p->it_rate) p->its = (iter - p->it_rate) / (now - p->t_rate);
        p->t_rate = now, p->it_rate = iter;
    }
}

void cs_progress_tick(cs_progress *p, int iter, int gaussians, size_t mem_used, size_t mem_budget)
{
    if (!p->tty) return;
    double now = cs_now();
    if (now - p->t_draw < 1.0 && iter != p->total) return;
    update_rate(p, iter, now);
    p->t_draw = now;
    char line[512];
    cs_progress_format(p, iter, gaussians, mem_used, mem_budget, terminal_width(), line, sizeof line);
    fprintf(p->out, "\r%s\033[K", line);
    fflush(p->out);
    p->drawn = 1;
}

void cs_progress_log(cs_progress *p, int iter, double loss, double psnr, int gaussians, size_t mem_used,
                     size_t mem_budget)
{
    p->loss = loss, p->psnr = psnr;
    if (p->tty) return;
    update_rate(p, iter, cs_now());
    char el[32], eta[32];
    cs_format_hms(cs_now() - p->t_start, el, sizeof el);
    cs_format_hms(eta_of(p, iter), eta, sizeof eta);
    fprintf(p->out, "iter %d/%d loss %.5f psnr %.2f gaussians %d it/s %.1f elapsed %s eta %s mem %.1f/%.0f MiB\n",
            iter, p->total, loss, psnr, gaussians, p->its, el, eta, mem_used / 1048576.0, mem_budget / 1048576.0);
}

void cs_progress_break(cs_progress *p)
{
    if (p->tty && p->drawn) fputc('\n', p->out);
    p->drawn = 0;
}
