/* residual.h -- the sparsity budget: a sparse 4-bit residual on the weight
 * blocks of a two-level scheme where it removes the most output error
 * (docs/schemes.md, "Sparse residual"). Block selection, the residual's
 * sections of the packed buffer, their checks, and its share of the CPU
 * reference.
 *
 * ARITHMETIC. Blocks are block_n x block_k tiles of W. In a kept block the
 * residual is taken in the INT8 domain of the scheme's first level, R8 =
 * clamp(Q8 - Q8', -8, 7), with Q8' the operand the kernels compute; it
 * shares that operand's INT32 accumulator and epilogue scale, so acc =
 * sum_k Xq (Q8' + R8) on the kept blocks (a budget of 1 restores Q8 up to
 * the clamp). A block's score is
 *     sum over its (n, k) of H[k] (E^2 - (E - s R8)^2),  E = W - s Q8',
 * s the row's scale, H the Hessian diagonal (sum_t X[t,k]^2 of calibration
 * tokens; 1 without any). The kept blocks are the ceil(rho x blocks) best
 * with a positive score (ties: the lower block index), at most.
 *
 * SECTIONS (after the scheme's; packed.h, header flags bit 0):
 *   rptr     u32 x (N / block_n + 1): row block r's blocks are entries
 *            rptr[r] .. rptr[r + 1] - 1 of the two sections below
 *   ridx     u32 per block: its k-block (columns ridx * block_k ..),
 *            strictly increasing within a row block
 *   rweight  block_n x block_k / 2 bytes per block, in ridx order: its
 *            block_n / 16 slabs of 16 rows, each block_k / 64 blocks of the
 *            4-bit layout (layout.h), holding R8 + 8 (0..15), so a kernel's
 *            (u + 0x78787878) ^ 0x80808080 is four INT8 values of R8. */
#ifndef QJIT_RESIDUAL_H
#define QJIT_RESIDUAL_H

#include <stddef.h>
#include <stdint.h>
#include "qjit.h"
#include "view.h"
#include "scheme.h"

#define QJIT__RESIDUAL_SECTIONS 3
#define QJIT__RESIDUAL_BIAS 8            /* stored nibble = R8 + 8 */

extern const char *const qjit__residual_names[QJIT__RESIDUAL_SECTIONS];

/* What a quantization with a residual needs, from validated options. */
typedef struct qjit__residual_plan {
    int block_n, block_k;
    int64_t row_blocks, k_blocks;
    int64_t max_blocks;          /* ceil(rho x blocks); 0: dense */
} qjit__residual_plan;

/* Checks the residual fields of o (sparsity, block size, calibration) for
 * scheme s at (group, N, K), without reading calibration data. A budget of
 * 0 gives max_blocks 0. @return QJIT_INVALID_ARGUMENT naming the field. */
qjit_status qjit__residual_plan_make(qjit_context *ctx, const qjit__scheme *s, int group, int64_t N, int64_t K,
                                     const qjit_quantize_options *o, qjit__residual_plan *plan);

/* Bytes of the three sections for `blocks` kept blocks. */
void qjit__residual_sizes(const qjit__residual_plan *plan, int64_t blocks, size_t bytes[QJIT__RESIDUAL_SECTIONS]);

/* A block and its score, for the ranking. */
typedef struct qjit__residual_rank {
    double score;
    int64_t index;
} qjit__residual_rank;

/* The kept blocks: indices of blocks with a positive score, the best first
 * (ties: the lower index), at most max_blocks, returned in ascending order
 * in kept[]; rank[] is scratch of `count` entries. @return how many. */
int64_t qjit__residual_select(const double *scores, int64_t count, int64_t max_blocks, qjit__residual_rank *rank,
                              int64_t *kept);

/* What choosing and writing the blocks needs, taken before anything is
 * written (so a refusal changes nothing). */
