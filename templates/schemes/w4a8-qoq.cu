#define W_VECS 1                     /* 16-byte vectors per lane per 16 x 64 block */
//% if p.group > 0 then
/* Scheme w4a8-qoq with groups: subtraction after multiplication. Q4 * s1
 * fits a byte (s1 <= 16), so one 32-bit multiply scales four weights; the
 * zero point's z s1 is then subtracted from each byte modulo 256 (no borrow
 * between bytes), which the protective range of level 1 keeps inside INT8.
 * Four instructions more per word than w4a8-lqq's IMAD + LOP3. */

/* A lane's group parameters: row g's and row g+8's s1, and their z s1 in all
 * four bytes, split as the byte-wise subtraction uses it. */
struct wparams { u32 s_lo, zlo_low7, zlo_top, s_hi, zhi_low7, zhi_top; };

/* From the lane's parameter word { s1_lo, zs_lo, s1_hi, zs_hi }. */
static __device__ __forceinline__ wparams wparams_from(u32 p)
{
    const u32 zlo = ((p >> 8) & 0xFFu) * 0x01010101u, zhi = (p >> 24) * 0x01010101u;
    wparams r;
    r.s_lo = p & 0xFFu;
    r.zlo_low7 = zlo & 0x7F7F7F7Fu;
    r.zlo_top = ~zlo & 0x80808080u;
    r.s_hi = (p >> 16) & 0xFFu;
    r.zhi_low7 = zhi & 0x7F7F7F7Fu;
    r.zhi_top = ~zhi & 0x80808080u;
    return r;
}

/* Four bytes (q4 s1 - z s1) mod 256: the borrow of each byte's low seven
 * bits stops at its top bit, which is then set by XOR. */
static __device__ __forceinline__ u32 qoq_dequant4(u32 q4x4, u32 s, u32 z_low7, u32 z_top)
{
    const u32 r = q4x4 * s;
    return ((r | 0x80808080u) - z_low7) ^ ((r ^ z_top) & 0x80808080u);
}

static __device__ __forceinline__ void qoq_dequant_word(u32 w, const wparams &p, u32 &row_lo, u32 &row_hi)
{
    row_lo = qoq_dequant4(w & 0x0F0F0F0Fu, p.s_lo, p.zlo_low7, p.zlo_top);
    row_hi = qoq_dequant4((w >> 4) & 0x0F0F0F0Fu, p.s_hi, p.zhi_low7, p.zhi_top);
}

static __device__ __forceinline__ void dequant(const uint4 (&w)[W_VECS], const wparams &p, u32 (&a)[2][4])
{
    qoq_dequant_word(w[0].x, p, a[0][0], a[0][1]);
    qoq_dequant_word(w[0].y, p, a[0][2], a[0][3]);
    qoq_dequant_word(w[0].z, p, a[1][0], a[1][1]);
    qoq_dequant_word(w[0].w, p, a[1][2], a[1][3]);
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
