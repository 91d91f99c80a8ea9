/*
 * The Life engine's native helpers (engine.life._native): one Life generation of a slot
 * pool's strips with the pool's measures (the native kernel of engine/life/slots.py; the
 * numpy circuits of engine/life/bitplan.py are the same rule and the fallback where this
 * module is not built), a slot's cells, and a board's view text (board_rle, the codec's
 * encode_board). Everything here has a Python equivalent it is tested against.
 *
 * Rule (the Life seed's): B3/S23 on the Moore neighbourhood, every colour counts as a
 * neighbour; a survivor keeps its colour; a newborn takes the colour held by at least 2
 * of its 3 parents, and when all 3 differ (four colours) the colour of 1..4 absent
 * among them (the QuadLife rule). engine/life/reference.py is the plain definition.
 *
 * Layout (engine/life/layouts.py, Plain, as engine/life/slots.py's Strips): a plane of
 * n strips is one flat uint64 buffer of n (h + 2) rows of s = m nwb + 2 words plus one
 * spare word at each end; word q of row r is element 1 + r s + q. Row 0 and row h + 1
 * of each strip are ghost rows and words 0 and s - 1 of each row ghost words, all 0
 * (hard edges): they are read, never written. Column c of a row is bit c % 64 of word
 * 1 + c / 64. Slot j of a strip is words 1 + j nwb .. (j + 1) nwb of each row; the bits
 * of its last word past its last column (the guard band) are cleared after every
 * generation (last_mask), so a slot's cells see dead cells beyond its edge.
 *
 * Circuits, per 64 cells (bit-sliced; the same as engine/life/bitplan.py): the row sums
 * S = L + X + R (s0, s1) and M = L + R (m0 = s0 ^ X, m1) of each row are kept for three
 * rows; n = S[up] + M + S[down]: its bit 0 and the carry out of it from a full adder of
 * the three low bits, and n is 2 or 3 exactly when one of the three high bits and that
 * carry is set; next = (n0 | X) & that. A colour plane's 3 x 3 count has bit 1 set
 * exactly when the colour holds >= 2 of a newborn's 3 parents; its parity is needed only
 * for the absent colour of four.
 *
 * Measures of every slot of the new planes, while their rows are in cache: live cells
 * per plane, and a 64-bit fingerprint sum over planes, rows and words w of the slot of
 * word' * column_key[p][w] (mod 2**64), where word' is the alive plane's word XOR
 * word_key[row][w] and a colour plane's word as it is (SlotPool.fingerprint).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;

#include "_sha256.h"

typedef struct {
    int n, h, m, nwb, planes;
    ptrdiff_t s;
    u64 last_mask;
    const u64 *word_keys;   /* (h, m nwb): the slot's word keys, tiled along the strip */
    const u64 *column_keys; /* (planes, nwb) */
    int64_t *counts;        /* (n m, planes) */
    u64 *fps;               /* (n m) */
    u64 *ccount;            /* (planes, m nwb): live cells down each word column of a strip */
    u64 *csum;              /* (planes, m nwb): sums down each word column (alive: keyed) */
    int measure;            /* 0: the generation alone (no counts, no fingerprints) */
    int dnw;                /* words of a row a digest reads: ceil(w / 64) */
    int ndig;               /* slots of the strip being computed to digest: */
    int *dig_j;             /*   their places in the strip (m at most) */
    Sha256 *dig_ctx;        /*   their digests so far (the alive plane, row by row) */
    u64 *dig_rows;          /*   their other canonical planes' rows: (m, P - 1, h, dnw) */
} Geo;

/* A portable population count (SWAR) for the baseline copy: x86-64's baseline has no
 * POPCNT instruction, and gcc's builtin would call libgcc per word. */
static inline u64 popcount_swar(u64 x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (x * 0x0101010101010101ULL) >> 56;
}

/* The baseline copy: any CPU this compiler targets. */
#define K(name) name##_base
#define POPCOUNT(x) popcount_swar(x)
#include "_strips_kernel.h"
#undef K
#undef POPCOUNT

