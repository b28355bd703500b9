/* test_report: report.html from a run folder made here (config, log, metrics, previews of two
 * evaluations): the charts hold the logged points, only the latest previews are embedded and
 * decode to their files' bytes, text from the files is escaped, nothing outside the page is
 * referenced; a file that is not a report is never replaced; a folder that is not a run and a
 * torn log line are refused by name. The view server: the live page and the run's files over
 * HTTP, path traversal, other methods, oversized and garbage requests refused, a hanging client
 * holding up nothing, the token off loopback, a batch folder's pages; the viewer page, its
 * script, the model it draws (none yet, the newest saved PLY, then a published snapshot that
 * wins over PLYs), photo IDs other than digits refused. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_run.h"
#include "image.h"
#include "run_report.h"
#include "svg_plot.h"
#include "test.h"
#include "util.h"
#include "ply.h"
#include "view_model.h"
#include "view_server.h"

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
    CHECK_OK(write_text(dir, "memory.json", "{\"current_bytes\": {\"total\": 4699824, \"params\": 591184}, "
                                            "\"peak_bytes\": {\"total\": 10440800, \"params\": 1638000}, "
                                            "\"plan\": {\"bytes_per_gaussian\": 956, \"fixed_bytes\": 4896000, "
                                            "\"max_gaussians\": 3048784, \"budget_bytes\": 5559781498}}"));
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
    CHECK(count(html, "<svg") == 10 && count(html, "</svg>") == 10, "%d charts, want 10", count(html, "<svg"));
    CHECK(count(html, "training seconds (evaluations excluded)") == 5, "five charts against training time");
    CHECK(strstr(html, "<td>bytes a Gaussian</td><td>956</td>") && strstr(html, "<td>budget</td><td>5302.2 MiB</td>") &&
              strstr(html, "<td>params</td><td>0.6 MiB</td><td>1.6 MiB</td>"), "the memory plan and use");
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
    /* without metrics.json: the page is still made, the charts hold the training view */
    snprintf(p, sizeof p, "%s/metrics.json", dir);
    CHECK(remove(p) == 0, "remove %s", p);
    CHECK_OK(cs_run_report_write(dir, NULL));
    snprintf(p, sizeof p, "%s/report.html", dir);
    html = cs_read_file(p, NULL);
    CHECK(html && count(html, "no data") == 0 && count(html, "<svg") == 10 && strstr(html, "No evaluation yet"),
          "a run without evaluations");
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

/* ---- the view server --------------------------------------------------------------------- */

/* sends REQ raw to 127.0.0.1:PORT and reads the answer until the server closes (5 s at most);
   the status code, or -1 when none came; the whole answer in *BODY when asked (caller frees) */
static int http_raw(int port, const char *req, size_t n, char **body)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET, a.sin_port = htons((uint16_t)port), a.sin_addr.s_addr = htonl(0x7f000001);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        if (fd >= 0) close(fd);
        return -1;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
    }
    cs_bytes got = {0};
    char buf[65536];
    ssize_t r;
    while ((r = recv(fd, buf, sizeof buf, 0)) > 0) cs_bytes_append(&got, buf, (size_t)r);
    close(fd);
    cs_bytes_append(&got, "", 1);
    int status = -1;
    if (got.buf && sscanf((char *)got.buf, "HTTP/1.%*d %d", &status) != 1) status = -1;
    if (body) *body = (char *)got.buf;
    else cs_bytes_free(&got);
    return status;
}

/* GET PATH with the header lines EXTRA (any length: the request is sized to them) */
static int http_get(int port, const char *path, const char *extra, char **body)
{
    const char *fmt = "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n";
    if (!extra) extra = "";
    int n = snprintf(NULL, 0, fmt, path, extra);
    char *req = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!req) return -1;
    snprintf(req, (size_t)n + 1, fmt, path, extra);
    int status = http_raw(port, req, (size_t)n, body);
    free(req);
    return status;
}

