/* fuzz_checkpoint: the checks a checkpoint passes before anything is allocated for it, for
 * each model layout the first byte picks. */
#include "fuzz.h"
#include "outputs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 1) return 0;
    cs_model_layout l = {data[0] & 3, (data[0] >> 2) & 1, (data[0] >> 3) & 1, (data[0] >> 4) & 1};
    cs_ckpt_header h;
    cs_checkpoint_check(data + 1, n - 1, "fuzz.bin", &l, &h);
    return 0;
}
