/* harness.h -- shared by every Check suite: each test file defines
 * qjit_test_suite() and links with harness.c, which provides main(), a seeded
 * random generator (seed printed, settable with QJIT_TEST_SEED) and the GPU
 * probe. Tests tagged "gpu" are skipped, visibly, where no GPU is usable; the
 * probe runs in a child process so Check's parent never initializes CUDA. */
#ifndef QJIT_TEST_HARNESS_H
#define QJIT_TEST_HARNESS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

Suite *qjit_test_suite(void);

/* The seed of this run (from QJIT_TEST_SEED, else time-based), printed at start. */
uint64_t qt_seed(void);
/* Deterministic generator: state initialized from qt_seed() ^ stream. */
typedef struct qt_rng { uint64_t s; } qt_rng;
qt_rng qt_rng_make(uint64_t stream);
uint64_t qt_next(qt_rng *r);
double qt_uniform(qt_rng *r);            /* [0, 1) */
double qt_normal(qt_rng *r);             /* N(0, 1) */
int qt_has_gpu(void);                    /* cached probe result (child process) */

/* A temporary folder (mkdtemp under $TMPDIR), removed with its content by
 * qt_rmtree. */
char *qt_tempdir(const char *tag);
void qt_rmtree(const char *path);

/* malloc that fails the test instead of returning NULL (0 bytes: 1). */
void *qt_xmalloc(size_t n);
/* A zeroed internal context with only its error lock: enough for the host
 * quantizer and the CPU reference, which report errors into it. One per
 * process (each test runs in its own forked child); not to be destroyed. */
struct qjit_context *qt_bare_context(void);

/* ck_assert records a point (a pipe write) even when it passes, so loops
 * over millions of elements check with REQUIRE, which costs nothing until it
 * fails. */
#define REQUIRE(cond, ...)             \
    do {                               \
        if (!(cond))                   \
            ck_abort_msg(__VA_ARGS__); \
    } while (0)

/* Adds tcase to suite, tagged "gpu" if gpu != 0. */
void qt_add(Suite *s, TCase *tc, int gpu);

/* Template folder of the source tree (compile-time define). */
#ifndef QJIT_SOURCE_TEMPLATES
#define QJIT_SOURCE_TEMPLATES "templates"
#endif

#endif
