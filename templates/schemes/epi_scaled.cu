/* The epilogue Y = sx[m] * scale[n] * acc (the token's and the channel's
 * scale): what a pipeline loads per output column n and row m (nothing is
 * read unless ok; the value is then unused), and the value. */
#define EPI_COL_ARGS scale
#define EPI_ROW_ARGS sx
struct epi_col { float s; };
struct epi_row { float s; };
static __device__ __forceinline__ epi_col epi_col_load(const float *__restrict__ scale, int n, bool ok)
{
    epi_col c;
    c.s = ok ? scale[n] : 0.0f;
    return c;
}
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
