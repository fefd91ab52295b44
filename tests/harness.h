/* harness.h -- shared by every Check suite: each test file defines
 * qjit_test_suite() and links with harness.c, which provides main(), a seeded
 * random generator (seed printed, settable with QJIT_TEST_SEED) and the GPU
 * probe. Tests tagged "gpu" are skipped, visibly, where no GPU is usable; the
 * probe runs in a child process so Check's parent never initializes CUDA.
 * What several suites need alike lives here too, written once: byte-order
 * readers, the scheme and group cases, a counting and failing allocator, and
 * the checks of an option parser. */
#ifndef QJIT_TEST_HARNESS_H
#define QJIT_TEST_HARNESS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include "qjit.h"    /* qjit_scheme, for qt_config */

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
/* A real context for sm_90a on cache (built-in templates only), or NULL if
 * it cannot be created: for forked children, where a failed check must not
 * reach the test runner. */
struct qjit_context *qt_plain_context(const char *cache);

/* The device facts of a tuning record made on an H100 SXM (132 SMs, CUDA
 * 13.0 driver) with this qjit and ctx's templates (record.h): QJIT_OK, or
 * why the templates could not be hashed. */
struct qjit__record_device;
qjit_status qt_record_device(struct qjit_context *ctx, struct qjit__record_device *out);

/* Little-endian fields of packed buffers and headers, and a float's bits. */
uint64_t qt_le64(const uint8_t *p);
uint32_t qt_le32(const uint8_t *p);
void qt_put_le(uint8_t *p, uint64_t v, int n);     /* the low n bytes of v */
uint32_t qt_bits_of(float f);
float qt_float_of(uint32_t u);
/* Rewrites both hashes of a packed buffer of `bytes` (format version 2), so
 * a deliberate change is the only thing wrong with it. */
void qt_reseal(uint8_t *b, size_t bytes);
/* Offset in a packed buffer of section `name` (from its table) and its
 * size in *len (may be NULL); fails the test if there is none. */
size_t qt_section_at(const uint8_t *b, const char *name, size_t *len);

/* A scheme and a group: the cases the quantizer's and the reference's
 * suites run over, kept here so that both cover the same ones. Defined in
 * the header, so that the counts are constants the suites can size arrays
 * and loop tests with. */
typedef struct qt_config {
    qjit_scheme scheme;
    int group;
} qt_config;
/* Every scheme with every group the brief asks for. */
static const qt_config qt_configs[] = {
    {QJIT_SCHEME_W4A8_LQQ, 0},   {QJIT_SCHEME_W4A8_LQQ, 64}, {QJIT_SCHEME_W4A8_LQQ, 128},
    {QJIT_SCHEME_W4A8_LQQ, 256}, {QJIT_SCHEME_W4A8_QOQ, 0},  {QJIT_SCHEME_W4A8_QOQ, 64},
    {QJIT_SCHEME_W4A8_QOQ, 128}, {QJIT_SCHEME_W4A8_IS, 64},  {QJIT_SCHEME_W4A8_IS, 128},
    {QJIT_SCHEME_W4A8_IS, 256},  {QJIT_SCHEME_W8A8, 0},      {QJIT_SCHEME_W4A4, 0},
};
#define QT_NCONFIGS ((int)(sizeof qt_configs / sizeof qt_configs[0]))
/* One config per scheme (both forms of w4a8-qoq), for tests where the
 * group changes nothing. */
static const qt_config qt_one_per_scheme[] = {{QJIT_SCHEME_W4A8_LQQ, 64}, {QJIT_SCHEME_W4A8_QOQ, 0},
                                              {QJIT_SCHEME_W4A8_QOQ, 64}, {QJIT_SCHEME_W4A8_IS, 64},
                                              {QJIT_SCHEME_W8A8, 0},      {QJIT_SCHEME_W4A4, 0}};
#define QT_NONE_PER_SCHEME ((int)(sizeof qt_one_per_scheme / sizeof qt_one_per_scheme[0]))

/* A host allocator (qjit_realloc_fn; ud: a qt_alloc_counts) for the
 * out-of-memory tests: it fails once fail_after allocations have been
 * granted, counts the blocks still live (a leak shows as live != 0 after
 * the call under test) and checks that every free and resize is given the
 * size that was allocated, as the allocator contract requires. Blocks come
 * from malloc with their size stored in front. */
typedef struct qt_alloc_counts {
    long fail_after;             /* allocations still granted; counts down; < 0: never fails */
    long live;                   /* blocks allocated and not yet freed */
    long calls;                  /* allocation and resize requests, refused ones included */
    long size_mismatches;        /* frees or resizes given another size than the block's */
} qt_alloc_counts;
void *qt_counting_realloc(void *ud, void *ptr, size_t old_size, size_t new_size);
/* A context on cache (built-in templates only; arch NULL: the GPU's) that
 * allocates through qt_counting_realloc with the counters counts (NULL:
 * through malloc), or NULL if it cannot be created. */
struct qjit_context *qt_counting_context(const char *cache, const char *arch, qt_alloc_counts *counts);
/* The stride of an out-of-memory test that refuses a sample of a call's
 * allocations in turn: QJIT_FAULT_EVERY (a positive whole number; 1 refuses
 * every allocation -- the long setting, by hand) or else `fallback`. */
long qt_fault_stride(long fallback);
/* Makes ctx allocate through qt_counting_realloc with the counters c. */
void qt_use_counting_alloc(struct qjit_context *ctx, qt_alloc_counts *c);

/* An option parser under test, seen through void * so that the harness
 * needs none of the CLI's headers: parse is a thin wrapper around the
 * command's parser, size the size of its output struct. */
typedef struct qt_parser {
    int (*parse)(int argc, char **argv, void *out, char *err, size_t errlen);
    size_t size;
} qt_parser;
/* Expects argv (argv[0]: the command) to be accepted into out; out is
 * filled with 0x5A bytes first, so a field the parser forgets shows. */
void qt_parse_ok(const qt_parser *p, void *out, int argc, char **argv);
/* Expects argv to be refused with a message containing n1 and n2 (NULL: no
 * check), leaving the output as it was. */
void qt_parse_bad(const qt_parser *p, const char *n1, const char *n2, int argc, char **argv);
/* argv literals for those: QT_ARGV("bench", "--m", "4") is {"bench", "--m",
 * "4"}, QT_ARGC its length. */
#define QT_ARGV(cmd, ...) ((char *[]){cmd, __VA_ARGS__})
#define QT_ARGC(cmd, ...) ((int)(sizeof QT_ARGV(cmd, __VA_ARGS__) / sizeof(char *)))

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
/* A CPU test case of a suite's table: its loop test runs `loops` times. */
typedef struct qt_test {
    const char *name;
    const TTest *test;
    int loops;
} qt_test;
/* One CPU test case per entry of tests, each with the timeout in seconds. */
void qt_add_tests(Suite *s, const qt_test *tests, size_t count, int timeout);

/* Template folder of the source tree (compile-time define). */
#ifndef QJIT_SOURCE_TEMPLATES
#define QJIT_SOURCE_TEMPLATES "templates"
#endif

#endif