/* An AVX2 + POPCNT copy on x86-64 (gcc, clang), chosen at run time when the CPU has
 * both. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define HAVE_AVX2_COPY 1
#pragma GCC push_options
#pragma GCC target("avx2,popcnt")
#define K(name) name##_avx2
#define POPCOUNT(x) ((u64)__builtin_popcountll(x))
#define STRIPS_AVX2 1
#include "_strips_kernel.h"
#undef STRIPS_AVX2
#undef K
#undef POPCOUNT
#pragma GCC pop_options
#endif

typedef void (*strip_fn)(const Geo *, const u64 *const *, u64 *const *, int, u64 *);

/* The copies this CPU can run, best last, and the one it runs (the best, unless
 * use_instruction_set chose another). */
typedef struct {
    const char *name;
    strip_fn two, four;
} Copy;

static Copy copies[2] = {{"baseline", strip_two_base, strip_four_base}};
static int n_copies = 1;
static const Copy *current = &copies[0];

static void choose_copy(void)
{
#ifdef HAVE_AVX2_COPY
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) {
        copies[n_copies++] = (Copy){"avx2", strip_two_avx2, strip_four_avx2};
    }
#endif
    current = &copies[n_copies - 1];
}

PyDoc_STRVAR(use_instruction_set_doc,
"use_instruction_set(name) -> None\n\n"
"Run the kernel copy ``name`` from now on: one of INSTRUCTION_SETS (the copies this CPU\n"
"can run, best last; the best is chosen at import). For tests and benchmarks, which\n"
"compare the copies. Raises ValueError for a copy this CPU cannot run.");

static PyObject *use_instruction_set(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (name == NULL)
        return NULL;
    for (int i = 0; i < n_copies; i++) {
        if (strcmp(copies[i].name, name) == 0) {
            current = &copies[i];
            Py_RETURN_NONE;
        }
    }
    PyErr_Format(PyExc_ValueError, "this CPU runs no kernel copy named %R", arg);
    return NULL;
}

PyDoc_STRVAR(current_instruction_set_doc,
"current_instruction_set() -> str\n\nThe kernel copy run now (one of INSTRUCTION_SETS).");

static PyObject *current_instruction_set(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(current->name);
}

static void release_all(Py_buffer *views, int count)
{
    for (int i = 0; i < count; i++)
        PyBuffer_Release(&views[i]);
}

static int get_buffers(PyObject *seq, int count, Py_buffer *views, int writable, Py_ssize_t size)
{
    if (!PyTuple_Check(seq) || PyTuple_GET_SIZE(seq) != count) {
        PyErr_Format(PyExc_ValueError, "expected a tuple of %d planes", count);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(seq, i), &views[i], flags) < 0) {
            release_all(views, i);
            return -1;
        }
        if (views[i].len != size * (Py_ssize_t)sizeof(u64)) {
            release_all(views, i + 1);
            PyErr_Format(PyExc_ValueError, "a plane must hold %zd uint64 words", size);
            return -1;
        }
    }
    return 0;
}

static int get_sized(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t bytes, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    if (view->len != bytes) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "%s must be %zd bytes, got %zd", what, bytes, view->len);
        return -1;
    }
    return 0;
}

/* Copy slot `slot`'s words of the P planes (Strips layout) to dst: (P, h, nwb). */
static void copy_slot(const u64 *const *planes, int P, int h, int m, int nwb, ptrdiff_t s,
                      int64_t slot, u64 *dst)
{
    int64_t strip = slot / m, j = slot % m;
    for (int p = 0; p < P; p++) {
        const u64 *src = planes[p] + 1 + (size_t)strip * (h + 2) * s + s + 1 + j * nwb;
        for (int r = 0; r < h; r++, dst += nwb)
            memcpy(dst, src + r * s, sizeof(u64) * nwb);
    }
}

/* Whether the k slot numbers are sorted and each in [0, limit); else a ValueError. */
static int check_slots(const int64_t *slots, Py_ssize_t k, int64_t limit, int sorted)
{
    for (Py_ssize_t i = 0; i < k; i++) {
        if (slots[i] < 0 || slots[i] >= limit) {
            PyErr_Format(PyExc_ValueError, "slot %lld is out of range", (long long)slots[i]);
            return -1;
        }
        if (sorted && i && slots[i] <= slots[i - 1]) {
            PyErr_SetString(PyExc_ValueError, "slots must be sorted, each once");
            return -1;
        }
    }
    return 0;
}

/* The digests of the strip just computed (its slots of g->dig_j), into out ((ndig, 16)):
 * the alive plane is in each context already; then the other canonical planes' rows. */
