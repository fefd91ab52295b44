/* harness.c -- main() for every suite; see harness.h. */
#define _GNU_SOURCE
#include "harness.h"
#include "context.h"
#include "hash.h"
#include "record.h"

#include <dlfcn.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t g_seed;
static int g_gpu = -1;

uint64_t qt_seed(void) { return g_seed; }

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

qt_rng qt_rng_make(uint64_t stream)
{
    qt_rng r = {g_seed ^ (stream * 0xD1B54A32D192ED03ull)};
    splitmix(&r.s);
    return r;
}

uint64_t qt_next(qt_rng *r) { return splitmix(&r->s); }
double qt_uniform(qt_rng *r) { return (double)(qt_next(r) >> 11) * (1.0 / 9007199254740992.0); }

double qt_normal(qt_rng *r)
{
    double u1 = qt_uniform(r), u2 = qt_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Probes in a child: dlopen libcuda, cuInit, cuDeviceGetCount > 0. */
static int probe_gpu(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW);
        if (!h)
            _exit(1);
        int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
        int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
        int n = 0;
        if (!init || !count || init(0) != 0 || count(&n) != 0 || n < 1)
            _exit(1);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int qt_has_gpu(void)
{
    if (g_gpu < 0)
        g_gpu = probe_gpu();
    return g_gpu;
}

void qt_add(Suite *s, TCase *tc, int gpu)
{
    if (gpu)
        tcase_set_tags(tc, "gpu");
    suite_add_tcase(s, tc);
}

char *qt_tempdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/qjit-test-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

void qt_rmtree(const char *path)
{
    if (path)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void *qt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    ck_assert_msg(p != NULL, "malloc(%zu) failed", n);
    return p;
}

struct qjit_context *qt_bare_context(void)
{
    static struct qjit_context ctx;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.error_lock, NULL);
    return &ctx;
}

long qt_fault_stride(long fallback)
{
    const char *env = getenv("QJIT_FAULT_EVERY");
    char *end = NULL;
    long v = env && *env ? strtol(env, &end, 10) : 0;
    return env && *env && end && !*end && v > 0 ? v : fallback;
}

struct qjit_context *qt_plain_context(const char *cache)
{
    return qt_counting_context(cache, "sm_90a", NULL);
}

struct qjit_context *qt_counting_context(const char *cache, const char *arch, qt_alloc_counts *counts)
{
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = arch;
    o.cache_dir = cache;
    o.template_path = "";
    if (counts) {
        o.host_realloc = qt_counting_realloc;
        o.host_ud = counts;
    }
    qjit_context *ctx = NULL;
    return qjit_context_create(&o, &ctx) == QJIT_OK ? ctx : NULL;
}

uint64_t qt_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint32_t qt_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void qt_put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t qt_bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

float qt_float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void *qt_counting_realloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    qt_alloc_counts *c = ud;
    size_t *old = ptr ? (size_t *)ptr - 2 : NULL;   /* two words keep the block aligned as malloc's */
    if (old && old[0] != old_size)
        c->size_mismatches++;
    if (new_size == 0) {
        if (old) {
            c->live--;
            free(old);
        }
        return NULL;
    }
    c->calls++;
    if (c->fail_after == 0)
        return NULL;
    if (c->fail_after > 0)
        c->fail_after--;
    size_t *b = malloc(new_size + 2 * sizeof(size_t));
    if (!b)
        return NULL;
    b[0] = new_size;
    if (old) {
        memcpy(b + 2, old + 2, old_size < new_size ? old_size : new_size);
        free(old);
    } else {
        c->live++;
    }
    return b + 2;
}

void qt_use_counting_alloc(struct qjit_context *ctx, qt_alloc_counts *c)
{
    ctx->host_realloc = qt_counting_realloc;
    ctx->host_ud = c;
}

/* The options of a parser test, quoted, for the failure messages. */
static const char *joined(int argc, char **argv)
{
    static char s[2048];
    s[0] = '\0';
    for (int i = 1; i < argc; i++)
        snprintf(s + strlen(s), sizeof s - strlen(s), "%s'%s'", i > 1 ? " " : "", argv[i]);
    return s;
}

