/* hash.h -- SHA-256 for keys and cache checksums (collision resistance
 * matters: a key names a binary that will run on the GPU), and a fast 64-bit
 * checksum for large packed-weight buffers (integrity, not security). */
#ifndef QJIT_HASH_H
#define QJIT_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct qjit__sha256 {
    uint32_t state[8];
    uint64_t bytes;
    uint8_t block[64];
    size_t used;
} qjit__sha256;

void qjit__sha256_init(qjit__sha256 *s);
void qjit__sha256_update(qjit__sha256 *s, const void *data, size_t n);
void qjit__sha256_final(qjit__sha256 *s, uint8_t digest[32]);
/* One-shot digest as 64 lowercase hex digits plus NUL. */
void qjit__sha256_hex(const void *data, size_t n, char hex[65]);
void qjit__hex(const uint8_t *bytes, size_t n, char *out); /* 2n digits + NUL */

/* Fast 64-bit checksum (several GB/s); equal input gives equal output on
 * every platform (little-endian reads). */
uint64_t qjit__hash64(const void *data, size_t n, uint64_t seed);

#endif
