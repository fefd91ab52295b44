#define W_VECS 1                     /* 16-byte vectors per lane per 16 x 64 block */
//% if p.group > 0 then
/* Scheme w4a8-qoq with groups: subtraction after multiplication. Q4 * s1
 * fits a byte (s1 <= 16), and the protective range of level 1 keeps
 * Q4 s1 - z s1 inside INT8 and z s1 inside [-127, 127]. So c = 128 - z s1
 * is a byte (1..255, from the stored (z s1) mod 256) and Q4 s1 + c =
 * Q4 s1 - z s1 + 128 lies in 0..255 for every byte: one 32-bit
 * multiply-add with c in all four bytes gives the four results with no
 * carry between bytes, and XOR 0x80 makes them INT8 -- the subtraction
 * costs nothing over w4a8-lqq's IMAD + LOP3. */

{{ render("schemes/dequant_madd.cu") }}

/* From the lane's parameter word { s1_lo, zs_lo, s1_hi, zs_hi }: the
 * multiplier s1 and the addend c = (128 - z s1) mod 256 of each row. */
static __device__ __forceinline__ wparams wparams_from(u32 p)
{
    wparams r;
    r.s_lo = p & 0xFFu;
    r.a_lo = ((128u - (p >> 8)) & 0xFFu) * 0x01010101u;
    r.s_hi = (p >> 16) & 0xFFu;
    r.a_hi = ((128u - (p >> 24)) & 0xFFu) * 0x01010101u;
    return r;
}
{{ render("schemes/epi_scaled.cu") }}
//% else
/* Scheme w4a8-qoq per channel: the UINT4 values are the MMA operand as they
 * are (0..15 in each byte); the zero point moves to the epilogue,
 * Y = sx[m] * sw[n] * (acc - zw[n] * rowsum[m]), rowsum[m] = sum_k Xq[m, k]
 * from the activation kernel. */
struct wparams {};

static __device__ __forceinline__ void dequant(const uint4 (&w)[W_VECS], const wparams &, u32 (&a)[2][4])
{
    a[0][0] = w[0].x & 0x0F0F0F0Fu;
    a[0][1] = (w[0].x >> 4) & 0x0F0F0F0Fu;
    a[0][2] = w[0].y & 0x0F0F0F0Fu;
    a[0][3] = (w[0].y >> 4) & 0x0F0F0F0Fu;
    a[1][0] = w[0].z & 0x0F0F0F0Fu;
    a[1][1] = (w[0].z >> 4) & 0x0F0F0F0Fu;
    a[1][2] = w[0].w & 0x0F0F0F0Fu;
    a[1][3] = (w[0].w >> 4) & 0x0F0F0F0Fu;
}

#define EPI_COL_ARGS scale, zero
#define EPI_ROW_ARGS sx, rowsum
struct epi_col { float s; int z; };
struct epi_row { float s; int sum; };
static __device__ __forceinline__ epi_col epi_col_load(const float *__restrict__ scale, const int *__restrict__ zero,
                                                       int n, bool ok)
{
    epi_col c;
    c.s = ok ? scale[n] : 0.0f;
    c.z = ok ? zero[n] : 0;
    return c;
}
static __device__ __forceinline__ epi_row epi_row_load(const float *__restrict__ sx, const int *__restrict__ rowsum,
                                                       int m, bool ok)
{
    epi_row r;
    r.s = ok ? sx[m] : 0.0f;
    r.sum = ok ? rowsum[m] : 0;
    return r;
}
static __device__ __forceinline__ float epi_value(int acc, const epi_row &r, const epi_col &c)
{
    return (float)(acc - c.z * r.sum) * (r.s * c.s);
}
//% end
