/* Scheme w4a8-lqq (LiquidQuant): four UINT4 values, one per byte, become
 * four INT8 weights with one IMAD and one LOP3. U8' = Q4 * s + a has no
 * carries between bytes (U8' <= 255), and XOR 0x80 turns UINT8 into INT8
 * (subtracting 128 modulo 256). */
#define W_VECS 1                     /* 16-byte vectors per lane per 16 x 64 block */

{{ render("schemes/dequant_madd.cu", { unsigned = p.wu8 == 1 }) }}

/* From the lane's parameter word { s_lo, a_lo, s_hi, a_hi }: one byte
 * permutation each (a multiplier alone in its word, an addend in all four
 * bytes; selector 4 picks a zero byte). */
static __device__ __forceinline__ wparams wparams_from(u32 p)
{
    wparams r;
    r.s_lo = __byte_perm(p, 0u, 0x4440);
    r.a_lo = __byte_perm(p, 0u, 0x1111);
    r.s_hi = __byte_perm(p, 0u, 0x4442);
    r.a_hi = __byte_perm(p, 0u, 0x3333);
    return r;
}
{{ render("schemes/epi_scaled.cu") }}
