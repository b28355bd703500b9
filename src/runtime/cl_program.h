/* cl_program: building one OpenCL program (a kernel module: its files, kernels.h's
 * CS_PROGRAM_LIST) from the sources embedded in the binary (or read from --kernel-dir),
 * through an on-disk binary cache.
 *
 * Sources: cl/layout.h, cl/common.h, then the module's files, passed to the compiler as one
 * program (build-log line numbers are mapped back to the files in the error message).
 * Options: "-cl-std=CL1.2" (CL3.0 for cl_ext_float_atomics), -DATOMIC_PATH, -DFAST_MATH, then
 * the caller's defines.
 * Cache key (two chained 64-bit FNV-1a hashes): every source text, the full option string,
 * device name, driver version, platform version, device version, and CS_CL_CACHE_FORMAT.
 * Cache file: <cache_dir>/<key0><key1>.bin (32 hex digits) holding a header {"CSKC", format
 * version (u32), key (2 x u64), binary size (u64), FNV-1a checksum of the binary (u64)} and the
 * device binary. It is written to a temporary name and renamed; any mismatch or failure to
 * load falls back to a source build, and a cache that cannot be written costs only time.
 * cache_dir: $XDG_CACHE_HOME/clsplat/kernels, else ~/.cache/clsplat/kernels. */
#ifndef CS_CL_PROGRAM_H
#define CS_CL_PROGRAM_H

#include <stdint.h>

#include "cl_runtime.h"

#define CS_CL_CACHE_FORMAT 4u

/* Builds the program of FILES (space-separated names under cl/, after layout.h and common.h)
 * with OPTIONS (defines; the standard and the atomics path are added here). Uses the binary
 * cache unless disabled; cl->last_build_cached is cleared when it compiles. -1 with a message
 * (the build log, with lines mapped to files). */
int cs_cl_build(cs_cl *cl, const char *files, const char *options, cl_program *out);
/* Creates a kernel, -1 with a message naming it. */
int cs_cl_kernel(cs_cl *cl, cl_program prog, const char *name, cl_kernel *out);
/* A hash of the sources of the program of FILES as the device builds it (embedded or
   --kernel-dir). */
int cs_cl_sources_hash(cs_cl *cl, const char *files, uint64_t *out);

#endif
