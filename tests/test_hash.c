/* test_hash.c -- SHA-256 against FIPS 180-4 / NIST vectors and an
 * independent implementation (Python's hashlib, for the padding boundaries),
 * incremental hashing, and the 64-bit checksum's determinism and
 * sensitivity. */
#define _GNU_SOURCE
#include "harness.h"
#include "hash.h"

#include <stdlib.h>
#include <string.h>

static void sha_hex_of(const void *data, size_t n, char hex[65])
{
    qjit__sha256_hex(data, n, hex);
}

START_TEST(sha256_abc)
{
    char hex[65];
    sha_hex_of("abc", 3, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

START_TEST(sha256_empty)
{
    char hex[65];
    sha_hex_of("", 0, hex);
    ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

START_TEST(sha256_two_blocks)
{
    /* 448 bits: the padding spills into a second block. */
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    char hex[65];
    sha_hex_of(m, strlen(m), hex);
    ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* 896 bits. */
    const char *m2 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                     "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    sha_hex_of(m2, strlen(m2), hex);
    ck_assert_str_eq(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}
END_TEST

START_TEST(sha256_million_a)
{
    size_t n = 1000000;
    char *a = malloc(n);
    ck_assert_ptr_nonnull(a);
    memset(a, 'a', n);
    char hex[65];
    sha_hex_of(a, n, hex);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    /* The same through the incremental interface, 1000 bytes at a time. */
    qjit__sha256 s;
    uint8_t d[32];
    qjit__sha256_init(&s);
    for (size_t i = 0; i < n; i += 1000)
        qjit__sha256_update(&s, a + i, 1000);
    qjit__sha256_final(&s, d);
    qjit__hex(d, 32, hex);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}
END_TEST

/* Lengths around the padding boundaries (55/56 bytes: the length field just
 * fits or not; 64: exactly one block), from Python's hashlib. */
START_TEST(sha256_padding_boundaries)
{
    static const struct { size_t n; const char *hex; } v[] = {
        {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
        {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
        {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
        {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
        {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
    };
    char a[128], hex[65];
    memset(a, 'a', sizeof a);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        sha_hex_of(a, v[i].n, hex);
        ck_assert_msg(strcmp(hex, v[i].hex) == 0, "length %zu: got %s, want %s", v[i].n, hex, v[i].hex);
    }
    /* All byte values, 1024 bytes. */
    uint8_t b[1024];
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (uint8_t)i;
    sha_hex_of(b, sizeof b, hex);
    ck_assert_str_eq(hex, "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9");
}
END_TEST

START_TEST(sha256_incremental_matches_one_shot)
{
    qt_rng r = qt_rng_make(11);
    uint8_t *buf = malloc(5000);
    ck_assert_ptr_nonnull(buf);
    for (int trial = 0; trial < 300; trial++) {
        size_t n = trial < 200 ? (size_t)trial : (size_t)(qt_next(&r) % 5000);
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)qt_next(&r);
        char one[65], inc[65];
        sha_hex_of(buf, n, one);

        /* Odd-sized pieces, including empty ones and ones that straddle
         * block boundaries. */
        qjit__sha256 s;
        uint8_t d[32];
        qjit__sha256_init(&s);
        size_t off = 0;
        while (off < n) {
            size_t piece = (size_t)(qt_next(&r) % 130);
            if (piece > n - off)
                piece = n - off;
            qjit__sha256_update(&s, buf + off, piece);
            off += piece;
        }
        qjit__sha256_update(&s, buf, 0);
        qjit__sha256_final(&s, d);
        qjit__hex(d, 32, inc);
        ck_assert_msg(strcmp(one, inc) == 0, "length %zu: one-shot %s, incremental %s", n, one, inc);
    }
    free(buf);
}
END_TEST

START_TEST(hex_digits)
{
    const uint8_t b[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    char out[13];
    memset(out, 'x', sizeof out);
    qjit__hex(b, sizeof b, out);
    ck_assert_str_eq(out, "00017f80abff");
    qjit__hex(b, 0, out);
    ck_assert_str_eq(out, "");
}
END_TEST

/* Pinned outputs of the current implementation: packed-weight buffers store
 * this checksum on disk, so any change to it must be deliberate. */
START_TEST(hash64_pinned_values)
{
    uint8_t b[100];
    for (int i = 0; i < 100; i++)
        b[i] = (uint8_t)i;
    ck_assert_uint_eq(qjit__hash64("", 0, 0), 0x9090306c6e91ed59ull);
    ck_assert_uint_eq(qjit__hash64("abc", 3, 0), 0x500112eedae253a9ull);
    ck_assert_uint_eq(qjit__hash64(b, 100, 0), 0x54ca5ab39553be2full);
    ck_assert_uint_eq(qjit__hash64(b, 100, 0x123456789abcdefull), 0x69e5ac902f878b6eull);
    ck_assert_uint_eq(qjit__hash64(b, 31, 7), 0xd12d69b7fdd84a1bull);
    ck_assert_uint_eq(qjit__hash64(b, 32, 7), 0x49c988f0e034e76bull);
}
END_TEST

START_TEST(hash64_deterministic)
{
    qt_rng r = qt_rng_make(21);
    uint8_t *a = malloc(4096 + 8), *b = malloc(4096 + 8);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    for (int trial = 0; trial < 200; trial++) {
        size_t n = (size_t)(qt_next(&r) % 4096);
        uint64_t seed = qt_next(&r);
        size_t shift = (size_t)(qt_next(&r) % 8);     /* a copy at another alignment */
        for (size_t i = 0; i < n; i++)
            a[i] = (uint8_t)qt_next(&r);
        memcpy(b + shift, a, n);
        uint64_t h1 = qjit__hash64(a, n, seed);
        ck_assert_uint_eq(h1, qjit__hash64(a, n, seed));
        ck_assert_uint_eq(h1, qjit__hash64(b + shift, n, seed));
    }
    free(a);
    free(b);
}
END_TEST

START_TEST(hash64_seed_and_length_sensitive)
{
    qt_rng r = qt_rng_make(31);
    uint8_t buf[1000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)qt_next(&r);
    for (int trial = 0; trial < 500; trial++) {
        size_t n = (size_t)(qt_next(&r) % sizeof buf);
        uint64_t s1 = qt_next(&r), s2 = s1 ^ (1ull << (qt_next(&r) % 64));
        ck_assert_uint_ne(qjit__hash64(buf, n, s1), qjit__hash64(buf, n, s2));
        if (n > 0)              /* a prefix hashes differently */
            ck_assert_uint_ne(qjit__hash64(buf, n, s1), qjit__hash64(buf, n - 1, s1));
    }
    /* All-zero buffers of different lengths differ too. */
    uint8_t zero[64] = {0};
    for (size_t n = 1; n < sizeof zero; n++)
        ck_assert_uint_ne(qjit__hash64(zero, n, 0), qjit__hash64(zero, n - 1, 0));
}
END_TEST

START_TEST(hash64_bit_flip_sensitive)
{
    qt_rng r = qt_rng_make(41);
    uint8_t *buf = malloc(3000);
    ck_assert_ptr_nonnull(buf);
    double changed_bits = 0;
    int flips = 0;
    for (int trial = 0; trial < 100; trial++) {
        size_t n = 1 + (size_t)(qt_next(&r) % 3000);
        uint64_t seed = qt_next(&r);
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)qt_next(&r);
        uint64_t h = qjit__hash64(buf, n, seed);
        for (int k = 0; k < 20; k++) {
            size_t bit = (size_t)(qt_next(&r) % (n * 8));
            buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            uint64_t h2 = qjit__hash64(buf, n, seed);
            buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            ck_assert_msg(h2 != h, "flipping bit %zu of %zu bytes left the checksum unchanged", bit, n);
            changed_bits += __builtin_popcountll(h ^ h2);
            flips++;
        }
        ck_assert_uint_eq(qjit__hash64(buf, n, seed), h);   /* restored */
    }
    /* Avalanche: about half of the 64 output bits change on average. */
    double mean = changed_bits / flips;
    ck_assert_msg(mean > 28.0 && mean < 36.0, "mean changed bits %.2f, want about 32", mean);
    free(buf);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("hash");
    TCase *sha = tcase_create("sha256");
    tcase_add_test(sha, sha256_abc);
    tcase_add_test(sha, sha256_empty);
    tcase_add_test(sha, sha256_two_blocks);
    tcase_add_test(sha, sha256_million_a);
    tcase_add_test(sha, sha256_padding_boundaries);
    tcase_add_test(sha, sha256_incremental_matches_one_shot);
    tcase_add_test(sha, hex_digits);
    tcase_set_timeout(sha, 30);
    qt_add(s, sha, 0);

    TCase *h64 = tcase_create("hash64");
    tcase_add_test(h64, hash64_pinned_values);
    tcase_add_test(h64, hash64_deterministic);
    tcase_add_test(h64, hash64_seed_and_length_sensitive);
    tcase_add_test(h64, hash64_bit_flip_sensitive);
    tcase_set_timeout(h64, 30);
    qt_add(s, h64, 0);
    return s;
}
