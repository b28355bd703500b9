/* fuzz: helpers shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c). Each harness feeds
 * one reader the bytes libFuzzer makes, through the files that reader takes, in a scratch
 * folder of its own process. Build and run them with `make fuzz FUZZ_SECONDS=N`. */
#ifndef CS_FUZZ_H
#define CS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The process's scratch folder (made on first use): under $CLSPLAT_FUZZ_SCRATCH when set, else
 * /tmp. */
const char *fuzz_dir(void);
/* Writes N bytes to DIR/NAME (folders made as needed); returns the path (static buffer). */
const char *fuzz_write(const char *name, const uint8_t *data, size_t n);
/* Splits DATA into files: records [u8 index][u16 length][bytes] (a short last record takes
 * what is left); record I goes to NAMES[index % count]. Returns how many were written. */
int fuzz_write_records(const uint8_t *data, size_t n, const char *const *names, int count);
/* Removes DIR/NAME. */
void fuzz_remove(const char *name);
/* The dataset harnesses' one step: removes the COUNT files NAMES, writes the input's records
 * to them (fuzz_write_records), and loads the scratch folder as a dataset (data.eval from the
 * input's length), freeing what loads. */
void fuzz_load_scene(const uint8_t *data, size_t n, const char *const *names, int count);

#endif
