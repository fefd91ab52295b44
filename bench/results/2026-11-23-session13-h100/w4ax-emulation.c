/* W4Ax emulation: INT4 per-channel weights; activations in 128-channel blocks, the
 * top channels by calibration max|x| (permuted together) in A8 blocks, the rest A4.
 * (a) two per-token scales and two INT32 accumulators; (b) COMET's shared scale
 * (A8 scale = A4 scale / 16, one accumulator). Output error vs the FP64 product. */
#include "accuracy.h"
#include "qjit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static double h2f(uint16_t h) { int e = (h >> 10) & 31, m = h & 1023; double x = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24); return (h & 0x8000) ? -x : x; }
static int cmpd(const void *a, const void *b) { const double *x = a, *y = b; return x[0] < y[0] ? 1 : x[0] > y[0] ? -1 : (x[1] > y[1]) - (x[1] < y[1]); }
int main(int argc, char **argv) {
    int64_t N = 4096, K = 4096, M = 64; uint64_t seed = argc > 1 ? strtoull(argv[1], 0, 10) : 12345; char err[256];
    qa_layer L; if (qa_layer_make(&L, N, K, M, seed, NULL, err, sizeof err)) { puts(err); return 1; }
    /* weights: per-channel INT4 */
    int8_t *wq = malloc(N * K); double *sw = malloc(8 * N);
    for (int64_t n = 0; n < N; n++) { double a = 0; for (int64_t k = 0; k < K; k++) a = fmax(a, fabs(L.W[n*K+k]));
        float s = (float)a / 7.0f; if (s == 0) s = 1; sw[n] = s;
        for (int64_t k = 0; k < K; k++) { float q = roundf(L.W[n*K+k] / s); wq[n*K+k] = (int8_t)fmax(-7, fmin(7, q)); } }
    /* channel statistic */
    double (*st)[2] = malloc(sizeof(double[2]) * K);
    for (int64_t k = 0; k < K; k++) { double a = 0; for (int64_t t = 0; t < QA_CALIB_ROWS; t++) a = fmax(a, fabs(h2f(L.calib[t*K+k]))); st[k][0] = a; st[k][1] = (double)k; }
    qsort(st, K, sizeof st[0], cmpd);
    double *X = malloc(8 * M * K); for (int64_t i = 0; i < M * K; i++) X[i] = h2f(L.X[i]);
    double ref2 = 0; for (int64_t i = 0; i < M * N; i++) ref2 += L.Yref[i] * L.Yref[i];
    double fr[] = {0, 0.05, 0.1, 0.2, 1.0};
    unsigned char *a8 = malloc(K); double *xd = malloc(8 * K); double *Y = malloc(8 * M * N);
    for (int fi = 0; fi < 5; fi++) {
        int64_t n8 = (int64_t)ceil(fr[fi] * (K / 128) - 1e-9), nch = n8 * 128;
        memset(a8, 0, K); for (int64_t i = 0; i < nch; i++) a8[(int64_t)st[i][1]] = 1;
        for (int mode = 0; mode < 2; mode++) {
            double e2 = 0, w2 = 0;
            for (int64_t m = 0; m < M; m++) {
                const double *x = X + m * K; double m8 = 0, m4 = 0;
                for (int64_t k = 0; k < K; k++) { if (a8[k]) m8 = fmax(m8, fabs(x[k])); else m4 = fmax(m4, fabs(x[k])); }
                double s8, s4;
                if (mode == 0) { s8 = m8 > 0 ? m8 / 127 : 1; s4 = m4 > 0 ? m4 / 7 : 1; }
                else { /* shared: A8 step = A4 step / 16; the A8 values must fit 127 */
                       s4 = fmax(m4 / 7, m8 / 127 * 16); if (s4 == 0) s4 = 1; s8 = s4 / 16; }
                for (int64_t k = 0; k < K; k++) { double s = a8[k] ? s8 : s4; int lim = a8[k] ? 127 : 7;
                    double q = round(x[k] / s); q = fmax(-lim, fmin(lim, q)); xd[k] = q * s; }
                for (int64_t n = 0; n < N; n++) { double acc = 0; const int8_t *w = wq + n * K;
                    for (int64_t k = 0; k < K; k++) acc += xd[k] * w[k];
                    double y = acc * sw[n], r = L.Yref[m * N + n]; e2 += (y - r) * (y - r); }
            }
            (void)w2;
            printf("A8 blocks %5.1f%% (%3lld of %lld) %-16s rel err %.3f%%\n", 100 * fr[fi], (long long)n8, (long long)(K / 128),
                   mode ? "shared scale x16" : "two scales", 100 * sqrt(e2 / ref2));
            if (fr[fi] == 0) break;
        }
    }
    return 0;
}