static void finish_digests(const Geo *g, uint8_t *out)
{
    const size_t plane = (size_t)g->h * g->dnw;
    for (int i = 0; i < g->ndig; i++) {
        const u64 *rows = g->dig_rows + (size_t)i * (g->planes - 1) * plane;
        Sha256 *c = &g->dig_ctx[i];
        sha256_update(c, rows, plane * sizeof(u64));
        if (g->planes == 4) {  /* colour 3 or 4: hashed only when not empty */
            const u64 *third = rows + plane;
            u64 any = 0;
            for (size_t q = 0; q < plane; q++)
                any |= third[q];
            if (any)
                sha256_update(c, third, plane * sizeof(u64));
        }
        uint8_t full[32];
        sha256_final(c, full);
        memcpy(out + 16 * (size_t)i, full, 16);
    }
}

PyDoc_STRVAR(sha256_doc,
"sha256(data)\n"
"--\n\n"
"The SHA-256 of ``data`` (any buffer) as the kernel computes its digests: 32 bytes.");

static PyObject *py_sha256(PyObject *Py_UNUSED(self), PyObject *arg)
{
    Py_buffer v;
    if (PyObject_GetBuffer(arg, &v, PyBUF_SIMPLE) < 0)
        return NULL;
    Sha256 c;
    uint8_t out[32];
    sha256_init(&c);
    sha256_update(&c, v.buf, (size_t)v.len);
    sha256_final(&c, out);
    PyBuffer_Release(&v);
    return PyBytes_FromStringAndSize((const char *)out, 32);
}

PyDoc_STRVAR(generation_doc,
"generation(src, dst, n, h, m, nwb, last_mask, word_keys, column_keys, counts, fps,\n"
"           measure=True, digest_slots=None, digests=None, width=0)\n"
"--\n\n"
"One generation of n strips (h rows of m slots of nwb words) from the planes ``src``\n"
"into ``dst`` (tuples of 2 or 4 C-contiguous uint64 buffers of n (h + 2)\n"
"(m nwb + 2) + 2 words, the Strips layout; ``dst`` may be ``src``: in place),\n"
"then the measures of every slot of the\n"
"new planes: ``counts`` ((n m, P) int64) gets each slot's live cells per plane and\n"
"``fps`` ((n m,) uint64) its fingerprint (both overwritten). ``word_keys``: (h, m nwb)\n"
"uint64 (a slot's (h, nwb) keys repeated for the m slots); ``column_keys``: (P, nwb)\n"
"uint64. With ``measure`` false the generation alone is run (``counts`` and ``fps``\n"
"are left as they were). ``digest_slots`` ((k,) int64, sorted) names slots whose new\n"
"boards are digested while their strip is in cache into ``digests`` ((k, 16) uint8):\n"
"engine.life.stability.planes_digest of the canonical planes (alive, colour 2 or 4,\n"
"colour 3 or 4 when not empty; two planes are alive and colour 2) of the first\n"
"ceil(``width`` / 64) words of each row. The GIL is released while it runs.\n\n"
"Raises ValueError on sizes that do not match.");

