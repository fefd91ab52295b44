/* layout.c -- packing and unpacking of the layouts in layout.h. */
#include "layout.h"

/* Column k0 + 32 kk + 16 h + 4 t + j of the block for lane (g, t): the one
 * formula every layout here walks. */
static int64_t col(int64_t k0, int kk, int h, int t, int j) { return k0 + 32 * kk + 16 * h + 4 * t + j; }

void qjit__pack4_slab(const uint8_t *q4, int64_t K, uint8_t *dst)
{
    for (int64_t kb = 0; kb < K / QJIT__PACK_K; kb++) {
        uint8_t *block = dst + kb * 512;
        for (int lane = 0; lane < 32; lane++) {
            int g = lane / 4, t = lane % 4;
            const uint8_t *lo = q4 + g * K, *hi = q4 + (g + 8) * K;
            for (int kk = 0; kk < 2; kk++)
                for (int h = 0; h < 2; h++)
                    for (int j = 0; j < 4; j++) {
                        int64_t k = col(kb * QJIT__PACK_K, kk, h, t, j);
                        block[lane * 16 + (2 * kk + h) * 4 + j] = (uint8_t)((lo[k] & 0x0F) | (hi[k] & 0x0F) << 4);
                    }
        }
    }
}

void qjit__unpack4_rows(const uint8_t *src, int64_t rows, int64_t K, uint8_t *q4)
{
    for (int64_t nb = 0; nb < rows / QJIT__PACK_N; nb++)
        for (int64_t kb = 0; kb < K / QJIT__PACK_K; kb++) {
            const uint8_t *block = src + (nb * (K / QJIT__PACK_K) + kb) * 512;
            for (int lane = 0; lane < 32; lane++) {
                int g = lane / 4, t = lane % 4;
                uint8_t *lo = q4 + (nb * 16 + g) * K, *hi = q4 + (nb * 16 + g + 8) * K;
                for (int kk = 0; kk < 2; kk++)
                    for (int h = 0; h < 2; h++)
                        for (int j = 0; j < 4; j++) {
                            int64_t k = col(kb * QJIT__PACK_K, kk, h, t, j);
                            uint8_t byte = block[lane * 16 + (2 * kk + h) * 4 + j];
                            lo[k] = byte & 0x0F;
                            hi[k] = byte >> 4;
                        }
            }
        }
}

void qjit__pack8_slab(const int8_t *q8, int64_t K, uint8_t *dst)
{
    for (int64_t kb = 0; kb < K / QJIT__PACK_K; kb++) {
        uint8_t *block = dst + kb * 1024;
        for (int lane = 0; lane < 32; lane++) {
            int g = lane / 4, t = lane % 4;
            for (int kk = 0; kk < 2; kk++)
                for (int w = 0; w < 4; w++)
                    for (int j = 0; j < 4; j++) {
                        int64_t k = col(kb * QJIT__PACK_K, kk, w >> 1, t, j);
                        block[kk * 512 + lane * 16 + w * 4 + j] = (uint8_t)q8[(g + 8 * (w & 1)) * K + k];
                    }
        }
    }
}

void qjit__unpack8_rows(const uint8_t *src, int64_t rows, int64_t K, int8_t *q8)
{
    for (int64_t nb = 0; nb < rows / QJIT__PACK_N; nb++)
        for (int64_t kb = 0; kb < K / QJIT__PACK_K; kb++) {
            const uint8_t *block = src + (nb * (K / QJIT__PACK_K) + kb) * 1024;
            for (int lane = 0; lane < 32; lane++) {
                int g = lane / 4, t = lane % 4;
                for (int kk = 0; kk < 2; kk++)
                    for (int w = 0; w < 4; w++)
                        for (int j = 0; j < 4; j++) {
                            int64_t k = col(kb * QJIT__PACK_K, kk, w >> 1, t, j);
                            q8[(nb * 16 + g + 8 * (w & 1)) * K + k] = (int8_t)block[kk * 512 + lane * 16 + w * 4 + j];
                        }
            }
        }
}

void qjit__gparams_pack_slab(const uint8_t *p0, const uint8_t *p1, int64_t groups, uint8_t *dst)
{
    for (int64_t gi = 0; gi < groups; gi++) {
        uint8_t *entry = dst + gi * QJIT__GPARAMS_ENTRY;
        for (int g = 0; g < 8; g++) {
            entry[4 * g + 0] = p0[g * groups + gi];
            entry[4 * g + 1] = p1[g * groups + gi];
            entry[4 * g + 2] = p0[(g + 8) * groups + gi];
            entry[4 * g + 3] = p1[(g + 8) * groups + gi];
        }
    }
}
