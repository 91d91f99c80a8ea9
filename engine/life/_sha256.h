/*
 * SHA-256 (FIPS 180-4) for engine/life/_native.c: the stability digests of the boards a
 * planned record lists, hashed while their strip is in cache. The same function as
 * Python's hashlib.sha256 (tests/engine/test_native_strips.py compares them): a portable
 * compression function, and one on the x86 SHA extensions chosen at run time when the
 * CPU has them (the message schedule with sha256msg1/sha256msg2, two rounds per
 * sha256rnds2, as in Intel's "SHA Extensions" paper, 2013).
 */

#include <stdint.h>
#include <string.h>
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h> /* outside any target pragma: each intrinsic carries its own */
#endif

typedef struct {
    uint32_t state[8];
    uint8_t block[64];
    size_t filled; /* bytes in block */
    uint64_t bytes; /* message length so far */
} Sha256;

static const uint32_t SHA256_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define SHA_ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

/* n 64-byte blocks into the state: the portable definition. */
static void sha256_blocks_base(uint32_t st[8], const uint8_t *p, size_t n)
{
    for (; n; n--, p += 64) {
        uint32_t w[64];
        for (int t = 0; t < 16; t++)
            w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8
                   | (uint32_t)p[4 * t + 3];
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = SHA_ROR(w[t - 15], 7) ^ SHA_ROR(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = SHA_ROR(w[t - 2], 17) ^ SHA_ROR(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
        for (int t = 0; t < 64; t++) {
            uint32_t t1 = h + (SHA_ROR(e, 6) ^ SHA_ROR(e, 11) ^ SHA_ROR(e, 25)) + ((e & f) ^ (~e & g))
                          + SHA256_K[t] + w[t];
            uint32_t t2 = (SHA_ROR(a, 2) ^ SHA_ROR(a, 13) ^ SHA_ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        st[0] += a;
        st[1] += b;
        st[2] += c;
        st[3] += d;
        st[4] += e;
        st[5] += f;
        st[6] += g;
        st[7] += h;
    }
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define HAVE_SHA_NI 1
#pragma GCC push_options
#pragma GCC target("sha,sse4.1")

/* n 64-byte blocks into the state on the SHA extensions. */
static void sha256_blocks_ni(uint32_t st[8], const uint8_t *p, size_t n)
{
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&st[0]), 0xB1); /* CDAB */
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&st[4]), 0x1B);  /* EFGH */
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);                                         /* ABEF */
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);                                              /* CDGH */
    for (; n; n--, p += 64) {
        const __m128i abef = s0, cdgh = s1;
        __m128i w[4];
        for (int i = 0; i < 16; i++) {
            __m128i m;
            if (i < 4) {
                m = w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
            } else {
                /* W[t-16] + s0(W[t-15]) + W[t-7], then + s1(W[t-2]) */
                __m128i t = _mm_sha256msg1_epu32(w[(i - 4) & 3], w[(i - 3) & 3]);
                t = _mm_add_epi32(t, _mm_alignr_epi8(w[(i - 1) & 3], w[(i - 2) & 3], 4));
                m = w[i & 3] = _mm_sha256msg2_epu32(t, w[(i - 1) & 3]);
            }
            m = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&SHA256_K[4 * i]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, m);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    tmp = _mm_shuffle_epi32(s0, 0x1B);     /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);      /* DCHG */
    s0 = _mm_blend_epi16(tmp, s1, 0xF0);   /* DCBA */
    s1 = _mm_alignr_epi8(s1, tmp, 8);      /* HGFE */
    _mm_storeu_si128((__m128i *)&st[0], s0);
    _mm_storeu_si128((__m128i *)&st[4], s1);
}
#pragma GCC pop_options
#endif

/* The compression function this CPU runs (sha256_choose). */
static void (*sha256_blocks)(uint32_t st[8], const uint8_t *p, size_t n) = sha256_blocks_base;

static void sha256_choose(void)
{
#ifdef HAVE_SHA_NI
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1"))
        sha256_blocks = sha256_blocks_ni;
#endif
}

static void sha256_init(Sha256 *c)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->state, iv, sizeof iv);
    c->filled = 0;
    c->bytes = 0;
}

static void sha256_update(Sha256 *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    c->bytes += len;
    if (c->filled) {
        size_t take = 64 - c->filled < len ? 64 - c->filled : len;
        memcpy(c->block + c->filled, p, take);
        c->filled += take;
        p += take;
        len -= take;
        if (c->filled < 64)
            return;
        sha256_blocks(c->state, c->block, 1);
        c->filled = 0;
    }
    if (len >= 64) {
        sha256_blocks(c->state, p, len / 64);
        p += len & ~(size_t)63;
        len &= 63;
    }
    memcpy(c->block, p, len);
    c->filled = len;
}

static void sha256_final(Sha256 *c, uint8_t out[32])
{
    uint64_t bits = c->bytes * 8;
    uint8_t pad[72] = {0x80};
    size_t n = (c->filled < 56 ? 56 : 120) - c->filled;
    for (int i = 0; i < 8; i++)
        pad[n + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(c, pad, n + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(c->state[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->state[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->state[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->state[i];
    }
}