static PyObject *generation(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *src_t, *dst_t, *wk_o, *ck_o, *cnt_o, *fp_o, *cs_o = Py_None, *cp_o = Py_None;
    int n, h, m, nwb, width = 0;
    unsigned long long last_mask;
    int measure = 1;
    if (!PyArg_ParseTuple(args, "OOiiiiKOOOO|pOOi", &src_t, &dst_t, &n, &h, &m, &nwb, &last_mask,
                          &wk_o, &ck_o, &cnt_o, &fp_o, &measure, &cs_o, &cp_o, &width))
        return NULL;
    if (n < 0 || h < 1 || m < 1 || nwb < 1) {
        PyErr_SetString(PyExc_ValueError, "n >= 0, h, m, nwb >= 1");
        return NULL;
    }
    if (!PyTuple_Check(src_t) || (PyTuple_GET_SIZE(src_t) != 2 && PyTuple_GET_SIZE(src_t) != 4)) {
        PyErr_SetString(PyExc_ValueError, "src must be a tuple of 2 or 4 planes");
        return NULL;
    }
    int P = (int)PyTuple_GET_SIZE(src_t);
    Geo g = {.n = n, .h = h, .m = m, .nwb = nwb, .planes = P, .last_mask = last_mask,
             .measure = measure};
    g.s = (ptrdiff_t)m * nwb + 2;
    Py_ssize_t size = (Py_ssize_t)n * (h + 2) * g.s + 2;
    Py_buffer sv[4], dv[4], wk, ck, cnt, fp, cs = {0}, cp = {0};
    Py_ssize_t ncopies = 0;
    if (get_buffers(src_t, P, sv, 0, size) < 0)
        return NULL;
    if (get_buffers(dst_t, P, dv, 1, size) < 0)
        goto fail_src;
    if (get_sized(wk_o, &wk, 0, (Py_ssize_t)h * m * nwb * 8, "word_keys") < 0)
        goto fail_dst;
    if (get_sized(ck_o, &ck, 0, (Py_ssize_t)P * nwb * 8, "column_keys") < 0)
        goto fail_wk;
    if (get_sized(cnt_o, &cnt, 1, (Py_ssize_t)n * m * P * 8, "counts") < 0)
        goto fail_ck;
    if (get_sized(fp_o, &fp, 1, (Py_ssize_t)n * m * 8, "fps") < 0)
        goto fail_cnt;
    if ((cs_o == Py_None) != (cp_o == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "digest_slots and digests go together");
        goto fail_all;
    }
    if (cs_o != Py_None) {
        if (width < 1 || width > nwb * 64) {
            PyErr_SetString(PyExc_ValueError, "width must be 1 .. 64 nwb to digest");
            goto fail_all;
        }
        if (PyObject_GetBuffer(cs_o, &cs, PyBUF_C_CONTIGUOUS) < 0)
            goto fail_all;
        ncopies = cs.len / 8;
        if (cs.len % 8 || check_slots(cs.buf, ncopies, (int64_t)n * m, 1) < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "digest_slots must be int64");
            PyBuffer_Release(&cs);
            goto fail_all;
        }
        if (get_sized(cp_o, &cp, 1, ncopies * 16, "digests") < 0) {
            PyBuffer_Release(&cs);
            goto fail_all;
        }
    }
    g.dnw = (width + 63) / 64;
    {
        int same = 0;  /* in place (dst is src, plane for plane), or planes all apart */
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++)
                if (sv[i].buf == dv[j].buf)
                    same += i == j ? 1 : P + 1;
        if (same != 0 && same != P) {
            PyErr_SetString(PyExc_ValueError, "dst must be src (in place) or planes apart from it");
            goto fail_copies;
        }
    }
    g.word_keys = wk.buf;
    g.column_keys = ck.buf;
    g.counts = cnt.buf;
    g.fps = fp.buf;
    {
        const int nw = m * nwb;
        /* rows of sums (15 or 27 rows), the new rows (P), the column measures (2 P) */
        const size_t sums = P == 2 ? 15 : 27;
        u64 *buf = malloc(sizeof(u64) * (size_t)nw * (sums + 3 * (size_t)P));
        /* a strip's digests: their places, contexts, and rows of the other planes */
        g.dig_j = malloc(sizeof(int) * (size_t)m);
        g.dig_ctx = malloc(sizeof(Sha256) * (size_t)m);
        g.dig_rows = ncopies ? malloc(sizeof(u64) * (size_t)m * (P - 1) * h * g.dnw) : NULL;
        if (!buf || !g.dig_j || !g.dig_ctx || (ncopies && !g.dig_rows)) {
            free(buf);
            free(g.dig_j);
            free(g.dig_ctx);
            free(g.dig_rows);
            PyErr_NoMemory();
            goto fail_copies;
        }
        const int64_t *digest_slots = cs.buf;
        uint8_t *digests = cp.buf;
        Py_ssize_t next = 0;
        const u64 *src[4];
        u64 *dst[4];
        for (int i = 0; i < P; i++) {
            src[i] = sv[i].buf;
            dst[i] = dv[i].buf;
        }
        g.ccount = buf + (size_t)nw * (sums + P);
        g.csum = g.ccount + (size_t)nw * P;
        const strip_fn strip = P == 2 ? current->two : current->four;  /* one copy per call */
        Py_BEGIN_ALLOW_THREADS
        memset(g.ccount, 0, sizeof(u64) * (size_t)nw * 2 * P);
        for (int k = 0; k < n; k++) {
            g.ndig = 0;  /* the strip's slots to digest: the alive plane hashed row by row */
            for (; next < ncopies && digest_slots[next] < (int64_t)(k + 1) * m; next++) {
                g.dig_j[g.ndig] = (int)(digest_slots[next] - (int64_t)k * m);
                sha256_init(&g.dig_ctx[g.ndig++]);
            }
            strip(&g, src, dst, k, buf);
            finish_digests(&g, digests + 16 * (next - g.ndig));
        }
        Py_END_ALLOW_THREADS
        free(buf);
        free(g.dig_j);
        free(g.dig_ctx);
        free(g.dig_rows);
    }
    if (cs_o != Py_None) {
        PyBuffer_Release(&cp);
        PyBuffer_Release(&cs);
    }
    PyBuffer_Release(&fp);
    PyBuffer_Release(&cnt);
    PyBuffer_Release(&ck);
    PyBuffer_Release(&wk);
    release_all(dv, P);
    release_all(sv, P);
    Py_RETURN_NONE;
