/* fp16.h -- IEEE binary16 <-> binary32, round to nearest even (exact both ways
 * where representable; NaN and Inf preserved), done on the bits so the result
 * does not depend on the host's rounding mode or on F16C. */
#ifndef QJIT_FP16_H
#define QJIT_FP16_H

#include <stdint.h>

float qjit__half_to_float(uint16_t h);
uint16_t qjit__float_to_half(float f);

#endif