/* an idle connection that has sent half a request: open while other requests are answered */
static int half_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET, a.sin_port = htons((uint16_t)port), a.sin_addr.s_addr = htonl(0x7f000001);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) return -1;
    send(fd, "GET / HTTP/1.1\r\nHos", 19, MSG_NOSIGNAL);
    return fd;
}

static int serve_checks(const char *dir, int port)
{
    char *body = NULL, p[800];
    CHECK(http_get(port, "/", NULL, &body) == 200 && strstr(body, "<title>clsplat view</title>") &&
              strstr(body, "<script src=\"viewer.js\">") && strstr(body, "script-src 'self'"),
          "GET / did not give the viewer page");
    free(body);
    CHECK(http_get(port, "/viewer.js", NULL, &body) == 200 && strstr(body, "text/javascript") &&
              strstr(body, "window.clsplatView"), "GET /viewer.js");
    free(body);
    CHECK(http_get(port, "/dashboard", NULL, &body) == 200 && strstr(body, "<!-- clsplat report -->") &&
              strstr(body, "http-equiv=\"refresh\""), "GET /dashboard did not give the live page");
    free(body);
    snprintf(p, sizeof p, "%s/metrics.json", dir);
    char *want = cs_read_file(p, NULL);
    CHECK(http_get(port, "/metrics.json", NULL, &body) == 200 && want && strstr(body, want), "GET /metrics.json");
    free(body), free(want);
    /* only known resources: no path is built from the URL */
    const char *refused[] = {"/../config.json", "/%2e%2e/config.json", "/previews/ours_20/view_0.png", "//etc/passwd",
                             "/config.json/..", "/report.html", "/photo/", "/photo/-1", "/photo/+1", "/photo/1x",
                             "/photo/../config.json", "/photo/0/..", "/photo/1234567", "/viewer.html", "/model.bin/x"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        CHECK(http_get(port, refused[i], NULL, NULL) == 404, "GET %s was not refused with 404", refused[i]);
    const char post[] = "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello";
    CHECK(http_raw(port, post, sizeof post - 1, NULL) == 405, "POST was not refused with 405");
    /* an oversized header; garbage; a client that hangs: each refused or dropped, the next answered */
    char big[40000];
    memset(big, 'a', sizeof big);
    memcpy(big, "X-Big: ", 7), memcpy(big + sizeof big - 3, "\r\n", 3);
    int st = http_get(port, "/", big, NULL);
    CHECK(st == 431 || st == 413 || st == 400 || st == -1, "a 40 KB header got %d", st);
    const char junk[] = "\x01\x02\xff garbage \x00\r\n\r\n";
    st = http_raw(port, junk, sizeof junk - 1, NULL);
    CHECK(st == 400 || st == -1, "garbage got %d", st);
    int hang = half_open(port);
    CHECK(hang >= 0 && http_get(port, "/config.json", NULL, NULL) == 200, "a half-sent request held up the next one");
    close(hang);
    return 0;
}

/* GET /model.bin: its header's count and iteration (-1 -1 when not served) */
static int model_header(int port, int *count, int *iteration, int *status)
{
    char *body = NULL;
    *status = http_get(port, "/model.bin", NULL, &body);
    *count = *iteration = -1;
    const char *b = body ? strstr(body, "\r\n\r\n") : NULL; /* the answer's headers are text */
    if (*status == 200 && b && !memcmp(b + 4, "CSVM", 4)) memcpy(count, b + 12, 4), memcpy(iteration, b + 20, 4);
    free(body);
    return 0;
}

/* the model the page draws: none yet, then the newest saved PLY, then a published snapshot */
static int model_checks(const char *dir, cs_view_server *s, uint64_t *rs)
{
    int port = cs_view_port(s), count, it, st;
    char *body = NULL, p[800];
    CHECK(!cs_view_watched(s), "watched before a page asked for the model");
    CHECK(http_get(port, "/model.json", NULL, &body) == 200 && strstr(body, "\"count\":0") &&
              strstr(body, "\"iteration\":-1"), "model.json before any model: %s", body ? body : "(none)");
    free(body);
    model_header(port, &count, &it, &st);
    CHECK(st == 404 && cs_view_watched(s), "model.bin before any model: %d (watched: %d)", st, cs_view_watched(s));
    cs_splats m;
    CHECK_OK(cs_splats_alloc(&m, 7, 1, 0));
    for (int i = 0; i < 7 * 3; i++) m.means[i] = (float)test_rand(rs), m.log_scales[i] = -3.f;
    for (int i = 0; i < 7; i++) m.quats[i * 4] = 1.f;
    for (int it10 = 10; it10 <= 20; it10 += 10) { /* iteration 20 is the newest */
        snprintf(p, sizeof p, "%s/point_cloud/iteration_%d", dir, it10);
        CHECK_OK(cs_mkdirs(p));
        snprintf(p, sizeof p, "%s/point_cloud/iteration_%d/point_cloud.ply", dir, it10);
        m.n = it10 == 20 ? 7 : 5;
        CHECK_OK(cs_ply_write(p, &m, 0));
    }
    model_header(port, &count, &it, &st);
    CHECK(st == 200 && count == 7 && it == 20, "model.bin of the saved PLYs: status %d, %d Gaussians of iteration %d",
          st, count, it);
    cs_splats three;
    CHECK_OK(cs_splats_alloc(&three, 3, 0, 0));
    cs_view_publish(s, &three, 99);
    CHECK(three.n == 0 && !three.means, "the published model was not handed over");
    snprintf(p, sizeof p, "%s/point_cloud/iteration_30", dir);
    CHECK_OK(cs_mkdirs(p));
    snprintf(p, sizeof p, "%s/point_cloud/iteration_30/point_cloud.ply", dir);
    CHECK_OK(cs_ply_write(p, &m, 0)); /* saved after the snapshot: the live model stays */
    cs_splats_free(&m);
    model_header(port, &count, &it, &st);
    CHECK(st == 200 && count == 3 && it == 99, "model.bin after a snapshot: status %d, %d Gaussians of iteration %d",
          st, count, it);
    CHECK(http_get(port, "/model.json", NULL, &body) == 200 && strstr(body, "\"count\":3") &&
              strstr(body, "\"iteration\":99"), "model.json after a snapshot: %s", body ? body : "(none)");
    free(body);
    /* this run's config names no dataset there is: the photo is refused, saying why */
    CHECK(http_get(port, "/photo/0", NULL, &body) == 404 && strstr(body, "the run's dataset"), "photo of a lost dataset");
    free(body);
    return 0;
}

int test_view_server(void)
{
    uint64_t rs = test_seed() ^ 0x71e;
    char dir[600], root[600], p[800];
    snprintf(dir, sizeof dir, "%s/view_run", test_tmpdir());
    CHECK_OK(make_run(dir, 9, &rs));
    cs_view_server *s;
    cs_view_opts o = {dir, NULL, 0};
    CHECK_OK(cs_view_start(&o, &s));
    CHECK(cs_view_port(s) > 0 && !cs_view_token(s)[0], "loopback: port %d, no token", cs_view_port(s));
    int rc = serve_checks(dir, cs_view_port(s)) || model_checks(dir, s, &rs);
    cs_view_stop(s);
    CHECK_OK(rc);
    /* another address: the token is required, by query once, then by cookie */
    cs_view_opts any = {dir, "0.0.0.0", 0};
    CHECK_OK(cs_view_start(&any, &s));
    char tok[64];
    snprintf(tok, sizeof tok, "%s", cs_view_token(s));
    int port = cs_view_port(s);
    char q[200], cookie[200], *body = NULL;
    snprintf(q, sizeof q, "/?token=%s", tok);
    snprintf(cookie, sizeof cookie, "Cookie: clsplat_token=%s\r\n", tok);
    int no = http_get(port, "/", NULL, NULL), wrong = http_get(port, "/?token=0123", NULL, NULL);
    int yes = http_get(port, q, NULL, &body), by_cookie = http_get(port, "/metrics.json", cookie, NULL);
    int set = body && strstr(body, "Set-Cookie: clsplat_token=") != NULL;
    free(body);
    cs_view_stop(s);
    CHECK(strlen(tok) == 32 && no == 403 && wrong == 403 && yes == 200 && set && by_cookie == 200,
          "token: none %d, wrong %d, right %d (cookie set %d), by cookie %d", no, wrong, yes, set, by_cookie);
    /* a batch folder: its page, and the pages of the jobs its summary names only */
    snprintf(root, sizeof root, "%s/view_batch", test_tmpdir());
    snprintf(p, sizeof p, "%s/a", root);
    CHECK_OK(make_run(p, 5, &rs));
    CHECK_OK(write_text(root, "summary.json", "{\"jobs\": [{\"name\": \"a\", \"status\": \"done\"}, {\"name\": \"..\"}], "
                                              "\"totals\": {\"jobs\": 2}}"));
    cs_view_opts b = {root, NULL, 0};
    CHECK_OK(cs_view_start(&b, &s));
    port = cs_view_port(s);
    int page = http_get(port, "/", NULL, &body), job = http_get(port, "/a/report.html", NULL, NULL);
    int up = http_get(port, "/../report.html", NULL, NULL), dots = http_get(port, "/../a/report.html", NULL, NULL);
    int other = http_get(port, "/b/report.html", NULL, NULL);
    int linked = body && strstr(body, "clsplat batch report") && strstr(body, "<a href=\"a/\">a</a>");
    free(body);
    /* a job's live view: its page, script, model and dashboard under /<job>/ */
    char *view = NULL, *model = NULL;
    int v = http_get(port, "/a/", NULL, &view), js = http_get(port, "/a/viewer.js", NULL, NULL);
    int mj = http_get(port, "/a/model.json", NULL, &model), dash = http_get(port, "/a/dashboard", NULL, NULL);
    int bare = http_get(port, "/a", NULL, NULL), unlisted = http_get(port, "/b/", NULL, NULL);
    int upview = http_get(port, "/../a/", NULL, NULL);
    int viewer = view && strstr(view, "<title>clsplat view</title>"), none = model && strstr(model, "\"count\":0");
    free(view), free(model);
    cs_view_stop(s);
    CHECK(page == 200 && linked && job == 200 && up == 404 && dots == 404 && other == 404,
          "batch: page %d (linked %d), job a %d, /../ %d, /../a %d, unlisted b %d", page, linked, job, up, dots, other);
    CHECK(v == 200 && viewer && js == 200 && mj == 200 && none && dash == 200 && bare == 404 && unlisted == 404 &&
              upview == 404,
          "a job's view: /a/ %d (viewer %d), script %d, model.json %d (none %d), dashboard %d, /a %d, /b/ %d, /../a/ %d",
          v, viewer, js, mj, none, dash, bare, unlisted, upview);
    CHECK(cs_view_start(&(cs_view_opts){dir, "localhost", 0}, &s) != 0 && strstr(cs_last_error(), "IPv4"),
          "a host name was taken");
    return 0;
}

/* the number of points of the first chart's line in PAGE (the loss, a point a log line) */
static int loss_points(const char *page)
{
    const char *pl = strstr(page, "<polyline"), *pts = pl ? strstr(pl, "points=\"") : NULL;
    int n = 0;
    for (const char *c = pts ? pts + 8 : ""; *c && *c != '"'; c++) n += *c == ',';
    return n;
}

/* GET /model.json: the iteration it names (-1 when none) */
static int model_iteration(int port)
{
    char *body = NULL;
    int it = -1;
    const char *at = http_get(port, "/model.json", NULL, &body) == 200 ? strstr(body, "\"iteration\":") : NULL;
    if (at) it = atoi(at + 12);
    free(body);
    return it;
}

/* train --view 0 on PoCL: while it trains, the dashboard is served and grows, the model the
   page draws follows the run's snapshots, a photo is served, a client that hangs half-way
   holds up nothing, and the run ends as it would without the server */
int test_view_live(void)
{
    char data[600], out[600], log[700];
    snprintf(data, sizeof data, "%s/demo40", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    snprintf(out, sizeof out, "%s/view_live", test_tmpdir());
    snprintf(log, sizeof log, "%s/view_live.log", test_tmpdir());
    pid_t pid = cli_start(log, "train", "-s", data, "-o", out, "--eval", "--iterations", "600", "--test_iterations", "300",
                          "--set", "device.tune=off", "--set", "optim.random_init_points=2000", "--set", "log.interval=20",
                          "--view", "0", (char *)NULL);
    CHECK(pid > 0, "cannot start clsplat");
    int port = 0, status = -1, pages = 0, most = 0, fewest = 1 << 30, hang = -1, photo = 0, first_it = -1, last_it = -1;
    for (int tries = 0; tries < 3000 && status < 0; tries++) { /* 10 minutes at most */
        int ws;
        if (waitpid(pid, &ws, WNOHANG) == pid) status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        char *text = port ? NULL : cs_read_file(log, NULL), *at = text ? strstr(text, "view: http://127.0.0.1:") : NULL;
        if (at) port = atoi(at + 23), hang = half_open(port);
        free(text);
        char *page = NULL;
        if (port && status < 0 && http_get(port, "/dashboard", NULL, &page) == 200 && strstr(page, "not finished")) {
            int n = loss_points(page), it = model_iteration(port);
            pages++, most = n > most ? n : most, fewest = n < fewest ? n : fewest;
            if (it > 0) first_it = first_it < 0 ? it : first_it, last_it = it;
            if (!photo && it > 0) photo = http_get(port, "/photo/0", NULL, NULL);
        }
        free(page);
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (hang >= 0) close(hang);
    if (status < 0) kill(pid, SIGKILL), cli_wait(pid);
    char p[800], *text = cs_read_file(log, NULL);
    snprintf(p, sizeof p, "%s/report.html", out);
    int snaps = text && strstr(text, "live-view snapshots took");
    free(text);
    CHECK(status == 0 && port > 0 && cs_file_exists(p) && snaps, "train --view: exit %d, port %d, snapshots said %d (log %s)",
          status, port, snaps, log);
    CHECK(pages >= 2 && most > fewest, "the dashboard was served %d times with %d..%d loss points: it did not grow",
          pages, fewest, most);
    CHECK(first_it > 0 && last_it > first_it, "the page's model went from iteration %d to %d during training", first_it,
          last_it);
    CHECK(photo == 200, "GET /photo/0 during training: %d", photo);
    return 0;
}

/* charts of awkward data end and say what they can: huge values (a step lost in their
   rounding), one point, only non-finite points */
int test_svg_plot_edges(void)
{
    double x1[] = {1e17, 1e17 + 16, 1e17 + 32}, y1[] = {1e300, -1e300, 0}, x2[] = {5}, y2[] = {NAN};
    double x3[] = {NAN, 1, INFINITY}, y3[] = {1, NAN, 2};
    cs_plot_series s[] = {{"huge & <odd>", x1, y1, 3}, {"one", x2, y2, 1}, {"none", x3, y3, 3}};
    cs_plot p = {"t", "x", "y", 300, 200};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f, "open_memstream");
    CHECK_OK(cs_svg_plot(f, &p, s, 1));
    CHECK_OK(cs_svg_plot(f, &p, s + 1, 2));
    double xs[] = {3}, ys[] = {7};
    cs_plot_series one = {"single", xs, ys, 1};
    CHECK_OK(cs_svg_plot(f, &p, &one, 1));
    fclose(f);
    CHECK(count(buf, "<svg") == 3 && count(buf, "no data") == 1 && strstr(buf, "huge &amp; &lt;odd&gt;") &&
              !strstr(buf, "nan") && !strstr(buf, "inf"), "charts of awkward data:\n%s", buf);
    free(buf);
    return 0;
}