fail_copies:
    if (cs_o != Py_None) {
        PyBuffer_Release(&cp);
        PyBuffer_Release(&cs);
    }
fail_all:
    PyBuffer_Release(&fp);
fail_cnt:
    PyBuffer_Release(&cnt);
fail_ck:
    PyBuffer_Release(&ck);
fail_wk:
    PyBuffer_Release(&wk);
fail_dst:
    release_all(dv, P);
fail_src:
    release_all(sv, P);
    return NULL;
}

PyDoc_STRVAR(gather_doc,
"gather(planes, n, h, m, nwb, slots, out)\n"
"--\n\n"
"Copy the words of ``slots`` ((k,) int64 slot numbers < n m) of the planes ``planes``\n"
"(a tuple of P buffers in the Strips layout of n strips of h rows of m slots of nwb\n"
"words) into ``out``: (k, P, h, nwb) uint64, C-contiguous.\n\n"
"Raises ValueError on sizes that do not match or a slot out of range.");

static PyObject *gather(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *planes_t, *slots_o, *out_o;
    int n, h, m, nwb;
    if (!PyArg_ParseTuple(args, "OiiiiOO", &planes_t, &n, &h, &m, &nwb, &slots_o, &out_o))
        return NULL;
    if (n < 0 || h < 1 || m < 1 || nwb < 1 || !PyTuple_Check(planes_t) || PyTuple_GET_SIZE(planes_t) < 1
        || PyTuple_GET_SIZE(planes_t) > 4) {
        PyErr_SetString(PyExc_ValueError, "n >= 0, h, m, nwb >= 1 and 1 to 4 planes");
        return NULL;
    }
    int P = (int)PyTuple_GET_SIZE(planes_t);
    ptrdiff_t s = (ptrdiff_t)m * nwb + 2;
    Py_ssize_t size = (Py_ssize_t)n * (h + 2) * s + 2;
    Py_buffer pv[4], sl, out;
    if (get_buffers(planes_t, P, pv, 0, size) < 0)
        return NULL;
    if (PyObject_GetBuffer(slots_o, &sl, PyBUF_C_CONTIGUOUS) < 0)
        goto fail_planes;
    Py_ssize_t k = sl.len / 8;
    if (sl.len % 8) {
        PyErr_SetString(PyExc_ValueError, "slots must be int64");
        goto fail_slots;
    }
    if (get_sized(out_o, &out, 1, k * P * h * nwb * 8, "out") < 0)
        goto fail_slots;
    const int64_t *slots = sl.buf;
    if (check_slots(slots, k, (int64_t)n * m, 0) < 0)
        goto fail_out;
    {
        const u64 *planes[4];
        for (int p = 0; p < P; p++)
            planes[p] = pv[p].buf;
        for (Py_ssize_t i = 0; i < k; i++)
            copy_slot(planes, P, h, m, nwb, s, slots[i], (u64 *)out.buf + (size_t)i * P * h * nwb);
    }
    PyBuffer_Release(&out);
    PyBuffer_Release(&sl);
    release_all(pv, P);
    Py_RETURN_NONE;
fail_out:
    PyBuffer_Release(&out);
fail_slots:
    PyBuffer_Release(&sl);
fail_planes:
    release_all(pv, P);
    return NULL;
}

/* SPREAD[b]: byte b's bits as 8 bytes of 0 or 1, bit i in byte i (little-endian). */
static u64 SPREAD[256];

