/* test_stress.c -- the cache under abuse, in bounded loops on a CPU:
 * writers killed with SIGKILL at random moments, and writers and evictors
 * racing under a size bound. Afterwards the folder must be sound: once the
 * next write has reaped what the dead left, `verify` finds nothing wrong,
 * no temporary file is left, and every entry there loads with exactly the
 * content its key was stored with.
 *
 * Also whole compiles (NVRTC, store, manifest, lock) killed at random.
 * QJIT_STRESS_ROUNDS sets the rounds (default 12, a short setting for CI;
 * a few hundred by hand). */
#define _GNU_SOURCE
#include "harness.h"
#include "cache.h"
#include "context.h"
#include "qjit.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEYS 16
#define PROCS 6

static long rounds(void)
{
    const char *env = getenv("QJIT_STRESS_ROUNDS");
    return env && atol(env) > 0 ? atol(env) : 12;
}

/* Key i's text and payload: the payload is a function of the key, up to
 * 192 KB, so a write takes long enough to be caught halfway. */
static void key_of(int i, char key[128]) { snprintf(key, 128, "arch sm_90a\nvariant stress-%d\n", i); }

static size_t payload_of(int i, uint8_t *p)
{
    size_t n = 1000 + (size_t)i * 12000;
    for (size_t j = 0; j < n; j++)
        p[j] = (uint8_t)(i * 31 + j * 7);
    return n;
}

/* A child: stores random keys (and, with bound > 0, evicts) until killed
 * or `iterations` are done. */
static void writer(const char *dir, unsigned seed, long iterations, uint64_t bound)
{
    static uint8_t payload[KEYS * 12000 + 1000];
    qjit_context *c = qt_bare_context();
    qt_rng r = qt_rng_make(seed);
    for (long it = 0; iterations < 0 || it < iterations; it++) {
        int i = (int)(qt_next(&r) % KEYS);
        char key[128], name[80];
        key_of(i, key);
        qjit__cache_entry_name(key, name);
        size_t n = payload_of(i, payload);
        if (qjit__cache_store(c, dir, name, key, "m=1\n", payload, n) != QJIT_OK)
            _exit(3);
        if (bound && qjit__cache_evict(c, dir, bound, NULL) != QJIT_OK)
            _exit(4);
    }
    _exit(0);
}

static int temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* The folder is sound: nothing for verify to report, no temporary file,
 * every entry present loads with its key's content. Returns the entries. */
static int assert_sound(const char *dir, uint64_t *bytes)
{
    static uint8_t want[KEYS * 12000 + 1000];
    size_t bad = 99;
    ck_assert_int_eq(qjit__cache_list(qt_bare_context(), dir, NULL, NULL, &bad), QJIT_OK);
    ck_assert_uint_eq(bad, 0);
    ck_assert_int_eq(temp_files(dir), 0);
    int present = 0;
    *bytes = 0;
    for (int i = 0; i < KEYS; i++) {
        char key[128], name[80];
        key_of(i, key);
        qjit__cache_entry_name(key, name);
        qjit__cache_entry e;
        qjit_status s = qjit__cache_load(qt_bare_context(), dir, name, key, &e);
        if (s == QJIT_NOT_FOUND)
            continue;
        ck_assert_msg(s == QJIT_OK, "entry %d: %s", i, qjit_status_name(s));
        size_t n = payload_of(i, want);
        ck_assert_uint_eq(e.payload_bytes, n);
        ck_assert(memcmp(e.payload, want, n) == 0);
        *bytes += e.payload_bytes;
        qjit__cache_entry_release(qt_bare_context(), &e);
        present++;
    }
    return present;
}

