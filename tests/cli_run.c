/* cli_run: running the clsplat binary from the tests. */
#include "cli_run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

const char *cli_bin(void)
{
    const char *b = getenv("CLSPLAT_BIN");
    return b ? b : "./build/clsplat";
}

int cli_run(const char *env, const char *log, const char *fmt, ...)
{
    char args[3000], cmd[4500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "XDG_CACHE_HOME=%s/cli_cache %s exec %s %s > %s 2>&1", test_tmpdir(), env, cli_bin(), args,
             log);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

pid_t cli_start(const char *log, ...)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)cli_bin();
    va_list ap;
    va_start(ap, log);
    for (char *a; n < 31 && (a = va_arg(ap, char *));) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        char cache[700];
        snprintf(cache, sizeof cache, "%s/cli_cache", test_tmpdir());
        setenv("XDG_CACHE_HOME", cache, 1);
        if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(127);
        execv(cli_bin(), argv);
        _exit(127);
    }
    return pid;
}

int cli_wait(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int cli_demo_scene(const char *dir, int w, int h)
{
    if (cs_dir_exists(dir)) return 0;
    const char *gen = getenv("CLSPLAT_GEN_DEMO");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s %s %d %d >/dev/null", gen ? gen : "./build/gen_demo", dir, w, h);
    return system(cmd) == 0 ? 0 : cs_fail("gen_demo failed for %s", dir);
}
