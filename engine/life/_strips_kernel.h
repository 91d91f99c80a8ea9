/*
 * The kernel of engine/life/_native.c, included once per instruction set: K(name) names
 * this copy's functions and POPCOUNT its population count (_native.c defines both, and
 * the Geo struct, before each inclusion). Nothing here is used on its own.
 */

/* Row sums of one row of a plane: s0 = L ^ X ^ R, s1 = carry of L + X + R, m1 = L & R. */
static inline void K(row_sums)(const u64 *restrict row, int nw, u64 *restrict s0,
                               u64 *restrict s1, u64 *restrict m1)
{
    for (int q = 0; q < nw; q++) {
        u64 x = row[q];
        u64 l = (x << 1) | (row[q - 1] >> 63);
        u64 r = (x >> 1) | (row[q + 1] << 63);
        u64 lr = l ^ r;
        s0[q] = lr ^ x;
        s1[q] = (l & r) | (lr & x);
        if (m1)
            m1[q] = l & r;
    }
}

/* Bit 1 of a 3 x 3 count, and its parity, from three rows' sums (the count <= 3 where
 * it matters: a newborn has exactly three parents). */
static inline u64 K(count_bit1)(u64 a0, u64 a1, u64 b0, u64 b1, u64 c0, u64 c1)
{
    u64 v = a0 ^ b0;
    u64 g = (a0 & b0) | (v & c0);
    return g ^ a1 ^ b1 ^ c1;
}


/* cc[q] += the live cells of w[q], for q < nw. */
static inline void K(count_row)(const u64 *restrict w, u64 *restrict cc, int nw)
{
    int q = 0;
#ifdef STRIPS_AVX2
    /* 4 words at a time: each byte's count from a nibble table (vpshufb), the bytes of
     * each word summed (vpsadbw) */
    const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                           0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i low = _mm256_set1_epi8(0x0F), zero = _mm256_setzero_si256();
    for (; q + 4 <= nw; q += 4) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(w + q));
        __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low));
        __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
        __m256i n = _mm256_sad_epu8(_mm256_add_epi8(lo, hi), zero);
        __m256i c = _mm256_loadu_si256((const __m256i *)(cc + q));
        _mm256_storeu_si256((__m256i *)(cc + q), _mm256_add_epi64(c, n));
    }
#endif
    for (; q < nw; q++)
        cc[q] += POPCOUNT(w[q]);
}

/* Guard bits, row r (1-based) of the boards to digest, then (when measuring) the column
 * measures of the row. */
static inline void K(finish_row)(const Geo *g, u64 **out, int r)
{
    const int m = g->m, nwb = g->nwb, P = g->planes, nw = m * nwb;
    for (int p = 0; p < P; p++) {
        u64 *row = out[p];
        for (int j = 0; j < m; j++)
            row[j * nwb + nwb - 1] &= g->last_mask;
    }
    const int dnw = g->dnw;
    const size_t plane = (size_t)g->h * dnw;
    for (int i = 0; i < g->ndig; i++) {  /* the boards to digest: see finish_digests */
        const int at = g->dig_j[i] * nwb;
        sha256_update(&g->dig_ctx[i], out[0] + at, sizeof(u64) * dnw);
        u64 *rows = g->dig_rows + (size_t)i * (P - 1) * plane + (size_t)(r - 1) * dnw;
        if (P == 2) {
            memcpy(rows, out[1] + at, sizeof(u64) * dnw);
        } else {  /* canonical planes: colour 2 or 4, colour 3 or 4 (4: alive and none) */
            for (int q = 0; q < dnw; q++) {
                u64 c1 = out[1][at + q], c2 = out[2][at + q], c3 = out[3][at + q];
                u64 c4 = out[0][at + q] & ~(c1 | c2 | c3);
                rows[q] = c2 | c4;
                rows[plane + q] = c3 | c4;
            }
        }
    }
    if (!g->measure)
        return;
    const u64 *keys = g->word_keys + (size_t)(r - 1) * nw;
    for (int p = 0; p < P; p++) {
        const u64 *w = out[p];
        u64 *cc = g->ccount + (size_t)p * nw, *cs = g->csum + (size_t)p * nw;
        if (p == 0)
            for (int q = 0; q < nw; q++)
                cs[q] += w[q] ^ keys[q];
        else
            for (int q = 0; q < nw; q++)
                cs[q] += w[q];
        K(count_row)(w, cc, nw);
    }
}

