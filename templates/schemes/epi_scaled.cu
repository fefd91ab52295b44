//% -- schemes/epi_scaled.cu -- the epilogue of the per-channel, per-token
//% -- scaled schemes; parts = 2 (w4ax): two sums and two token scales.
//% if parts == 2 then
/* The epilogue Y = fmaf(acc8, sx8 * scale[n], acc4 * (sx4 * scale[n])) (the
 * token's two scales, sx[2m] and sx[2m + 1], and the channel's; the CPU
 * reference's operations in its order): what a pipeline loads per output
 * column n and row m (nothing is read unless ok; the value is then unused),
 * and the value of the two sums. */
//% else
/* The epilogue Y = sx[m] * scale[n] * acc (the token's and the channel's
 * scale): what a pipeline loads per output column n and row m (nothing is
 * read unless ok; the value is then unused), and the value. */
//% end
#define EPI_COL_ARGS scale
#define EPI_ROW_ARGS sx
struct epi_col { float s; };
static __device__ __forceinline__ epi_col epi_col_load(const float *__restrict__ scale, int n, bool ok)
{
    epi_col c;
    c.s = ok ? scale[n] : 0.0f;
    return c;
}
//% if parts == 2 then
struct epi_row { float s8, s4; };
static __device__ __forceinline__ epi_row epi_row_load(const float *__restrict__ sx, int m, bool ok)
{
    epi_row r;
    r.s8 = ok ? sx[2 * m] : 0.0f;
    r.s4 = ok ? sx[2 * m + 1] : 0.0f;
    return r;
}
static __device__ __forceinline__ float epi_value2(int acc8, int acc4, const epi_row &r, const epi_col &c)
{
    return fmaf((float)acc8, r.s8 * c.s, (float)acc4 * (r.s4 * c.s));
}
//% else
struct epi_row { float s; };
static __device__ __forceinline__ epi_row epi_row_load(const float *__restrict__ sx, int m, bool ok)
{
    epi_row r;
    r.s = ok ? sx[m] : 0.0f;
    return r;
}
static __device__ __forceinline__ float epi_value(int acc, const epi_row &r, const epi_col &c)
{
    return (float)acc * (r.s * c.s);
}
//% end
