/* random.c -- the command's random inputs: splitmix64 and Box-Muller
 * normals, seeded, so a run can be repeated with --seed; large arrays of
 * them filled on every CPU. */
#define _GNU_SOURCE
#include "cli.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

uint64_t cli_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float cli_normal(uint64_t *state)
{
    double u1 = ((double)(cli_random(state) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (double)(cli_random(state) >> 11) / 9007199254740992.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* cli_fill_normal: chunks of FILL_CHUNK values, each from a stream of its
 * own (the seed and the chunk's index), taken by the threads in turn. */
#define FILL_CHUNK ((size_t)1 << 16)
#define FILL_THREADS 64

typedef struct fill_job {
    float *out;
    size_t n;
    uint64_t seed;
    float scale;
    atomic_size_t next;
} fill_job;

static void *fill_main(void *p)
{
    fill_job *j = p;
    for (;;) {
        const size_t c = atomic_fetch_add(&j->next, 1);
        if (c * FILL_CHUNK >= j->n)
            return NULL;
        uint64_t state = j->seed ^ ((uint64_t)c * 0xD1B54A32D192ED03ull);
        cli_random(&state);
        const size_t end = (c + 1) * FILL_CHUNK < j->n ? (c + 1) * FILL_CHUNK : j->n;
        for (size_t i = c * FILL_CHUNK; i < end; i++)
            j->out[i] = j->scale * cli_normal(&state);
    }
}

void cli_fill_normal(float *out, size_t n, uint64_t seed, float scale)
{
    fill_job job = {out, n, seed, scale, 0};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t chunks = (n + FILL_CHUNK - 1) / FILL_CHUNK;
    int nt = cpus < 1 ? 1 : cpus > FILL_THREADS ? FILL_THREADS : (int)cpus;
    if ((size_t)nt > chunks)
        nt = chunks ? (int)chunks : 1;
    pthread_t threads[FILL_THREADS];
    int started[FILL_THREADS] = {0};
    for (int t = 1; t < nt; t++)
        started[t] = pthread_create(&threads[t], NULL, fill_main, &job) == 0;
    fill_main(&job);     /* this thread too; threads that did not start leave it their share */
    for (int t = 1; t < nt; t++)
        if (started[t])
            pthread_join(threads[t], NULL);
}
