/* hash.c -- SHA-256 (FIPS 180-4) and a fast 64-bit checksum. */
#include "hash.h"

#include <string.h>

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror32(uint32_t x, unsigned r) { return (x >> r) | (x << (32 - r)); }

static void sha256_block(uint32_t st[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3];
    uint32_t e = st[4], f = st[5], g = st[6], h = st[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha256_k[i] + w[i];
        uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    st[0] += a; st[1] += b; st[2] += c; st[3] += d;
    st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

void qjit__sha256_init(qjit__sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->state, iv, sizeof iv);
    s->bytes = 0;
    s->used = 0;
}

void qjit__sha256_update(qjit__sha256 *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->bytes += n;
    if (s->used) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        n -= take;
        if (s->used < 64)
            return;
        sha256_block(s->state, s->block);
        s->used = 0;
    }
    for (; n >= 64; p += 64, n -= 64)
        sha256_block(s->state, p);
    memcpy(s->block, p, n);
    s->used = n;
}

void qjit__sha256_final(qjit__sha256 *s, uint8_t digest[32])
{
    uint64_t bits = s->bytes * 8;
    s->block[s->used++] = 0x80;
    if (s->used > 56) {
        memset(s->block + s->used, 0, 64 - s->used);
        sha256_block(s->state, s->block);
        s->used = 0;
    }
    memset(s->block + s->used, 0, 56 - s->used);
    for (int i = 0; i < 8; i++)
        s->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_block(s->state, s->block);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(s->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(s->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(s->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)s->state[i];
    }
}

void qjit__hex(const uint8_t *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

void qjit__sha256_hex(const void *data, size_t n, char hex[65])
{
    qjit__sha256 s;
    uint8_t d[32];
    qjit__sha256_init(&s);
    qjit__sha256_update(&s, data, n);
    qjit__sha256_final(&s, d);
    qjit__hex(d, 32, hex);
}

/* The 64-bit checksum: four independent lanes of multiply-rotate mixing over
 * 32-byte stripes, so the loop runs at memory speed, then a final avalanche. */
#define H64_P1 0x9E3779B185EBCA87ull
#define H64_P2 0xC2B2AE3D27D4EB4Full
#define H64_P3 0x165667B19E3779F9ull

static uint64_t rol64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static uint64_t load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t lane_mix(uint64_t acc, uint64_t v)
{
    acc += v * H64_P2;
    return rol64(acc, 31) * H64_P1;
}

uint64_t qjit__hash64(const void *data, size_t n, uint64_t seed)
{
    const uint8_t *p = data;
    uint64_t lane[4] = {seed + H64_P1 + H64_P2, seed + H64_P2, seed, seed - H64_P1};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; j++)
            lane[j] = lane_mix(lane[j], load64(p + i + 8 * j));
    uint64_t h = rol64(lane[0], 1) + rol64(lane[1], 7) + rol64(lane[2], 12) + rol64(lane[3], 18);
    h += (uint64_t)n;
    for (; i + 8 <= n; i += 8)
        h = rol64(h ^ lane_mix(0, load64(p + i)), 27) * H64_P1 + H64_P3;
    for (; i < n; i++)
        h = rol64(h ^ (p[i] * H64_P3), 11) * H64_P1;
    h ^= h >> 33;
    h *= H64_P2;
    h ^= h >> 29;
    h *= H64_P3;
    h ^= h >> 32;
    return h;
}
