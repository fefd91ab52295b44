/* layout.h -- the bit layouts the GEMM kernels read, shared by every scheme's
 * packer and the CPU reference.
 *
 * WEIGHT BLOCKS. Weights are stored in blocks of 16 rows x 64 k; block (nb,
 * kb) of an N x K layer is at (nb * (K/64) + kb) * BLOCK, so a 16-row slab's
 * blocks are contiguous. A block holds rows n0..n0+15 (n0 = 16 nb) and
 * columns k0..k0+63 (k0 = 64 kb) as the A operand of two consecutive
 * mma.m16n8k32 (kk = 0: k0..k0+31, kk = 1: k0+32..k0+63). Lane L of a warp
 * (g = L / 4, t = L % 4) reads 16 bytes at L * 16 (+ 512 for the second half
 * of an 8-bit block) with one 128-bit load per 512 bytes.
 *
 * 4-bit (BLOCK = 512, the dual-MMA packed layout): four u32 words per lane,
 * word index w = 2 * kk + h, and byte j (0..3) of word w is
 *     low nibble  = Q4[n0 + g    ][k0 + 32 kk + 16 h + 4 t + j]
 *     high nibble = Q4[n0 + g + 8][k0 + 32 kk + 16 h + 4 t + j]
 * so (w & 0x0F0F0F0F) and ((w >> 4) & 0x0F0F0F0F), dequantized, are MMA A
 * registers a(2h) (row g) and a(2h+1) (row g+8) of MMA kk.
 *
 * 8-bit (BLOCK = 1024): half kk (bytes 512 kk ..) holds MMA kk's A operand,
 * lane L's four words at 512 kk + 16 L being its registers a0..a3: byte j
 * of word w is W8[n0 + g + 8 (w & 1)][k0 + 32 kk + 16 (w >> 1) + 4 t + j].
 *
 * GROUP PARAMETERS. One 32-byte entry per (16-row block, group), entry (nb,
 * gi) at (nb * (K/G) + gi) * 32: for g = 0..7, bytes 4g..4g+3 are
 *     { p0[n0+g], p1[n0+g], p0[n0+g+8], p1[n0+g+8] }
 * (two bytes of parameters per row and group), so lane L reads word L / 4. */
#ifndef QJIT_LAYOUT_H
#define QJIT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define QJIT__PACK_N 16          /* rows per block: N must be a multiple */
#define QJIT__PACK_K 64          /* columns per block: K must be a multiple */
#define QJIT__GPARAMS_ENTRY 32   /* bytes of one (16 rows, one group) parameter entry */

/* Bytes of one block of 16 x 64 weights of `bits` bits. */
static inline size_t qjit__block_bytes(int bits) { return (size_t)(512 * bits / 4); }

/* Packs a 16 x K slab of 4-bit values (0..15, one per byte, row-major) into
 * its K/64 blocks at dst. */
void qjit__pack4_slab(const uint8_t *q4, int64_t K, uint8_t *dst);
/* The inverse for `rows` rows (a multiple of 16) of blocks at src. */
void qjit__unpack4_rows(const uint8_t *src, int64_t rows, int64_t K, uint8_t *q4);
/* Packs a 16 x K slab of INT8 values into its K/64 8-bit blocks at dst. */
void qjit__pack8_slab(const int8_t *q8, int64_t K, uint8_t *dst);
/* The inverse for `rows` rows (a multiple of 16). */
void qjit__unpack8_rows(const uint8_t *src, int64_t rows, int64_t K, int8_t *q8);
/* Packs a 16-row slab's parameters p0, p1 (16 x groups, row-major) into
 * its `groups` entries at dst. */
void qjit__gparams_pack_slab(const uint8_t *p0, const uint8_t *p1, int64_t groups, uint8_t *dst);
/* Row n's (0..15 within its block) parameter bytes of entry `entry`. */
static inline void qjit__gparams_row(const uint8_t *entry, int row, uint8_t *p0, uint8_t *p1)
{
    int g = row & 7, hi = row >> 3;
    *p0 = entry[4 * g + 2 * hi];
    *p1 = entry[4 * g + 2 * hi + 1];
}

#endif
