/* fuzz_tuning: a stored tuning file (tune-<hash>.json) on arbitrary bytes. */
#include "fuzz.h"
#include "tuning.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    cs_tuning t;
    cs_tuning_load(fuzz_write("tune.json", data, n), &t);
    return 0;
}
