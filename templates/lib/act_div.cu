/* lib/act_div.cu -- the activation quantizers' rounding (docs/schemes.md,
 * activations): Xq = clamp(round(x / s), -limit, limit), round half away
 * from zero, bit for bit what the CPU reference computes with an IEEE
 * division and roundf, without a division a value. An IEEE division is a
 * reciprocal on the quarter-rate pipe, a range check and a branch, and
 * roundf and the conversion to an integer two more quarter-rate
 * instructions: past a few hundred tokens they, not DRAM, paced the
 * activation kernel (H100, 4096 x 4096 at M = 4096: 41 us for 48 MB).
 *
 * Per row (act_div_of): r = 1 / s rounded (rcp.rn). For BF16 rows s and x
 * are first scaled by the power of two p that brings s into [1, 2): a BF16
 * row's scale can lie anywhere in the float range, where 1 / s overflows
 * or loses bits; an FP16 row's lies in [2^-31, 2^14] and needs none.
 * Per value (act_quot): q0 = x r, then one correction, q0 + (x - q0 s) r,
 * with FMAs: the division's own fast path with its reciprocal hoisted.
 * That it rounds to the IEEE quotient wherever the result can differ
 * (|x / s| up to 130) is checked over every FP16 and BF16 pair of value
 * and scale, both limits, by tests/test_quant.c (act_division_is_exact),
 * which runs the same steps. The GPU kernels do not check their tokens for
 * NaN and infinity (the CPU reference refuses them): those give what the
 * division gave, an infinite scale 0 for a finite x and NaN (-limit) for
 * an infinite one, a NaN anywhere -limit. */
struct act_div {
    float s;   /* the scale, times p */
    float r;   /* 1 / s, rounded */
//% if bf16 then
    float p;   /* the power of two x and s are scaled by */
//% end
};

static __device__ __forceinline__ act_div act_div_of(float s)
{
    act_div d;
//% if bf16 then
    /* p = 2^(127 - e), e the biased exponent of s (0 for a subnormal s:
     * p = 2^127 makes it normal); s < 2^126, so p is a normal float. */
    const u32 e = __float_as_uint(s) >> 23 & 0xFFu;
    d.p = __uint_as_float((254u - e) << 23);
    d.s = s * d.p;
//% else
    d.s = s;
//% end
    if (s > 3.402823466e38f) {   /* infinite: x * 0, and no NaN from the correction */
        d.s = 1.0f;
        d.r = 0.0f;
//% if bf16 then
        d.p = 1.0f;
//% end
    } else {
        d.r = __frcp_rn(d.s);
    }
    return d;
}

/* x / s as the IEEE division rounds it (for |x / s| <= 130, the values
 * whose rounding matters). */
static __device__ __forceinline__ float act_quot(float x, const act_div &d)
{
//% if bf16 then
    x = __fmul_rn(x, d.p);
//% end
    const float q0 = __fmul_rn(x, d.r);
    return __fmaf_rn(__fmaf_rn(-q0, d.s, x), d.r, q0);
}

/* q rounded half away from zero and clamped to +-limit, as the bits of
 * the float 1.5 2^23 + that integer: the low byte is its INT8 two's
 * complement, and the bits less 0x4B400000 the integer. Adds towards zero
 * instead of roundf and a conversion: floor(RZ(|q| + 0.5)) is
 * floor(|q| + 0.5), and RZ(t + 2^23) is 2^23 + floor(t). A NaN goes to
 * -limit, as the reference's clamp of roundf(NaN) does. */
static __device__ __forceinline__ u32 act_round(float q, float limit)
{
    const float v = fmaxf(q, -limit);
    const float t = fminf(__fadd_rz(fabsf(v), 0.5f), limit);
    const float n = __fadd_rz(t, 8388608.0f) - 8388608.0f;
    return __float_as_uint(copysignf(n, v) + 12582912.0f);
}

/* Bytes of a and b picked by sel (prmt: nibble i names result byte i,
 * 0-3 from a, 4-7 from b). */
static __device__ __forceinline__ u32 prmt(u32 a, u32 b, u32 sel)
{
    u32 r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
    return r;
}

/* The low bytes of four act_round results, b0 lowest. */
static __device__ __forceinline__ u32 act_bytes4(u32 b0, u32 b1, u32 b2, u32 b3)
{
    return prmt(prmt(b0, b1, 0x0040u), prmt(b2, b3, 0x0040u), 0x5410u);
}
