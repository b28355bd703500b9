/* cli_run: running the clsplat binary from the tests, as a user would: the binary is
 * CLSPLAT_BIN (default ./build/clsplat), the demo scenes come from CLSPLAT_GEN_DEMO (default
 * ./build/gen_demo), and the runs of one test process share a kernel cache. */
#ifndef CS_TEST_CLI_RUN_H
#define CS_TEST_CLI_RUN_H

#include <sys/types.h>

/* The clsplat binary the tests run. */
const char *cli_bin(void);
/* Runs `clsplat ARGS` (printf format) from the repository root with the environment
 * assignments ENV ("" for none), output to LOG; returns the exit status, or 128 + the signal
 * that ended it. */
int cli_run(const char *env, const char *log, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Starts `clsplat ARG...` (NULL-terminated) in the background from the repository root with
 * output to LOG; the pid (-1 when fork fails). */
pid_t cli_start(const char *log, ...);
/* Waits for PID: its exit status, or 128 + the signal that ended it (-1 when not a child). */
int cli_wait(pid_t pid);
/* The generated demo scene W x H at DIR (made when missing); -1 with a message. */
int cli_demo_scene(const char *dir, int w, int h);

#endif
