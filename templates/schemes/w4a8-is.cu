/* Scheme w4a8-is (Integer Scale): the INT4 weights are stored offset by 8
 * (0..15); adding 0x78 to each byte gives Q4 + 128 (no carries: at most
 * 135), and XOR 0x80 turns that into Q4 as INT8. The group's integer scale S
 * multiplies the group's INT32 sum (fold_scale), the epilogue divides by the
 * amplifier (its per-channel scale). */
#define W_VECS 1                     /* 16-byte vectors per lane per 16 x 64 block */

/* A lane's integer scales: row g's and row g+8's for the group. */
struct wparams { int s_lo, s_hi; };

static __device__ __forceinline__ wparams wparams_from(u32 p)
{
    wparams r;
    r.s_lo = (int)(p & 0xFFFFu);
    r.s_hi = (int)(p >> 16);
    return r;
}

{{ render("lib/offset8.cu") }}
static __device__ __forceinline__ void dequant(const uint4 (&w)[W_VECS], const wparams &, u32 (&a)[2][4])
{
    offset8_dequant(w[0], a);
}

/* The integer scale of the accumulator's weight row: half 0 is row g, 1 row g+8. */
static __device__ __forceinline__ int fold_scale(const wparams &p, int half) { return half ? p.s_hi : p.s_lo; }
{{ render("schemes/epi_scaled.cu") }}
