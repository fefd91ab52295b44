/* random.c -- the command's random inputs: splitmix64 and Box-Muller
 * normals, seeded, so a run can be repeated with --seed. */
#include "cli.h"

#include <math.h>

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
