/* compile.h -- compiling generated CUDA C to a cubin with NVRTC. */
#ifndef QJIT_COMPILE_H
#define QJIT_COMPILE_H

#include <stddef.h>
#include "qjit.h"

/* "13.0": the NVRTC library's version (part of every cache key). */
void qjit__nvrtc_version(char out[16]);
/* Whether NVRTC can produce a cubin for arch ("sm_90a"); if not, the error
 * lists what it can target. */
qjit_status qjit__nvrtc_check_arch(qjit_context *ctx, const char *arch);
/* The option list for arch as one string (part of the cache key) and as argv. */
size_t qjit__nvrtc_options(const char *arch, int line_info, const char *argv[8], char *joined, size_t size);
/* Compiles source; on success *cubin (qjit__alloc) and *bytes, and each of
 * ptxas's performance advisories in the log (qjit__nvrtc_advisories) logged
 * for `variant`. On failure QJIT_COMPILE with the NVRTC log in the error
 * message. */
qjit_status qjit__nvrtc_compile(qjit_context *ctx, const char *source, const char *name, const char *arch,
                                int line_info, const char *variant, void **cubin, size_t *bytes);
/* The lines of an NVRTC log in which ptxas says it made the code slower
 * ("Potential Performance Loss": e.g. every wgmma of a kernel serialized;
 * "warpgroup.arrive is injected": waits added around a wgmma),
 * each logged as "ptxas advisory for VARIANT: LINE"; returns their count.
 * Registers spilled to local memory are logged too, "ptxas spills for
 * VARIANT: ...", and not counted (where they are, the SASS says). */
size_t qjit__nvrtc_advisories(qjit_context *ctx, const char *log, const char *variant);

#endif
