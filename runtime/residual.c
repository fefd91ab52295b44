/* residual.c -- the sparse 4-bit residual (residual.h): options, the
 * Hessian diagonal, block scores and selection, the sections, their checks
 * and the reference's operand. */
#define _GNU_SOURCE
#include "residual.h"
#include "parallel.h"
#include "bytes.h"
#include "core.h"
#include "fp16.h"
#include "layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

const char *const qjit__residual_names[QJIT__RESIDUAL_SECTIONS] = {"rptr", "ridx", "rweight"};

enum { RPTR, RIDX, RWEIGHT };

/* Bytes of one kept block, and of one of its 16-row slabs. */
static size_t block_bytes(int bn, int bk) { return (size_t)bn * (size_t)bk / 2; }
static size_t slab_bytes(int bk) { return (size_t)QJIT__PACK_N * (size_t)bk / 2; }

/*------------------------------------------------------------------------
 * Options
 *------------------------------------------------------------------------*/

/* The names of the schemes that take a residual, for messages. */
static void residual_schemes(char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < qjit__nschemes && at < size; i++)
        if (qjit__schemes[i]->residual_target)
            at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? ", " : "", qjit__schemes[i]->name);
}

/* Whether scheme s takes a residual at `group`: 1, or 0 with *why (NULL
 * when the scheme takes none at all). */
static int takes_residual(const qjit__scheme *s, int group, const char **why)
{
    *why = s->residual_target && s->residual_problem ? s->residual_problem(group) : NULL;
    return s->residual_target && !*why;
}

/* Block shapes the residual has: 16/32/64/128 rows, 64/128 columns. */
static int valid_rows(int bn) { return bn == 16 || bn == 32 || bn == 64 || bn == 128; }
static int valid_cols(int bk) { return bk == 64 || bk == 128; }

qjit_status qjit__residual_plan_make(qjit_context *ctx, const qjit__scheme *s, int group, int64_t N, int64_t K,
                                     const qjit_quantize_options *o, qjit__residual_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    double rho = o->sparsity;
    if (!isfinite(rho) || rho < 0.0 || rho > 1.0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "sparsity = %g must be a budget in [0, 1]", rho);
    if (rho == 0.0)
        return QJIT_OK;
    const char *why;
    if (!takes_residual(s, group, &why)) {
        if (why)
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s takes no sparse residual at g=%d: %s", s->name, group,
                               why);
        char which[128];
        residual_schemes(which, sizeof which);
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s takes no sparse residual (sparsity = %g); the residual "
                           "restores the INT8 level of the two-level schemes (%s)", s->name, rho, which);
    }
    int bn = o->block_n, bk = o->block_k;
    if (bn == 0)
        bn = N % 64 == 0 ? 64 : N % 32 == 0 ? 32 : 16;
    if (!valid_rows(bn))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "block_n = %d: residual blocks have 16, 32, 64 or 128 rows",
                           o->block_n);
    if (N % bn != 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "block_n = %d does not divide N = %lld", bn, (long long)N);
    if (bk == 0)
        bk = 64;
    if (!valid_cols(bk))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "block_k = %d: residual blocks have 64 or 128 columns",
                           o->block_k);
    if (K % bk != 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "block_k = %d does not divide K = %lld", bk, (long long)K);
    if (o->calib && o->hessian_diag)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "give calibration rows (calib) or the Hessian diagonal "
                           "(hessian_diag), not both");
    if (o->calib && (o->calib_rows <= 0 || !qjit__dtype_known(o->calib_dtype)))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "calibration rows: calib_rows = %lld must be > 0 and "
                           "calib_dtype (%d) F16, BF16 or F32", (long long)o->calib_rows, (int)o->calib_dtype);
    if (!o->calib && o->calib_rows != 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "calib_rows = %lld but calib is NULL",
                           (long long)o->calib_rows);
    if (o->calib && o->calib_rows > INT64_MAX / K)
        return qjit__error(ctx, QJIT_OVERFLOW, "calib_rows = %lld x K = %lld overflows", (long long)o->calib_rows,
                           (long long)K);
    plan->block_n = bn;
    plan->block_k = bk;
    plan->row_blocks = N / bn;
    plan->k_blocks = K / bk;
    plan->max_blocks = qjit__ceil_share(rho, plan->row_blocks * plan->k_blocks);
    return QJIT_OK;
}

