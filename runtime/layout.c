/* layout.c -- packing and unpacking of the layouts in layout.h. */
#include "layout.h"

#include <string.h>

/* Where weight (r, c) of a 16 x 64 block lives (layout.h): its byte in the
 * block and, for 4-bit weights, its nibble (shift 0: low, 4: high). */
static size_t byte_of(int bits, int r, int c, int *shift)
{
    int g = r & 7, upper = r >> 3, kk = c >> 5, h = (c >> 4) & 1, t = (c >> 2) & 3, j = c & 3;
    size_t lane = (size_t)(4 * g + t) * 16;
    if (bits == 4) {
        *shift = 4 * upper;
        return lane + (size_t)(2 * kk + h) * 4 + (size_t)j;
    }
    *shift = 0;
    return (size_t)kk * 512 + lane + (size_t)(2 * h + upper) * 4 + (size_t)j;
}

/* Byte of weight (n, k) of an N x K layer in its blocks, and its shift. */
static size_t layer_byte(int bits, int64_t n, int64_t k, int64_t K, int *shift)
{
    size_t block = (size_t)((n / QJIT__PACK_N) * (K / QJIT__PACK_K) + k / QJIT__PACK_K) * qjit__block_bytes(bits);
    return block + byte_of(bits, (int)(n % QJIT__PACK_N), (int)(k % QJIT__PACK_K), shift);
}

void qjit__pack4_slab(const uint8_t *q4, int64_t K, uint8_t *dst)
{
    memset(dst, 0, (size_t)(K / QJIT__PACK_K) * qjit__block_bytes(4));
    for (int64_t n = 0; n < QJIT__PACK_N; n++)
        for (int64_t k = 0; k < K; k++) {
            int shift;
            size_t at = layer_byte(4, n, k, K, &shift);
            dst[at] = (uint8_t)(dst[at] | (q4[n * K + k] & 0x0F) << shift);
        }
}

void qjit__unpack4_rows(const uint8_t *src, int64_t rows, int64_t K, uint8_t *q4)
{
    for (int64_t n = 0; n < rows; n++)
        for (int64_t k = 0; k < K; k++) {
            int shift;
            size_t at = layer_byte(4, n, k, K, &shift);
            q4[n * K + k] = (uint8_t)(src[at] >> shift & 0x0F);
        }
}

void qjit__pack8_slab(const int8_t *q8, int64_t K, uint8_t *dst)
{
    for (int64_t n = 0; n < QJIT__PACK_N; n++)
        for (int64_t k = 0; k < K; k++) {
            int shift;
            dst[layer_byte(8, n, k, K, &shift)] = (uint8_t)q8[n * K + k];
        }
}

void qjit__unpack8_rows(const uint8_t *src, int64_t rows, int64_t K, int8_t *q8)
{
    for (int64_t n = 0; n < rows; n++)
        for (int64_t k = 0; k < K; k++) {
            int shift;
            q8[n * K + k] = (int8_t)src[layer_byte(8, n, k, K, &shift)];
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
