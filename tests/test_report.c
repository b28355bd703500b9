/* test_report: report.html from a run folder made here (config, log, metrics, previews of two
 * evaluations): the charts hold the logged points, only the latest previews are embedded and
 * decode to their files' bytes, text from the files is escaped, nothing outside the page is
 * referenced; a file that is not a report is never replaced; a folder that is not a run and a
 * torn log line are refused by name. */
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "run_report.h"
#include "test.h"
#include "util.h"

static int write_text(const char *dir, const char *name, const char *text)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return cs_write_file_atomic(p, text, strlen(text));
}

/* a run folder: LINES log lines, two test evaluations, previews at iterations 10 and 20 */
static int make_run(const char *dir, int lines, uint64_t *rs)
{
    char p[700];
    CHECK_OK(cs_mkdirs(dir));
    CHECK_OK(write_text(dir, "config.json", "{\"data\": {\"path\": \"</pre><script>alert(1)</script>\"}}"));
    char *log = malloc(200 * (size_t)lines + 1);
    log[0] = '\0';
    for (int i = 1; i <= lines; i++)
        snprintf(log + strlen(log), 200, "{\"iteration\": %d, \"loss\": %.4f, \"psnr\": %.2f, \"gaussians\": %d, "
                                         "\"device_mb\": 12.5, \"its\": 40, \"seconds\": %.2f}\n",
                 i * 10, 0.3 / i + 0.01 * test_rand(rs), 15 + i * 0.2, 1000 + 50 * i, i * 0.25);
    CHECK_OK(write_text(dir, "train_log.jsonl", log));
    free(log);
    CHECK_OK(write_text(dir, "metrics.json",
                        "[{\"iteration\": 10, \"split\": \"test\", \"views\": 4, \"psnr\": 18.5, \"ssim\": 0.7, "
                        "\"gaussians\": 1500, \"train_seconds\": 0.3},"
                        " {\"iteration\": 20, \"split\": \"test\", \"views\": 4, \"psnr\": 21.25, \"ssim\": 0.8, "
                        "\"gaussians\": 2000, \"train_seconds\": 0.6}]"));
    for (int it = 10; it <= 20; it += 10) {
        snprintf(p, sizeof p, "%s/previews/ours_%d", dir, it);
        CHECK_OK(cs_mkdirs(p));
        for (int v = 0; v < 2; v++) {
            cs_image img = {6 + v, 4, 3, malloc(3 * 4 * (6 + v))};
            for (int k = 0; k < 3 * 4 * (6 + v); k++) img.px[k] = (uint8_t)(256 * test_rand(rs));
            snprintf(p, sizeof p, "%s/previews/ours_%d/view_%d%s.png", dir, it, v, v ? "&<x>" : "");
            CHECK_OK(cs_image_save_png(p, &img));
            cs_image_free(&img);
        }
    }
    return 0;
}

static int b64(char c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* the data URI at S decodes to the bytes of FILE */
static int uri_is_file(const char *s, const char *file)
{
    size_t n = 0, k = 0;
    char *want = cs_read_file(file, &n);
    CHECK(want, "%s unreadable", file);
    unsigned char *got = malloc(n + 4);
    unsigned acc = 0;
    int bits = 0;
    for (; b64(*s) >= 0; s++) {
        acc = acc << 6 | (unsigned)b64(*s), bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (k < n + 4) got[k++] = (uint8_t)(acc >> bits);
        }
    }
    int same = k == n && !memcmp(got, want, n);
    free(got), free(want);
    CHECK(same, "an embedded preview does not decode to %s (%zu bytes decoded, %zu in the file)", file, k, n);
    return 0;
}

static int count(const char *hay, const char *needle)
{
    int c = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++) c++;
    return c;
}