void qjit__residual_sizes(const qjit__residual_plan *plan, int64_t blocks, size_t bytes[QJIT__RESIDUAL_SECTIONS])
{
    bytes[RPTR] = 4 * (size_t)(plan->row_blocks + 1);
    bytes[RIDX] = 4 * (size_t)blocks;
    bytes[RWEIGHT] = (size_t)blocks * block_bytes(plan->block_n, plan->block_k);
}

/* H[k] from o: 1 when it holds weights, 0 when o has none (unweighted), -1
 * with *st set for bad calibration data or diagonal. */
static int hessian(qjit_context *ctx, const qjit_quantize_options *o, int64_t K, double *H, qjit_status *st)
{
    *st = QJIT_OK;
    if (o->hessian_diag) {
        for (int64_t k = 0; k < K; k++) {
            float h = o->hessian_diag[k];
            if (!isfinite(h) || h < 0.0f) {
                *st = qjit__error(ctx, QJIT_INVALID_ARGUMENT, "hessian_diag[%lld] = %g must be finite and >= 0",
                                  (long long)k, (double)h);
                return -1;
            }
            H[k] = h;
        }
        return 1;
    }
    if (!o->calib)
        return 0;
    for (int64_t k = 0; k < K; k++)
        H[k] = 0.0;
    for (int64_t t = 0; t < o->calib_rows; t++)
        for (int64_t k = 0; k < K; k++) {
            size_t i = (size_t)(t * K + k);
            float x = qjit__dtype_load(o->calib, o->calib_dtype, i);
            if (!isfinite(x)) {
                *st = qjit__error(ctx, QJIT_INVALID_ARGUMENT, "calibration value X[%lld, %lld] is %s", (long long)t,
                                  (long long)k, isnan(x) ? "NaN" : "infinite");
                return -1;
            }
            H[k] += (double)x * (double)x;
        }
    return 1;
}

/*------------------------------------------------------------------------
 * One row block: Q8 (the target), Q8' (the base's operand), the scales
 *------------------------------------------------------------------------*/

static size_t scratch_bytes(const qjit__residual_plan *plan, int64_t K)
{
    size_t rows = (size_t)plan->block_n, k = (size_t)K;
    /* wq, the operand's unpacking, q8, one slab as floats, the row block as
     * floats, one residual slab of nibbles. */
    return 3 * rows * k + rows * k * sizeof(float) + (size_t)QJIT__PACK_N * (size_t)plan->block_k;
}

typedef struct row_block {
    int8_t *wq, *q8;             /* block_n x K */
    uint8_t *unpack, *nib;
    float *w;                    /* block_n x K */
} row_block;

static row_block carve(const qjit__residual_plan *plan, int64_t K, void *scratch)
{
    size_t area = (size_t)plan->block_n * (size_t)K;
    uint8_t *p = scratch;
    row_block b;
    b.w = (float *)p;
    b.wq = (int8_t *)(p + area * sizeof(float));
    b.q8 = b.wq + area;
    b.unpack = (uint8_t *)(b.q8 + area);
    b.nib = b.unpack + area;
    return b;
}

/* Fills b for row block r: the weights, Q8' and Q8. */
static void load_row_block(const qjit__residual_plan *plan, const qjit__slabs *src, const qjit__weights_view *base,
                           int64_t r, row_block *b)
{
    int64_t K = base->K, n0 = r * plan->block_n;
    base->scheme->operand(base, n0, plan->block_n, b->wq, b->unpack);
    for (int s = 0; s < plan->block_n / QJIT__PACK_N; s++)
        qjit__slab_load(src, n0 / QJIT__PACK_N + s, b->w + (size_t)s * QJIT__PACK_N * (size_t)K);
    for (int i = 0; i < plan->block_n; i++)
        base->scheme->residual_target(b->w + (size_t)i * (size_t)K, K, b->q8 + (size_t)i * (size_t)K);
}

