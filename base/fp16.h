/* fp16.h -- IEEE binary16 and bfloat16 <-> binary32, round to nearest even
 * (exact both ways where representable; NaN and Inf preserved), done on the
 * bits so the result does not depend on the host's rounding mode or on F16C. */
#ifndef QJIT_FP16_H
#define QJIT_FP16_H

#include <stddef.h>
#include <stdint.h>

float qjit__half_to_float(uint16_t h);
uint16_t qjit__float_to_half(float f);
float qjit__bf16_to_float(uint16_t b);
uint16_t qjit__float_to_bf16(float f);

/* Element i of an array of qjit_dtype dtype (QJIT_DTYPE_F32, _F16, _BF16;
 * checked by the caller) as a float. */
float qjit__dtype_load(const void *base, int dtype, size_t i);
/* Whether dtype is one of those. */
int qjit__dtype_known(int dtype);

#endif