/* The measures of strip k's slots from its column measures (then cleared). */
static inline void K(finish_strip)(const Geo *g, int k)
{
    const int m = g->m, nwb = g->nwb, P = g->planes, nw = m * nwb;
    if (!g->measure)
        return;
    for (int j = 0; j < m; j++) {
        size_t slot = (size_t)k * m + j;
        u64 fp = 0;
        for (int p = 0; p < P; p++) {
            const u64 *cc = g->ccount + (size_t)p * nw + j * nwb;
            const u64 *cs = g->csum + (size_t)p * nw + j * nwb;
            const u64 *ck = g->column_keys + (size_t)p * nwb;
            u64 c = 0;
            for (int q = 0; q < nwb; q++) {
                c += cc[q];
                fp += cs[q] * ck[q];
            }
            g->counts[slot * P + p] = (int64_t)c;
        }
        g->fps[slot] = fp;
    }
    memset(g->ccount, 0, sizeof(u64) * (size_t)P * nw);
    memset(g->csum, 0, sizeof(u64) * (size_t)P * nw);
}

/* The new row of both planes (alive Y, colour Z) from the old row (x, bx) and the row
 * sums of the rows above (u), at (m) and below (d): alive s0, s1 (m1 at the row),
 * colour t0, t1. Y and Z are buffers nothing else here points into. */
static inline void K(row_two)(int nw, const u64 *restrict x, const u64 *restrict bx,
                              const u64 *restrict us0, const u64 *restrict us1,
                              const u64 *restrict ms0, const u64 *restrict mm1,
                              const u64 *restrict ds0, const u64 *restrict ds1,
                              const u64 *restrict ut0, const u64 *restrict ut1,
                              const u64 *restrict mt0, const u64 *restrict mt1,
                              const u64 *restrict dt0, const u64 *restrict dt1,
                              u64 *restrict Y, u64 *restrict Z)
{
    for (int q = 0; q < nw; q++) {
        u64 xx = x[q];
        u64 a = us0[q], b = ds0[q], c = ms0[q] ^ xx; /* weight 1: S[up]0, S[down]0, M0 */
        u64 d = us1[q], e = ds1[q], f = mm1[q];     /* weight 2 */
        u64 ab = a ^ b;
        u64 n0 = ab ^ c;
        u64 kc = (a & b) | (ab & c); /* carry */
        u64 de = d ^ e, fk = f ^ kc;
        u64 par = de ^ fk;
        u64 pair = (d & e) | (f & kc) | (de & fk);
        u64 alive = (n0 | xx) & par & ~pair;
        u64 g1 = K(count_bit1)(ut0[q], ut1[q], mt0[q], mt1[q], dt0[q], dt1[q]);
        Y[q] = alive;
        Z[q] = ((g1 & ~xx) | bx[q]) & alive;
    }
}

/* One generation of strip k of two planes: alive, and colour b of colours a < b. Each new
 * row is made in a row buffer, measured there, then written over dst's row (dst may be
 * src: a row's old words are read only before it is written, and the rows around it
 * only through the row sums already taken of them). */
static void K(strip_two)(const Geo *g, const u64 *const *src, u64 *const *dst, int k, u64 *buf)
{
    const int nw = g->m * g->nwb, h = g->h;
    const ptrdiff_t s = g->s;
    /* three rows of sums, rotating: alive s0, s1, m1; colour t0, t1; then the new rows */
    u64 *S0[3], *S1[3], *M1[3], *T0[3], *T1[3];
    for (int i = 0; i < 3; i++) {
        S0[i] = buf + (size_t)(5 * i + 0) * nw;
        S1[i] = buf + (size_t)(5 * i + 1) * nw;
        M1[i] = buf + (size_t)(5 * i + 2) * nw;
        T0[i] = buf + (size_t)(5 * i + 3) * nw;
        T1[i] = buf + (size_t)(5 * i + 4) * nw;
    }
    u64 *Y = buf + (size_t)15 * nw, *Z = buf + (size_t)16 * nw;
    const size_t base = 1 + (size_t)k * (h + 2) * s + 1; /* word 1 of the strip's row 0 */
    const u64 *A = src[0] + base, *B = src[1] + base;
    /* row 0 is a ghost row (zeros); row 1's sums are taken before the loop */
    memset(S0[0], 0, nw * sizeof(u64));
    memset(S1[0], 0, nw * sizeof(u64));
    memset(M1[0], 0, nw * sizeof(u64));
    memset(T0[0], 0, nw * sizeof(u64));
    memset(T1[0], 0, nw * sizeof(u64));
    K(row_sums)(A + s, nw, S0[1], S1[1], M1[1]);
    K(row_sums)(B + s, nw, T0[1], T1[1], NULL);
    u64 *out[4] = {Y, Z, NULL, NULL}; /* (four: finish_row reads planes up to P) */
    for (int r = 1; r <= h; r++) {
        int up = (r - 1) % 3, mid = r % 3, dn = (r + 1) % 3;
        /* the row below (row h + 1 is a ghost row of zeros) */
        K(row_sums)(A + (r + 1) * s, nw, S0[dn], S1[dn], M1[dn]);
        K(row_sums)(B + (r + 1) * s, nw, T0[dn], T1[dn], NULL);
        K(row_two)(nw, A + r * s, B + r * s, S0[up], S1[up], S0[mid], M1[mid], S0[dn], S1[dn],
                   T0[up], T1[up], T0[mid], T1[mid], T0[dn], T1[dn], Y, Z);
        K(finish_row)(g, out, r);
        memcpy(dst[0] + base + r * s, Y, nw * sizeof(u64));
        memcpy(dst[1] + base + r * s, Z, nw * sizeof(u64));
    }
    K(finish_strip)(g, k);
}