static int clamp_r8(int r) { return r < -8 ? -8 : r > 7 ? 7 : r; }

/* Every block's score (scores[r * k_blocks + kb]); H may be NULL (1). */
static void scores_of(const qjit__residual_plan *plan, const qjit__slabs *src, const qjit__weights_view *base,
                      const double *H, void *scratch, double *scores)
{
    int64_t K = base->K, bk = plan->block_k;
    row_block b = carve(plan, K, scratch);
    for (int64_t r = 0; r < plan->row_blocks; r++) {
        double *row_scores = scores + r * plan->k_blocks;
        for (int64_t kb = 0; kb < plan->k_blocks; kb++)
            row_scores[kb] = 0.0;
        load_row_block(plan, src, base, r, &b);
        for (int i = 0; i < plan->block_n; i++) {
            float scale;
            int32_t zero;
            qjit__channel(base, r * plan->block_n + i, &scale, &zero);
            const double s = scale;
            const float *w = b.w + (size_t)i * (size_t)K;
            const int8_t *wq = b.wq + (size_t)i * (size_t)K, *q8 = b.q8 + (size_t)i * (size_t)K;
            for (int64_t k = 0; k < K; k++) {
                double e = (double)w[k] - s * wq[k];
                double left = e - s * clamp_r8(q8[k] - wq[k]);
                double gain = e * e - left * left;
                row_scores[k / bk] += H ? H[k] * gain : gain;
            }
        }
    }
}

/*------------------------------------------------------------------------
 * Selection
 *------------------------------------------------------------------------*/

