/* quant.h -- host-side LQQ quantizer, packer and the packed-weight buffer.
 *
 * PACKED-WEIGHT BUFFER (little-endian), version 1
 *   header, 64 bytes:
 *     0  char magic[8]      "QJITWTS1"
 *     8  u32  version       1
 *     12 u32  scheme        QJIT_SCHEME_W4A8_LQQ (1)
 *     16 i64  N             rows (output channels), N % 16 == 0
 *     24 i64  K             columns (input channels), K % 64 == 0
 *     32 i32  group         0 = per channel (one group of K); else K % group == 0,
 *                           group % 64 == 0 (64, 128, 256, ...)
 *     36 u32  flags         0
 *     40 u64  payload_bytes
 *     48 u64  payload_hash  qjit__hash64(payload, payload_bytes, 0)
 *     56 u64  header_hash   qjit__hash64(header bytes 0..55, 56, 0)
 *   payload, at byte 64:
 *     qweight  (N/16)*(K/64) blocks of 512 bytes; block (nb, kb) at
 *              ((nb * (K/64)) + kb) * 512
 *     gparams  (N/16)*(K/G) entries of 32 bytes (G = group, or K if 0);
 *              entry (nb, gi) at qweight_bytes + ((nb * (K/G)) + gi) * 32
 *     s0       N floats (level-1 per-channel scale)
 *
 * BLOCK LAYOUT (dual-MMA packed): a block holds rows n0..n0+15 (n0 = 16 nb)
 * and columns k0..k0+63 (k0 = 64 kb) as the A operand of two consecutive
 * mma.m16n8k32 (kk = 0: k0..k0+31, kk = 1: k0+32..k0+63). Lane L of a warp
 * (g = L / 4, t = L % 4) reads its 16 bytes at L * 16 with one 128-bit load:
 * four u32 words, word index w = 2 * kk + h, and byte j (0..3) of word w is
 *     low nibble  = Q4[n0 + g    ][k0 + 32 kk + 16 h + 4 t + j]
 *     high nibble = Q4[n0 + g + 8][k0 + 32 kk + 16 h + 4 t + j]
 * so (w & 0x0F0F0F0F) and ((w >> 4) & 0x0F0F0F0F) are, after dequantization,
 * MMA A registers a(2h) (row g) and a(2h+1) (row g+8).
 *
 * GPARAMS ENTRY (nb, gi), 32 bytes: for g = 0..7, bytes 4g..4g+3 are
 *     { s[n0+g], a[n0+g], s[n0+g+8], a[n0+g+8] }   (level-2 scale and offset
 * of that row's group gi), so lane L reads word g = L / 4.
 *
 * Dequantization of one word (four weights): U8' = Q4 * s + a, Q8' = U8' ^ 0x80:
 *     r = (q4x4 * s + a * 0x01010101u) ^ 0x80808080u
 */
#ifndef QJIT_QUANT_H
#define QJIT_QUANT_H

#include <stddef.h>
#include <stdint.h>
#include "qjit.h"

#define QJIT__WEIGHTS_MAGIC "QJITWTS1"
#define QJIT__WEIGHTS_HEADER_BYTES 64
#define QJIT__PACK_N 16          /* rows per block: N must be a multiple */
#define QJIT__PACK_K 64          /* columns per block: K must be a multiple */

/* A verified view into a packed buffer (no copies). */
typedef struct qjit__weights_view {
    qjit_scheme scheme;
    int group;                   /* as stored: 0 = per channel */
    int group_size;              /* effective: K if group == 0 */
    int64_t N, K;
    const uint8_t *payload;      /* start of payload */
    size_t payload_bytes;
    size_t qweight_offset, qweight_bytes;   /* offsets from payload */
    size_t gparams_offset, gparams_bytes;
    size_t s0_offset, s0_bytes;
} qjit__weights_view;

/* Parses and verifies (magic, version, sizes, both hashes) a packed buffer.
 * verify_payload = 0 skips the payload hash (header still checked).
 * @return QJIT_CORRUPT_WEIGHTS (message says what is wrong) or
 * QJIT_INVALID_ARGUMENT for NULL/short input. */
qjit_status qjit__weights_view_init(qjit_context *ctx, const void *packed, size_t bytes,
                                    int verify_payload, qjit__weights_view *view);

/* LQQ quantization of W (float, row-major N x K) in unpacked form, exactly as
 * ALGORITHMS.md sections 3 and 4 say:
 *   s0[n] = max_k |W| / 119 (1 if the row is all zero), Q8 = clamp(round(W/s0), -119, 119)
 *   U8 = Q8 + 128; per group: a = min U8, s = max(1, ceil((max U8 - a) / 15)),
 *   Q4 = clamp(round((U8 - a) / s), 0, 15); round = half away from zero.
 * Outputs (any may be NULL): Q8[N*K], Q4[N*K], s[N*K/G], a[N*K/G], s0[N].
 * @return QJIT_INVALID_ARGUMENT on NaN/Inf (message names [n, k]) or bad sizes. */
qjit_status qjit__lqq_quantize(qjit_context *ctx, const float *W, int64_t N, int64_t K, int group_size,
                               int8_t *Q8, uint8_t *Q4, uint8_t *s, uint8_t *a, float *s0);

/* Packs unpacked Q4/s/a into qweight and gparams as laid out above. */
void qjit__lqq_pack(int64_t N, int64_t K, int group_size, const uint8_t *Q4, const uint8_t *s,
                    const uint8_t *a, uint8_t *qweight, uint8_t *gparams);
/* The inverse, for tests and the reference: Q4[N*K], s/a[N*K/G]. */
void qjit__lqq_unpack(int64_t N, int64_t K, int group_size, const uint8_t *qweight,
                      const uint8_t *gparams, uint8_t *Q4, uint8_t *s, uint8_t *a);
/* The dequantized INT8 weight W'[n,k] = (Q4 s + a) ^ 0x80 of a packed view,
 * all N x K of it, into Wq (row-major). */
void qjit__lqq_dequantize(const qjit__weights_view *v, int8_t *Wq);

/* IEEE binary16 <-> binary32, round to nearest even (exact both ways where
 * representable; NaN and Inf preserved). */
float qjit__half_to_float(uint16_t h);
uint16_t qjit__float_to_half(float f);

#endif