START_TEST(writers_killed_at_random)
{
    char *dir = qt_tempdir("kill");
    qt_rng r = qt_rng_make(77);
    long kills = 0, midway = 0;
    for (long round = 0; round < rounds(); round++) {
        pid_t pids[PROCS];
        for (int p = 0; p < PROCS; p++) {
            pids[p] = fork();
            ck_assert_int_ge(pids[p], 0);
            if (pids[p] == 0)
                writer(dir, (unsigned)(round * PROCS + p), -1, 0);
        }
        struct timespec nap = {0, (long)(1 + qt_next(&r) % 30) * 1000000L};
        nanosleep(&nap, NULL);
        for (int p = 0; p < PROCS; p++) {
            int status = 0;
            kill(pids[p], SIGKILL);
            ck_assert_int_eq(waitpid(pids[p], &status, 0), pids[p]);
            ck_assert_msg(WIFSIGNALED(status), "writer %d ended on its own (status %d)", p, status);
            kills++;
        }
        midway += temp_files(dir);              /* the writes those kills cut short */
    }
    /* One more write reaps what the dead left (the next round's writers
     * reaped the earlier rounds'). */
    pid_t last = fork();
    if (last == 0)
        writer(dir, 999, 1, 0);
    int status = 0;
    waitpid(last, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    uint64_t bytes;
    int present = assert_sound(dir, &bytes);
    printf("killed %ld writers in %ld rounds, %ld of them in the middle of a write: %d of %d entries present, all "
           "sound\n", kills, rounds(), midway, present, KEYS);
    ck_assert_int_gt(present, 0);
    ck_assert_int_gt(midway, 0);                /* else the kills tested nothing */
    qt_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(writers_and_evictors_race)
{
    char *dir = qt_tempdir("evict");
    const uint64_t bound = 600000;           /* about a third of all the entries */
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        ck_assert_int_ge(pids[p], 0);
        if (pids[p] == 0)
            writer(dir, 1000u + (unsigned)p, 4 * rounds(), bound);
    }
    for (int p = 0; p < PROCS; p++) {
        int status = 0;
        ck_assert_int_eq(waitpid(pids[p], &status, 0), pids[p]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed (status %d)", p, status);
    }
    uint64_t bytes;
    int present = assert_sound(dir, &bytes);
    /* Every writer evicted after its last store; entries of up to 181 KB. */
    ck_assert_uint_le(bytes, bound);
    ck_assert_int_gt(present, 0);
    printf("%d writers x %ld stores under a %llu-byte bound: %d entries, %llu bytes, all sound\n", PROCS,
           4 * rounds(), (unsigned long long)bound, present, (unsigned long long)bytes);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

/* Whole compiles killed at random: processes compiling variants (NVRTC,
 * store, manifest, the per-entry lock) into one folder, SIGKILLed at random
 * moments. Afterwards every variant compiles or loads, verify is clean and
 * nothing of the dead is left once one more write has run. */
START_TEST(compiles_killed_at_random)
{
    char *dir = qt_tempdir("kcomp");
    qt_rng r = qt_rng_make(88);
    const long n = rounds() / 4 + 1;
    char keys[8][128];
    for (int k = 0; k < 8; k++)
        snprintf(keys[k], sizeof keys[k], "scheme=w4a8-lqq;g=128;tile=16x64x128;warps=1x4;stages=%d;split=%d;epi=i32",
                 2 + k % 4, 1 + k / 4);
    long kills = 0;
    for (long round = 0; round < n; round++) {
        pid_t pids[4];
        for (int p = 0; p < 4; p++) {
            pids[p] = fork();
            ck_assert_int_ge(pids[p], 0);
            if (pids[p] == 0) {
                qjit_context *c = qt_plain_context(dir);
                qt_rng cr = qt_rng_make((uint64_t)(round * 4 + p + 1));
                for (;;) {
                    if (!c || qjit_compile(c, keys[qt_next(&cr) % 8], NULL, NULL) != QJIT_OK)
                        _exit(3);
                    if (qt_next(&cr) % 3 == 0)
                        qjit_cache_clear(c, NULL);          /* so that compiles go on */
                }
            }
        }
        struct timespec nap = {0, (long)(50 + qt_next(&r) % 400) * 1000000L};
        nanosleep(&nap, NULL);
        for (int p = 0; p < 4; p++) {
            int status = 0;
            kill(pids[p], SIGKILL);
            ck_assert_int_eq(waitpid(pids[p], &status, 0), pids[p]);
            ck_assert_msg(WIFSIGNALED(status), "compiler %d ended on its own (status %d)", p, status);
            kills++;
        }
    }
    qjit_context *c = qt_plain_context(dir);
    ck_assert_ptr_nonnull(c);
    for (int k = 0; k < 8; k++)
        ck_assert_msg(qjit_compile(c, keys[k], NULL, NULL) == QJIT_OK, "%s: %s", keys[k], qjit_last_error(c));
    size_t bad = 99;
    ck_assert_int_eq(qjit_cache_list(c, NULL, NULL, &bad), QJIT_OK);
    ck_assert_uint_eq(bad, 0);
    ck_assert_int_eq(temp_files(dir), 0);
    qjit_context_destroy(c);
    printf("killed %ld compiling processes in %ld rounds: every variant compiles or loads, verify clean\n", kills, n);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("stress");
    TCase *tc = tcase_create("cache");
    tcase_add_test(tc, writers_killed_at_random);
    tcase_add_test(tc, writers_and_evictors_race);
    tcase_add_test(tc, compiles_killed_at_random);
    tcase_set_timeout(tc, 600);
    qt_add(s, tc, 0);
    return s;
}