static int by_score(const void *a, const void *b)
{
    const qjit__residual_rank *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int by_index(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t qjit__residual_select(const double *scores, int64_t count, int64_t max_blocks, qjit__residual_rank *rank,
                              int64_t *kept)
{
    int64_t positive = 0;
    for (int64_t i = 0; i < count; i++)
        if (scores[i] > 0.0)
            rank[positive++] = (qjit__residual_rank){scores[i], i};
    qsort(rank, (size_t)positive, sizeof *rank, by_score);
    int64_t n = positive < max_blocks ? positive : max_blocks;
    for (int64_t i = 0; i < n; i++)
        kept[i] = rank[i].index;
    qsort(kept, (size_t)n, sizeof *kept, by_index);
    return n;
}

/*------------------------------------------------------------------------
 * The work of a quantization
 *------------------------------------------------------------------------*/

void qjit__residual_end(qjit_context *ctx, qjit__residual_work *w)
{
    qjit__free(ctx, w->H, w->nH * sizeof(double));
    qjit__free(ctx, w->scores, w->nblocks * sizeof(double));
    qjit__free(ctx, w->rank, w->nblocks * sizeof(qjit__residual_rank));
    qjit__free(ctx, w->kept, w->nblocks * sizeof(int64_t));
    qjit__free(ctx, w->scratch, w->scratch_bytes);
    memset(w, 0, sizeof *w);
}

qjit_status qjit__residual_begin(qjit_context *ctx, const qjit__residual_plan *plan, const qjit_quantize_options *o,
                                 int64_t K, qjit__residual_work *w)
{
    memset(w, 0, sizeof *w);
    w->nH = (size_t)K;
    w->nblocks = (size_t)(plan->row_blocks * plan->k_blocks);
    w->scratch_bytes = scratch_bytes(plan, K);
    w->H = qjit__alloc(ctx, w->nH * sizeof(double));
    w->scores = qjit__alloc(ctx, w->nblocks * sizeof(double));
    w->rank = qjit__alloc(ctx, w->nblocks * sizeof(qjit__residual_rank));
    w->kept = qjit__alloc(ctx, w->nblocks * sizeof(int64_t));
    w->scratch = qjit__alloc(ctx, w->scratch_bytes);
    qjit_status st = QJIT_OK;
    if (!w->H || !w->scores || !w->rank || !w->kept || !w->scratch)
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory choosing residual blocks (K=%lld, %zu blocks)",
                         (long long)K, w->nblocks);
    else
        w->weighted = hessian(ctx, o, K, w->H, &st);
    if (st != QJIT_OK)
        qjit__residual_end(ctx, w);
    return st;
}

int64_t qjit__residual_choose(qjit_context *ctx, const qjit__residual_plan *plan, const qjit__slabs *src,
                              const qjit__weights_view *base, const char *layer, qjit__residual_work *w)
{
    if (!w->weighted)
        qjit__log(ctx, "%s: no calibration data for the residual's block choice: unweighted error (H = 1)",
                  layer ? layer : "the layer");
    scores_of(plan, src, base, w->weighted ? w->H : NULL, w->scratch, w->scores);
    return qjit__residual_select(w->scores, (int64_t)w->nblocks, plan->max_blocks, w->rank, w->kept);
}

/*------------------------------------------------------------------------
 * The sections
 *------------------------------------------------------------------------*/

void qjit__residual_write(const qjit__residual_plan *plan, const qjit__slabs *src, const qjit__weights_view *base,
                          qjit__residual_work *w, int64_t blocks, uint8_t *const dst[QJIT__RESIDUAL_SECTIONS])
{
    int64_t K = base->K;
    int bn = plan->block_n, bk = plan->block_k;
    const int64_t *kept = w->kept;
    row_block b = carve(plan, K, w->scratch);
    int64_t j = 0;
    for (int64_t r = 0; r < plan->row_blocks; r++) {
        qjit__store_u32(dst[RPTR] + 4 * r, (uint32_t)j);
        if (j == blocks || kept[j] / plan->k_blocks != r)
            continue;
        load_row_block(plan, src, base, r, &b);
        for (; j < blocks && kept[j] / plan->k_blocks == r; j++) {
            int64_t kb = kept[j] % plan->k_blocks;
            qjit__store_u32(dst[RIDX] + 4 * j, (uint32_t)kb);
            uint8_t *out = dst[RWEIGHT] + (size_t)j * block_bytes(bn, bk);
            for (int s = 0; s < bn / QJIT__PACK_N; s++) {
                for (int i = 0; i < QJIT__PACK_N; i++) {
                    size_t row = (size_t)(s * QJIT__PACK_N + i) * (size_t)K + (size_t)(kb * bk);
                    for (int c = 0; c < bk; c++)
                        b.nib[i * bk + c] = (uint8_t)(clamp_r8(b.q8[row + c] - b.wq[row + c]) + QJIT__RESIDUAL_BIAS);
                }
                qjit__pack4_slab(b.nib, bk, out + (size_t)s * slab_bytes(bk));
            }
        }
    }
    qjit__store_u32(dst[RPTR] + 4 * plan->row_blocks, (uint32_t)j);
}

qjit_status qjit__residual_check(qjit_context *ctx, qjit__weights_view *v)
{
    qjit__residual_view *rv = &v->residual;
    const qjit__scheme *s = v->scheme;
    int bn = rv->block_n, bk = rv->block_k;
    const char *why;
    if (!takes_residual(s, v->group, &why))
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight %s buffer (g=%d) has a sparse residual, which "
                           "the scheme does not take there", s->name, v->group);
    if (!valid_rows(bn) || v->N % bn || !valid_cols(bk) || v->K % bk)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight residual blocks of %d x %d do not tile N=%lld "
                           "K=%lld", bn, bk, (long long)v->N, (long long)v->K);
    rv->row_blocks = v->N / bn;
    rv->k_blocks = v->K / bk;
    const qjit__section_view *sec = rv->sections;
    if (sec[RPTR].bytes != 4 * (size_t)(rv->row_blocks + 1) || sec[RIDX].bytes % 4 != 0)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight residual sections rptr (%zu bytes) and ridx "
                           "(%zu bytes) do not fit %lld row blocks", sec[RPTR].bytes, sec[RIDX].bytes,
                           (long long)rv->row_blocks);
    int64_t blocks = (int64_t)(sec[RIDX].bytes / 4);
    if (blocks > rv->row_blocks * rv->k_blocks || sec[RWEIGHT].bytes / block_bytes(bn, bk) != (size_t)blocks ||
        sec[RWEIGHT].bytes % block_bytes(bn, bk) != 0)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight residual of %lld blocks has %zu bytes of "
                           "values (%zu per block)", (long long)blocks, sec[RWEIGHT].bytes, block_bytes(bn, bk));
    rv->blocks = blocks;
    rv->rptr = v->payload + sec[RPTR].offset;
    rv->ridx = v->payload + sec[RIDX].offset;
    rv->rweight = v->payload + sec[RWEIGHT].offset;
    if (qjit__load_u32(rv->rptr) != 0 || qjit__load_u32(rv->rptr + 4 * rv->row_blocks) != (uint32_t)blocks)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight residual row pointers run from %u to %u, not "
                           "0 to %lld", qjit__load_u32(rv->rptr), qjit__load_u32(rv->rptr + 4 * rv->row_blocks),
                           (long long)blocks);
    for (int64_t r = 0; r < rv->row_blocks; r++) {
        uint32_t a = qjit__load_u32(rv->rptr + 4 * r), e = qjit__load_u32(rv->rptr + 4 * (r + 1));
        if (e < a)
            return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight residual row pointers decrease at row "
                               "block %lld (%u, then %u)", (long long)r, a, e);
        for (uint32_t j = a; j < e; j++) {
            uint32_t kb = qjit__load_u32(rv->ridx + 4 * (size_t)j);
            if (kb >= rv->k_blocks || (j > a && kb <= qjit__load_u32(rv->ridx + 4 * (size_t)(j - 1))))
                return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight residual block %u of row block %lld "
                                   "has k-block %u (k-blocks must increase and stay below %lld)", j, (long long)r,
                                   kb, (long long)rv->k_blocks);
        }
    }
    return QJIT_OK;
}