static void init_spread(void)
{
    for (int v = 0; v < 256; v++) {
        u64 x = 0;
        for (int i = 0; i < 8; i++)
            if (v >> i & 1)
                x |= 1ULL << (8 * i);
        SPREAD[v] = x;
    }
}

PyDoc_STRVAR(cells_doc,
"cells(words, h, w, nwb, colours, out=None)\n"
"--\n\n"
"The cells of one slot's board from its words ((P, h, nwb) uint64, C-contiguous: the\n"
"alive plane, then colour b of two colours ``(a, b)``, or colours 1, 2, 3 of four, colour\n"
"4 the live cells of none of them) into ``out``: (h, w) uint8, 0 dead, else the colour\n"
"(engine.life.kernel.colour_cells of the unpacked planes); with ``out`` None, a new\n"
"bytes object of those h w cells is returned (else None).\n\n"
"Raises ValueError on sizes that do not match.");

static PyObject *cells(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *words_o, *colours_o, *out_o = Py_None;
    int h, w, nwb, a = 0, b = 0, c = 0, d = 0;
    if (!PyArg_ParseTuple(args, "OiiiO|O", &words_o, &h, &w, &nwb, &colours_o, &out_o))
        return NULL;
    if (!PyTuple_Check(colours_o)
        || !(PyTuple_GET_SIZE(colours_o) == 2 ? PyArg_ParseTuple(colours_o, "ii", &a, &b)
                                               : PyArg_ParseTuple(colours_o, "iiii", &a, &b, &c, &d))) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "colours must be a tuple of 2 or 4 ints");
        return NULL;
    }
    int P = PyTuple_GET_SIZE(colours_o) == 2 ? 2 : 4;
    if (h < 1 || w < 1 || nwb < 1 || (Py_ssize_t)nwb * 64 < w) {
        PyErr_SetString(PyExc_ValueError, "h, w >= 1 and w <= 64 nwb");
        return NULL;
    }
    Py_buffer wv, ov = {0};
    PyObject *result = NULL;
    uint8_t *o;
    if (get_sized(words_o, &wv, 0, (Py_ssize_t)P * h * nwb * 8, "words") < 0)
        return NULL;
    if (out_o == Py_None) {
        result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)h * w);
        if (!result) {
            PyBuffer_Release(&wv);
            return NULL;
        }
        o = (uint8_t *)PyBytes_AS_STRING(result);
    } else {
        if (get_sized(out_o, &ov, 1, (Py_ssize_t)h * w, "out") < 0) {
            PyBuffer_Release(&wv);
            return NULL;
        }
        o = ov.buf;
    }
    const u64 *planes = wv.buf;
    const size_t plane = (size_t)h * nwb;
    uint8_t *row = malloc((size_t)nwb * 64);
    if (!row) {
        if (result)
            Py_DECREF(result);
        else
            PyBuffer_Release(&ov);
        PyBuffer_Release(&wv);
        return PyErr_NoMemory();
    }
    /* 8 cells at a time: a byte of a plane spread to 8 bytes of 0 or 1 (SPREAD), then
     * the colour as a sum of them; planes of colours lie within the alive plane and do
     * not overlap, so no byte carries into the next. */
    for (int r = 0; r < h; r++) {
        const u64 *al = planes + (size_t)r * nwb;
        for (int q = 0; q < nwb; q++)
            for (int k = 0; k < 8; k++) {
                u64 x = SPREAD[(al[q] >> (8 * k)) & 0xFF], v;
                if (P == 2) {
                    u64 y = SPREAD[(al[plane + q] >> (8 * k)) & 0xFF];
                    v = x * (u64)a + y * (u64)(b - a);
                } else {
                    u64 c1 = SPREAD[(al[plane + q] >> (8 * k)) & 0xFF];
                    u64 c2 = SPREAD[(al[2 * plane + q] >> (8 * k)) & 0xFF];
                    u64 c3 = SPREAD[(al[3 * plane + q] >> (8 * k)) & 0xFF];
                    v = 4 * x - 3 * c1 - 2 * c2 - c3;
                }
                memcpy(row + (size_t)q * 64 + 8 * k, &v, 8);
            }
        memcpy(o + (size_t)r * w, row, (size_t)w);
    }
    free(row);
    PyBuffer_Release(&wv);
    if (result)
        return result;
    PyBuffer_Release(&ov);
    Py_RETURN_NONE;
}

