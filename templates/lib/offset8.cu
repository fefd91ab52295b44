/* lib/offset8.cu -- 4-bit values stored offset by 8 (0..15) into INT8, for
 * the schemes that store their weights so (the sparse residual, stored the
 * same way, is added to the weights instead: lib/residual.cu): adding 0x78
 * to each byte gives v + 128 (no carries: at most 135), and XOR 0x80 turns
 * that into v as INT8; one IADD and one LOP3 per four values. A lane's 16-byte share of a 16 x 64 block gives the A
 * registers of two m16n8k32 MMAs (a[kk][0..3]), as layout.h places them.
 * Rendered once per kernel whoever asks first. */
#ifndef QJIT_OFFSET8
#define QJIT_OFFSET8
static __device__ __forceinline__ u32 offset8_int8(u32 u4x4) { return (u4x4 + 0x78787878u) ^ 0x80808080u; }

static __device__ __forceinline__ void offset8_dequant(const uint4 &w, u32 (&a)[2][4])
{
    a[0][0] = offset8_int8(w.x & 0x0F0F0F0Fu);
    a[0][1] = offset8_int8((w.x >> 4) & 0x0F0F0F0Fu);
    a[0][2] = offset8_int8(w.y & 0x0F0F0F0Fu);
    a[0][3] = offset8_int8((w.y >> 4) & 0x0F0F0F0Fu);
    a[1][0] = offset8_int8(w.z & 0x0F0F0F0Fu);
    a[1][1] = offset8_int8((w.z >> 4) & 0x0F0F0F0Fu);
    a[1][2] = offset8_int8(w.w & 0x0F0F0F0Fu);
    a[1][3] = offset8_int8((w.w >> 4) & 0x0F0F0F0Fu);
}
//% if s4 then

/* The same share as the A registers of one m16n8k64 INT4 MMA (mma=s4):
 * XOR 8 turns a value stored offset by 8 into the INT4 value. The MMA's k
 * order is not the block's: register a[0] (row g) holds the low nibbles of
 * w.x (k = 4t..4t+3) and of w.y (k = 16+4t..) interleaved, byte j = k 4t+j
 * | k 16+4t+j << 4, so the tokens' operand must pair channels b and b + 16
 * of each 32 in a byte the same way (act-quant pack=2 does). */
static __device__ __forceinline__ void offset8_s4(const uint4 &w, u32 (&a)[4])
{
    a[0] = ((w.x & 0x0F0F0F0Fu) | (w.y & 0x0F0F0F0Fu) << 4) ^ 0x88888888u;
    a[1] = ((w.x >> 4 & 0x0F0F0F0Fu) | (w.y & 0xF0F0F0F0u)) ^ 0x88888888u;
    a[2] = ((w.z & 0x0F0F0F0Fu) | (w.w & 0x0F0F0F0Fu) << 4) ^ 0x88888888u;
    a[3] = ((w.z >> 4 & 0x0F0F0F0Fu) | (w.w & 0xF0F0F0F0u)) ^ 0x88888888u;
}
//% end
#endif
