/* bytes.h -- little-endian fields of stored buffers, the same on every host. */
#ifndef QJIT_BYTES_H
#define QJIT_BYTES_H

#include <stdint.h>
#include <string.h>

static inline void qjit__store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void qjit__store_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t qjit__load_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t qjit__load_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline void qjit__store_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    qjit__store_u32(p, u);
}

static inline float qjit__load_f32(const uint8_t *p)
{
    uint32_t u = qjit__load_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