/* One generation of strip k of four planes: alive and colours 1, 2, 3 (colour 4 the
 * live cells of none of them); new rows as in strip_two (dst may be src). */
static void K(strip_four)(const Geo *g, const u64 *const *src, u64 *const *dst, int k, u64 *buf)
{
    const int nw = g->m * g->nwb, h = g->h;
    const ptrdiff_t s = g->s;
    /* three rows of sums per plane: alive s0, s1, m1; colour c: t0, t1 */
    u64 *R[3][9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 9; j++)
            R[i][j] = buf + (size_t)(9 * i + j) * nw;
    u64 *out[4];
    for (int p = 0; p < 4; p++)
        out[p] = buf + (size_t)(27 + p) * nw; /* the new rows, written over dst's after */
    const size_t base = 1 + (size_t)k * (h + 2) * s + 1;
    const u64 *P[4];
    for (int p = 0; p < 4; p++)
        P[p] = src[p] + base;
    for (int j = 0; j < 9; j++)
        memset(R[0][j], 0, nw * sizeof(u64));
    K(row_sums)(P[0] + s, nw, R[1][0], R[1][1], R[1][2]);
    for (int c = 0; c < 3; c++)
        K(row_sums)(P[1 + c] + s, nw, R[1][3 + 2 * c], R[1][4 + 2 * c], NULL);
    for (int r = 1; r <= h; r++) {
        int up = (r - 1) % 3, mid = r % 3, dn = (r + 1) % 3;
        K(row_sums)(P[0] + (r + 1) * s, nw, R[dn][0], R[dn][1], R[dn][2]);
        for (int c = 0; c < 3; c++)
            K(row_sums)(P[1 + c] + (r + 1) * s, nw, R[dn][3 + 2 * c], R[dn][4 + 2 * c], NULL);
        const u64 *x = P[0] + r * s;
        u64 *y = out[0];
        for (int q = 0; q < nw; q++) {
            u64 xx = x[q];
            u64 a = R[up][0][q], b = R[dn][0][q], c = R[mid][0][q] ^ xx;
            u64 d = R[up][1][q], e = R[dn][1][q], f = R[mid][2][q];
            u64 ab = a ^ b;
            u64 n0 = ab ^ c;
            u64 kc = (a & b) | (ab & c);
            u64 de = d ^ e, fk = f ^ kc;
            u64 par = de ^ fk;
            u64 pair = (d & e) | (f & kc) | (de & fk);
            u64 alive = (n0 | xx) & par & ~pair;
            y[q] = alive;
            u64 born = alive & ~xx;
            u64 gs[3], ps[3];
            for (int cc = 0; cc < 3; cc++) {
                u64 u0 = R[up][3 + 2 * cc][q], u1 = R[up][4 + 2 * cc][q];
                u64 m0 = R[mid][3 + 2 * cc][q], m1 = R[mid][4 + 2 * cc][q];
                u64 d0 = R[dn][3 + 2 * cc][q], d1 = R[dn][4 + 2 * cc][q];
                gs[cc] = K(count_bit1)(u0, u1, m0, m1, d0, d1);
                ps[cc] = u0 ^ m0 ^ d0;
            }
            u64 all3 = ps[0] & ps[1] & ps[2];
            for (int cc = 0; cc < 3; cc++) {
                int i = (cc + 1) % 3, j = (cc + 2) % 3;
                u64 t = ((ps[i] & ps[j]) ^ all3) | gs[cc];
                out[1 + cc][q] = (P[1 + cc][r * s + q] & alive) | (t & born);
            }
        }
        K(finish_row)(g, out, r);
        for (int p = 0; p < 4; p++)
            memcpy(dst[p] + base + r * s, out[p], nw * sizeof(u64));
    }
    K(finish_strip)(g, k);
}
