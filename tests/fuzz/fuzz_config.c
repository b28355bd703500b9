/* fuzz_config: a JSON config (the input up to the first newline) and --set assignments (the
 * lines after it), then the resolved dump and the steps scaling. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    char *text = malloc(n + 1);
    if (!text) return 0;
    memcpy(text, data, n);
    text[n] = '\0';
    cs_config c;
    cs_config_defaults(&c);
    char *nl = strchr(text, '\n');
    if (nl) *nl = '\0';
    cs_config_load_string(&c, text, "fuzz.json");
    for (char *line = nl ? nl + 1 : NULL; line && *line;) {
        char *next = strchr(line, '\n');
        if (next) *next = '\0';
        cs_config_set(&c, line);
        line = next ? next + 1 : NULL;
    }
    char *dump = cs_config_dump(&c);
    free(dump);
    cs_config_scale_steps(&c);
    free(text);
    return 0;
}