/* Write n (>= 0) in decimal at o; returns the end. */
static inline char *put_count(char *o, int n)
{
    char digits[12];
    int k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    while (k)
        *o++ = digits[--k];
    return o;
}

PyDoc_STRVAR(board_rle_doc,
"board_rle(cells, width, height)\n"
"--\n\n"
"The view's ``board`` text of a board (cellwar.v1.board_codec.encode_board, byte for\n"
"byte): ``cells`` width x height states, row-major, 0 dead; ``.`` dead, ``A`` state 1 ..\n"
"``X`` state 24; each row's runs, rows ended by ``$`` (``n$`` for n), trailing dead cells\n"
"and blank rows left out, ``!`` at the end. None when a state is above 24 (two-letter\n"
"tags: the codec writes those).\n\n"
"Raises ValueError when ``cells`` is not width x height bytes.");

static PyObject *board_rle(PyObject *Py_UNUSED(self), PyObject *args)
{
    Py_buffer v;
    int w, h;
    if (!PyArg_ParseTuple(args, "y*ii", &v, &w, &h))
        return NULL;
    if (w < 0 || h < 0 || v.len != (Py_ssize_t)w * h) {
        PyBuffer_Release(&v);
        PyErr_Format(PyExc_ValueError, "%zd cells given for a %dx%d board", v.len, w, h);
        return NULL;
    }
    const uint8_t *cells = v.buf;
    for (Py_ssize_t i = 0; i < v.len; i++)
        if (cells[i] > 24) {
            PyBuffer_Release(&v);
            Py_RETURN_NONE;
        }
    /* at most 2 characters per cell (a run of 1: its tag; longer: fewer), a "$" group per
     * row (its count: at most 7 digits) and the "!" */
    size_t cap = (size_t)v.len * 2 + (size_t)h * 8 + 2;
    char *out = malloc(cap), *o = out;
    if (!out) {
        PyBuffer_Release(&v);
        return PyErr_NoMemory();
    }
    int last = 0; /* the row of the last written run: rows ended since then are owed */
    for (int y = 0; y < h; y++) {
        const uint8_t *row = cells + (size_t)y * w;
        int n = w;
        while (n > 0 && row[n - 1] == 0)
            n--;
        if (!n)
            continue;
        int ends = y - last;
        if (ends > 1)
            o = put_count(o, ends);
        if (ends)
            *o++ = '$';
        last = y;
        for (int x = 0; x < n;) {
            int run = 1;
            while (x + run < n && row[x + run] == row[x])
                run++;
            if (run > 1)
                o = put_count(o, run);
            *o++ = row[x] ? (char)('A' + row[x] - 1) : '.';
            x += run;
        }
    }
    *o++ = '!';
    PyObject *text = PyUnicode_DecodeASCII(out, o - out, NULL);
    free(out);
    PyBuffer_Release(&v);
    return text;
}

static PyMethodDef methods[] = {
    {"board_rle", board_rle, METH_VARARGS, board_rle_doc},
    {"cells", cells, METH_VARARGS, cells_doc},
    {"generation", generation, METH_VARARGS, generation_doc},
    {"sha256", py_sha256, METH_O, sha256_doc},
    {"gather", gather, METH_VARARGS, gather_doc},
    {"use_instruction_set", use_instruction_set, METH_O, use_instruction_set_doc},
    {"current_instruction_set", current_instruction_set, METH_NOARGS, current_instruction_set_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "The Life engine's native helpers: the kernel of a slot pool's strips\n"
    "(engine/life/slots.py), a slot's cells, SHA-256, a board's view text\n"
    "(engine/life/rle.py). INSTRUCTION_SET names the kernel copy chosen at import, the\n"
    "best of INSTRUCTION_SETS (the copies this CPU can run: baseline, avx2).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void)
{
    choose_copy();
    sha256_choose();
    init_spread();
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    PyObject *names = PyTuple_New(n_copies);
    for (int i = 0; names && i < n_copies; i++) {
        PyObject *name = PyUnicode_FromString(copies[i].name);
        if (name == NULL) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, i, name);
    }
    if (names == NULL || PyModule_AddObject(mod, "INSTRUCTION_SETS", names) < 0) {
        Py_XDECREF(names);
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddStringConstant(mod, "INSTRUCTION_SET", current->name) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
