/* cli.h -- pieces shared by the qjit command's files. */
#ifndef QJIT_CLI_H
#define QJIT_CLI_H

#include <stdint.h>
#include "qjit.h"

/* Seeded random numbers for generated inputs (random.c). */
uint64_t cli_random(uint64_t *state);
float cli_normal(uint64_t *state);
/* out[0..n) = scale x normals, on every CPU: chunks of 65536 values, each
 * from its own stream of `seed`, so the values do not depend on the CPUs. */
void cli_fill_normal(float *out, size_t n, uint64_t seed, float scale);

/* Creates a context from the common options (--arch, --cache-dir); prints
 * the error and returns NULL on failure. */
qjit_context *cli_context(const char *arch, const char *cache_dir);
/* Prints "qjit: WHAT failed: <status name>" and the context's last error to
 * stderr; returns 1. */
int cli_fail(qjit_context *ctx, qjit_status st, const char *what);
/* The same with the reason `why` (a failure outside the context's calls). */
int cli_fail_because(qjit_status st, const char *what, const char *why);
struct cli_cuda;
/* Brings up the GPU of a context made by cli_context: cu opened on its
 * device (libcuda.h: primary context current on this thread; cu zeroed
 * first, cli_cuda_close afterwards whatever this returns), and the
 * context's compile target, even when QJIT_ARCH names one. On failure the
 * reason is in cu->error. */
qjit_status cli_gpu(qjit_context *ctx, struct cli_cuda *cu, char arch[16]);
/* The non-empty lines of list (split in place) appended to *keys (grown
 * with realloc; *n counts them); 1 after saying so if memory runs out. */
int cli_append_lines(char *list, const char ***keys, int *n);
/* Compile n variants into the cache on `threads` threads (0: every CPU;
 * qjit_compile_many), then one printed row each (after the header), in
 * order. Each failure is printed and counted in *failed; *total adds the
 * variants' own seconds, *wall the call's. Return 0, or 1 if any failed. */
void cli_compile_header(void);
int cli_compile_keys(qjit_context *ctx, const char *const *keys, int n, const char *arch, int threads, int *failed,
                     double *total, double *wall);
/* The group a scheme runs with on every one of the shapes: `group` if it
 * takes it on all of them, else 128, else per channel (else `group`). */
int cli_scheme_group(qjit_scheme s, int group, const long long (*shapes)[2], int nshapes);
int cmd_demo(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_quant_error(int argc, char **argv);
int cmd_tune(int argc, char **argv);

#endif