void qt_parse_ok(const qt_parser *p, void *out, int argc, char **argv)
{
    char err[1024] = "";
    memset(out, 0x5A, p->size);
    int rc = p->parse(argc, argv, out, err, sizeof err);
    ck_assert_msg(rc == 0, "%s refused: %s", joined(argc, argv), err);
}

void qt_parse_bad(const qt_parser *p, const char *n1, const char *n2, int argc, char **argv)
{
    char err[1024] = "";
    unsigned char *out = qt_xmalloc(p->size), *before = qt_xmalloc(p->size);
    memset(out, 0x5A, p->size);
    memcpy(before, out, p->size);
    int rc = p->parse(argc, argv, out, err, sizeof err);
    ck_assert_msg(rc == -1, "%s accepted (rc %d)", joined(argc, argv), rc);
    ck_assert_msg(err[0] != '\0', "%s: no message", joined(argc, argv));
    ck_assert_msg(!n1 || strstr(err, n1), "%s: message \"%s\" does not mention \"%s\"", joined(argc, argv), err, n1);
    ck_assert_msg(!n2 || strstr(err, n2), "%s: message \"%s\" does not mention \"%s\"", joined(argc, argv), err, n2);
    ck_assert_msg(!memcmp(out, before, p->size), "%s: output changed on failure", joined(argc, argv));
    free(out);
    free(before);
}

int main(void)
{
    /* Line by line, so that what a test printed survives a timeout that
     * kills its process. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *env = getenv("QJIT_TEST_SEED");
    g_seed = env && *env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    printf("seed: %llu (rerun with QJIT_TEST_SEED=%llu)\n", (unsigned long long)g_seed,
           (unsigned long long)g_seed);
    Suite *suite = qjit_test_suite();
    const char *name = getenv("QJIT_TEST_SUITE_NAME");
    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_FORK);
    const char *exclude = NULL;
    if (!qt_has_gpu()) {
        exclude = "gpu";
        printf("skipped: no GPU (tests tagged \"gpu\" are not run%s%s)\n", name ? " in " : "", name ? name : "");
    }
    srunner_run_tagged(sr, NULL, NULL, NULL, exclude, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    int ran = srunner_ntests_run(sr);
    srunner_free(sr);
    fflush(stdout);
    /* A suite of GPU tests only, on a machine without one: report it as
     * skipped (ctest: SKIP_RETURN_CODE 77), not as passed. */
    if (exclude && ran == 0)
        return 77;
    return failed == 0 ? 0 : 1;
}

void qt_add_tests(Suite *s, const qt_test *tests, size_t count, int timeout)
{
    for (size_t i = 0; i < count; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, timeout);
        tcase_add_loop_test(tc, tests[i].test, 0, tests[i].loops);
        qt_add(s, tc, 0);
    }
}

void qt_reseal(uint8_t *b, size_t bytes)
{
    uint32_t n = qt_le32(b + 40), hbytes = qt_le32(b + 44);
    size_t tail = 64 + 32 * (size_t)n;
    qt_put_le(b + tail, qjit__hash64(b + hbytes, bytes - hbytes, 0), 8);
    qt_put_le(b + tail + 8, qjit__hash64(b, tail + 8, 0), 8);
}

size_t qt_section_at(const uint8_t *b, const char *name, size_t *len)
{
    uint32_t n = qt_le32(b + 40), hbytes = qt_le32(b + 44);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + 64 + 32 * (size_t)i;
        if (!strncmp((const char *)e, name, 16)) {
            if (len)
                *len = (size_t)qt_le64(e + 24);
            return hbytes + (size_t)qt_le64(e + 16);
        }
    }
    ck_abort_msg("no section %s", name);
    return 0;
}

qjit_status qt_record_device(struct qjit_context *ctx, struct qjit__record_device *d)
{
    memset(d, 0, sizeof *d);
    snprintf(d->gpu, sizeof d->gpu, "NVIDIA H100 80GB HBM3");
    d->sms = 132;
    d->cc_major = 9;
    d->driver = 13000;
    snprintf(d->qjit, sizeof d->qjit, "%s", QJIT_VERSION_STRING);
    return qjit__templates_hash(ctx, d->templates);
}