typedef struct qjit__residual_work {
    double *H, *scores;          /* H: the Hessian diagonal (K) */
    qjit__residual_rank *rank;
    int64_t *kept;               /* the kept blocks, ascending */
    void *scratch;               /* one row block's */
    size_t nH, nblocks, scratch_bytes;
    int weighted;                /* H came from calibration or was given */
} qjit__residual_work;

/* Takes the work of plan and reads o's Hessian diagonal: H[k] = sum_t
 * X[t,k]^2 of the calibration rows, or the diagonal given, or none
 * (unweighted). @return QJIT_OUT_OF_MEMORY, or QJIT_INVALID_ARGUMENT for a
 * non-finite calibration value or a negative or non-finite diagonal entry;
 * then nothing is held. */
qjit_status qjit__residual_begin(qjit_context *ctx, const qjit__residual_plan *plan, const qjit_quantize_options *o,
                                 int64_t K, qjit__residual_work *w);
/* Scores every block of the weights src against the quantized base (a view
 * without residual) and keeps the best into w->kept; logs when the choice
 * is unweighted (`layer` names the layer). @return how many were kept. */
int64_t qjit__residual_choose(qjit_context *ctx, const qjit__residual_plan *plan, const qjit__slabs *src,
                              const qjit__weights_view *base, const char *layer, qjit__residual_work *w);
/* Writes the sections of the `blocks` kept blocks at dst[i]. */
void qjit__residual_write(const qjit__residual_plan *plan, const qjit__slabs *src, const qjit__weights_view *base,
                          qjit__residual_work *w, int64_t blocks, uint8_t *const dst[QJIT__RESIDUAL_SECTIONS]);
/* Releases the work (nothing if none was taken). */
void qjit__residual_end(qjit_context *ctx, qjit__residual_work *w);

/* Checks a stored residual against its view (block size, row pointers,
 * indices) and fills v->residual's pointers. The section table entries are
 * in v->residual.sections. @return QJIT_CORRUPT_WEIGHTS with the reason. */
qjit_status qjit__residual_check(qjit_context *ctx, qjit__weights_view *v);

/* The kernels add R8 to the scheme's INT8 operand Q8' before the MMA
 * (templates/lib/residual.cu), which holds where Q8' + R8 is an INT8 for
 * every kept weight: the quantizer's R8 = clamp(Q8 - Q8', -8, 7) makes it
 * so, a buffer from elsewhere may not. Decodes the row blocks that keep
 * blocks. @return QJIT_CORRUPT_WEIGHTS naming the first weight that breaks
 * it, or QJIT_OUT_OF_MEMORY. */
qjit_status qjit__residual_check_sums(qjit_context *ctx, const qjit__weights_view *v);

/* THE KERNELS' INDEX (rmask, built by the layer from rptr and ridx): per
 * row block r and word w of 32 k-blocks, two u32 at (r * words + w) * 8:
 * the presence bits of k-blocks 32 w .. 32 w + 31 (bit kb % 32) and the
 * entry of the first of them, so block kb's entry is that plus the bits
 * below its own (templates/lib/residual.cu). words = ceil(k_blocks / 32).
 * @return its bytes. */
size_t qjit__residual_mask_bytes(const qjit__residual_view *rv);
/* Writes it into out (qjit__residual_mask_bytes, 4-byte aligned). */
void qjit__residual_mask(const qjit__residual_view *rv, uint32_t *out);

/* Row n's kept blocks: entries *first .. *first + count - 1. */
int64_t qjit__residual_row(const qjit__weights_view *v, int64_t n, int64_t *first);
/* The k-block of entry j. */
int64_t qjit__residual_kblock(const qjit__weights_view *v, int64_t j);
/* The reference's operand: R8 of the kept blocks of rows [n0, n0 + rows)
 * (multiples of 16) into r8 (rows x K); columns of blocks not kept are not
 * written. */
void qjit__residual_operand(const qjit__weights_view *v, int64_t n0, int64_t rows, int8_t *r8);

#endif
