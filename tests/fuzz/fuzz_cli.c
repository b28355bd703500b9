/* fuzz_cli: command lines (NUL-separated words of the input) through the parser and the
 * settings they make. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    char *text = malloc(n + 1);
    if (!text) return 0;
    memcpy(text, data, n);
    text[n] = '\0';
    char *argv[64];
    int argc = 0;
    argv[argc++] = "clsplat";
    for (size_t i = 0; i <= n && argc < 63;) {
        argv[argc++] = text + i;
        i += strlen(text + i) + 1;
    }
    argv[argc] = NULL;
    cs_args a;
    if (cs_cli_parse(argc, argv, &a) == 0) {
        cs_config c;
        cs_config_defaults(&c);
        cs_cli_apply(&a, &c);
    }
    cs_cli_free(&a);
    free(text);
    return 0;
}