/* The sums check over row slabs (qjit__parallel_for's items): the first
 * (row, k) whose Q8' + R8 leaves INT8, in row-major order, whatever order
 * the slabs are taken in. */
typedef struct sums_job {
    const qjit__weights_view *v;
    pthread_mutex_t lock;
    int64_t bad_n, bad_k;        /* the first failure so far; bad_n = N: none */
    int operand, sum;
} sums_job;

static void check_slab(void *arg, int64_t slab, void *scratch)
{
    sums_job *job = arg;
    const qjit__weights_view *v = job->v;
    int64_t n = slab * QJIT__PACK_N, K = v->K, bk = v->residual.block_k, first;
    int64_t count = qjit__residual_row(v, n, &first);
    pthread_mutex_lock(&job->lock);
    int later = n > job->bad_n;  /* a failure before this slab is already known */
    pthread_mutex_unlock(&job->lock);
    if (!count || later)
        return;
    size_t bytes = (size_t)QJIT__PACK_N * (size_t)K;
    int8_t *wq = scratch, *r8 = wq + bytes;
    v->scheme->operand(v, n, QJIT__PACK_N, wq, (uint8_t *)(r8 + bytes));
    qjit__residual_operand(v, n, QJIT__PACK_N, r8);
    /* The slab's first failure in row-major order: rows, then k. */
    int64_t bad_i = QJIT__PACK_N, bad_k = K;
    for (int64_t j = first; j < first + count; j++) {
        int64_t k0 = qjit__residual_kblock(v, j) * bk;
        for (int64_t i = 0; i <= bad_i && i < QJIT__PACK_N; i++)
            for (int64_t k = k0; k < k0 + bk; k++) {
                int sum = wq[i * K + k] + r8[i * K + k];
                if ((sum < -128 || sum > 127) && (i < bad_i || k < bad_k)) {
                    bad_i = i;
                    bad_k = k;
                    break;
                }
            }
    }
    if (bad_i == QJIT__PACK_N)
        return;
    pthread_mutex_lock(&job->lock);
    if (n + bad_i < job->bad_n || (n + bad_i == job->bad_n && bad_k < job->bad_k)) {
        job->bad_n = n + bad_i;
        job->bad_k = bad_k;
        job->operand = wq[bad_i * K + bad_k];
        job->sum = job->operand + r8[bad_i * K + bad_k];
    }
    pthread_mutex_unlock(&job->lock);
}

