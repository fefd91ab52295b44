/* fp16.c -- IEEE 754 binary16 and bfloat16 <-> binary32 conversions, done on
 * the bits so the result does not depend on the host's rounding mode or on
 * F16C; also public (qjit_half_from_float, ...). */
#include "fp16.h"
#include "qjit.h"

#include <string.h>

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Every binary16 value is exactly representable in binary32, so this direction
 * never rounds. NaN payloads move to the top of the binary32 mantissa, which
 * makes the round trip half -> float -> half the identity on all 65536 bit
 * patterns. */
float qjit__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1Fu;
    uint32_t mantissa = h & 0x3FFu;

    if (exponent == 0x1F)                        /* Inf or NaN */
        return bits_float(sign | 0x7F800000u | (mantissa << 13));
    if (exponent != 0)                           /* normal: rebias 15 -> 127 */
        return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
    if (mantissa == 0)                           /* signed zero */
        return bits_float(sign);

    /* Subnormal half, mantissa * 2^-24: shift the leading one up to the
     * implicit bit, lowering the exponent by one per step. */
    uint32_t float_exponent = 113;               /* 127 - 15 + 1 */
    while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        float_exponent--;
    }
    mantissa &= 0x3FFu;
    return bits_float(sign | (float_exponent << 23) | (mantissa << 13));
}

/* Rounds to nearest, ties to even, on the integer bits: the dropped bits are
 * compared against one half of the last kept place (plus the kept place's
 * parity, which turns exact ties toward the even neighbour). A carry out of
 * the mantissa correctly bumps the exponent, up to Inf. */
uint16_t qjit__float_to_half(float f)
{
    uint32_t x = float_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7FFFFFFFu;

    if (ax > 0x7F800000u) {                      /* NaN: keep the payload, stay NaN */
        uint32_t payload = (ax >> 13) & 0x3FFu;
        if (payload == 0)
            payload = 0x200u;                    /* payload lived only in dropped bits */
        return (uint16_t)(sign | 0x7C00u | payload);
    }
    if (ax >= 0x477FF000u)                       /* >= 65520 (or Inf): rounds to Inf */
        return (uint16_t)(sign | 0x7C00u);
    if (ax >= 0x38800000u) {                     /* >= 2^-14: normal half */
        uint32_t odd = (ax >> 13) & 1u;
        ax += 0x0FFFu + odd;
        ax -= 0x38000000u;                       /* rebias 127 -> 15 */
        return (uint16_t)(sign | (ax >> 13));
    }
    if (ax <= 0x33000000u)                       /* <= 2^-25: ties to even zero */
        return sign;

    /* Subnormal half: value = m * 2^(e - 150), half units are 2^-24, so the
     * result is m >> (126 - e), rounded. The shift is 14..24. */
    uint32_t e = ax >> 23;
    uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - e;
    uint32_t kept = m >> shift;
    uint32_t dropped = m & ((1u << shift) - 1u);
    uint32_t half_place = 1u << (shift - 1);
    if (dropped > half_place || (dropped == half_place && (kept & 1u)))
        kept++;                                  /* 0x400 here is the smallest normal */
    return (uint16_t)(sign | kept);
}

/* bfloat16 is binary32's top half: widening is exact. */
float qjit__bf16_to_float(uint16_t b)
{
    return bits_float((uint32_t)b << 16);
}

/* Round to nearest even on the dropped half; NaN stays NaN (quiet). */
uint16_t qjit__float_to_bf16(float f)
{
    uint32_t u = float_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* The public face of the four conversions (qjit.h). */
uint16_t qjit_half_from_float(float f) { return qjit__float_to_half(f); }
uint16_t qjit_bf16_from_float(float f) { return qjit__float_to_bf16(f); }
float qjit_float_from_half(uint16_t h) { return qjit__half_to_float(h); }
float qjit_float_from_bf16(uint16_t b) { return qjit__bf16_to_float(b); }

float qjit__dtype_load(const void *base, int dtype, size_t i)
{
    if (dtype == QJIT_DTYPE_F32)
        return ((const float *)base)[i];
    uint16_t h = ((const uint16_t *)base)[i];
    return dtype == QJIT_DTYPE_BF16 ? qjit__bf16_to_float(h) : qjit__half_to_float(h);
}

int qjit__dtype_known(int dtype)
{
    return dtype == QJIT_DTYPE_F16 || dtype == QJIT_DTYPE_F32 || dtype == QJIT_DTYPE_BF16;
}