int test_run_report(void)
{
    uint64_t rs = test_seed() ^ 0x4e9;
    char dir[600], p[700];
    snprintf(dir, sizeof dir, "%s/report_run", test_tmpdir());
    const int lines = 7 + (int)(test_rand(&rs) * 20);
    CHECK_OK(make_run(dir, lines, &rs));
    CHECK_OK(cs_run_report_write(dir, NULL));
    snprintf(p, sizeof p, "%s/report.html", dir);
    char *html = cs_read_file(p, NULL);
    CHECK(html && !strncmp(html, "<!DOCTYPE html>\n<!-- clsplat report -->\n", 39), "report.html missing or unmarked");
    CHECK(count(html, "<svg") == 6 && count(html, "</svg>") == 6, "%d charts, want 6", count(html, "<svg"));
    /* the loss chart (the first) has one polyline point a log line */
    const char *pl = strstr(html, "<polyline"), *pts = pl ? strstr(pl, "points=\"") : NULL;
    CHECK(pts, "no polyline");
    int commas = 0;
    for (const char *c = pts + 8; *c && *c != '"'; c++) commas += *c == ',';
    CHECK(commas == lines, "the loss line has %d points, the log %d lines", commas, lines);
    /* only iteration 20's previews, each decoding to its file; names escaped */
    CHECK(count(html, "data:image/png;base64,") == 2, "%d previews embedded, want 2", count(html, "data:image/png;base64,"));
    CHECK(strstr(html, "At iteration 20") && strstr(html, "view_1&amp;&lt;x&gt;.png"), "previews of iteration 20, escaped");
    const char *uri = strstr(html, "data:image/png;base64,");
    snprintf(p, sizeof p, "%s/previews/ours_20/view_0.png", dir);
    CHECK_OK(uri_is_file(uri + 22, p));
    /* text from the files is escaped; nothing is fetched from elsewhere */
    CHECK(!strstr(html, "<script") && strstr(html, "&lt;/pre&gt;&lt;script&gt;"), "config text not escaped");
    CHECK(!strstr(html, "src=\"http") && !strstr(html, "href=") && !strstr(html, "@import"), "an outside reference");
    CHECK(strstr(html, "21.250") && strstr(html, "not finished"), "evaluation table or state");
    free(html);
    /* not a report: never replaced */
    snprintf(p, sizeof p, "%s/notes.html", dir);
    CHECK_OK(write_text(dir, "notes.html", "<html>mine</html>"));
    CHECK(cs_run_report_write(dir, p) != 0 && strstr(cs_last_error(), "not a clsplat report"), "replaced %s", p);
    html = cs_read_file(p, NULL);
    CHECK(html && !strcmp(html, "<html>mine</html>"), "notes.html changed");
    free(html);
    /* without metrics.json: the charts of the test views say so, the page is still made */
    snprintf(p, sizeof p, "%s/metrics.json", dir);
    CHECK(remove(p) == 0, "remove %s", p);
    CHECK_OK(cs_run_report_write(dir, NULL));
    snprintf(p, sizeof p, "%s/report.html", dir);
    html = cs_read_file(p, NULL);
    CHECK(html && count(html, "no data") == 1 && strstr(html, "No evaluation yet"), "a run without evaluations");
    free(html);
    /* refusals: a torn log line by file and line, a folder that is not a run */
    snprintf(p, sizeof p, "%s/train_log.jsonl", dir);
    FILE *f = fopen(p, "a");
    CHECK(f, "append to the log");
    fputs("{\"iteration\": 9", f), fclose(f);
    CHECK(cs_run_report_write(dir, NULL) != 0 && strstr(cs_last_error(), "train_log.jsonl:") &&
              strstr(cs_last_error(), "not a JSON object"), "torn line: %s", cs_last_error());
    snprintf(p, sizeof p, "%s/previews", dir);
    CHECK(cs_run_report_write(p, NULL) != 0 && strstr(cs_last_error(), "no config.json"), "not a run: %s", cs_last_error());
    return 0;
}