qjit_status qjit__residual_check_sums(qjit_context *ctx, const qjit__weights_view *v)
{
    if (!v->residual.blocks)
        return QJIT_OK;
    sums_job job = {.v = v, .bad_n = v->N, .bad_k = v->K};
    if (pthread_mutex_init(&job.lock, NULL) != 0)
        return qjit__error(ctx, QJIT_INTERNAL, "cannot create a lock for the residual's check");
    /* Per worker: a slab's operand, its residual operand, the unpacking. */
    size_t bytes = (size_t)QJIT__PACK_N * (size_t)v->K;
    qjit_status st = qjit__parallel_for(ctx, v->N / QJIT__PACK_N, 3 * bytes, check_slab, &job);
    pthread_mutex_destroy(&job.lock);
    if (st == QJIT_OK && job.bad_n < v->N)
        st = qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight residual at row %lld, k %lld takes the operand %d "
                         "to %d, outside INT8 (R8 must restore Q8 = Q8' + R8)", (long long)job.bad_n,
                         (long long)job.bad_k, job.operand, job.sum);
    return st;
}

static int64_t mask_words(const qjit__residual_view *rv) { return (rv->k_blocks + 31) / 32; }

size_t qjit__residual_mask_bytes(const qjit__residual_view *rv)
{
    return rv->block_n ? (size_t)rv->row_blocks * (size_t)mask_words(rv) * 8 : 0;
}

void qjit__residual_mask(const qjit__residual_view *rv, uint32_t *out)
{
    int64_t words = mask_words(rv);
    memset(out, 0, qjit__residual_mask_bytes(rv));
    for (int64_t r = 0; r < rv->row_blocks; r++) {
        uint32_t a = qjit__load_u32(rv->rptr + 4 * r), e = qjit__load_u32(rv->rptr + 4 * (r + 1));
        uint32_t *row = out + 2 * r * words;
        /* Entries of a word before any block of it: the row's count so far. */
        uint32_t j = a;
        for (int64_t w = 0; w < words; w++) {
            row[2 * w + 1] = j;
            while (j < e && qjit__load_u32(rv->ridx + 4 * (size_t)j) / 32 == (uint32_t)w)
                row[2 * w] |= 1u << (qjit__load_u32(rv->ridx + 4 * (size_t)j++) % 32);
        }
    }
}

/*------------------------------------------------------------------------
 * The reference
 *------------------------------------------------------------------------*/

int64_t qjit__residual_row(const qjit__weights_view *v, int64_t n, int64_t *first)
{
    const qjit__residual_view *rv = &v->residual;
    if (!rv->block_n) {
        *first = 0;
        return 0;
    }
    int64_t r = n / rv->block_n;
    *first = qjit__load_u32(rv->rptr + 4 * r);
    return (int64_t)qjit__load_u32(rv->rptr + 4 * (r + 1)) - *first;
}

int64_t qjit__residual_kblock(const qjit__weights_view *v, int64_t j)
{
    return qjit__load_u32(v->residual.ridx + 4 * (size_t)j);
}

void qjit__residual_operand(const qjit__weights_view *v, int64_t n0, int64_t rows, int8_t *r8)
{
    const qjit__residual_view *rv = &v->residual;
    int bn = rv->block_n, bk = rv->block_k;
    int64_t K = v->K;
    uint8_t nib[QJIT__PACK_N * 128];
    for (int64_t n = n0; n < n0 + rows; n += QJIT__PACK_N) {
        int64_t first, count = qjit__residual_row(v, n, &first);
        int s = (int)(n % bn) / QJIT__PACK_N;    /* the slab of its block */
        for (int64_t j = first; j < first + count; j++) {
            int64_t kb = qjit__residual_kblock(v, j);
            const uint8_t *src = rv->rweight + (size_t)j * block_bytes(bn, bk) + (size_t)s * slab_bytes(bk);
            qjit__unpack4_rows(src, QJIT__PACK_N, bk, nib);
            for (int i = 0; i < QJIT__PACK_N; i++)
                for (int c = 0; c < bk; c++)
                    r8[(n - n0 + i) * K + kb * bk + c] = (int8_t)(nib[i * bk + c] - QJIT__RESIDUAL_BIAS);
        }
    }
}
