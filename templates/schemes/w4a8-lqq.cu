/* Scheme w4a8-lqq (LiquidQuant): four UINT4 values, one per byte, become
 * four INT8 weights with one IMAD and one LOP3. U8' = Q4 * s + a has no
 * carries between bytes (U8' <= 255), and XOR 0x80 turns UINT8 into INT8
 * (subtracting 128 modulo 256). */
#define W_VECS 1                     /* 16-byte vectors per lane per 16 x 64 block */

{{ render("schemes/dequant_madd.cu") }}

/* From the lane's parameter word { s_lo, a_lo, s_hi, a_hi }. */
static __device__ __forceinline__ wparams wparams_from(u32 p)
{
    wparams r;
    r.s_lo = p & 0xFFu;
    r.a_lo = ((p >> 8) & 0xFFu) * 0x01010101u;
    r.s_hi = (p >> 16) & 0xFFu;
    r.a_hi = (p >> 24) * 0x01010101u;
    return r;
}
{{ render("schemes/epi_scaled.cu") }}
