/* view.h -- a verified view into a packed-weight buffer (packed.h reads
 * and checks the buffer into one): its scheme, shape, sections and sparse
 * residual, addressed in place. What the schemes, the residual and the
 * reference read of a buffer, apart from how the buffer is parsed. */
#ifndef QJIT_VIEW_H
#define QJIT_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include "scheme.h"

typedef struct qjit__section_view {
    char name[16];
    size_t offset, bytes;        /* within the payload */
} qjit__section_view;

/* The sparse residual of a view (residual.h); block_n == 0: none. */
typedef struct qjit__residual_view {
    int block_n, block_k;
    int weighted;                /* chosen by Hessian-weighted error */
    int64_t row_blocks, k_blocks, blocks;
    const uint8_t *rptr, *ridx, *rweight;   /* in the payload */
    qjit__section_view sections[3];
} qjit__residual_view;

/* A verified view into a packed buffer (no copies). */
struct qjit__weights_view {
    const qjit__scheme *scheme;
    uint32_t version;
    int group;                   /* as stored: 0 = per channel */
    int group_size;              /* effective: K if group == 0 */
    int64_t N, K;
    int32_t param;               /* the scheme's layer parameter */
    const uint8_t *payload;      /* start of payload */
    size_t payload_bytes, header_bytes;
    int nsections;               /* the scheme's, in its order */
    qjit__section_view sections[QJIT__MAX_SECTIONS];
    qjit__residual_view residual;   /* whole-layer: not moved by qjit__view_rows */
};

/* Section i of a view (the scheme's i-th). */
static inline const uint8_t *qjit__view_section(const qjit__weights_view *v, int i)
{
    return v->payload + v->sections[i].offset;
}

/* Whether section i of a view is the layer's own (scheme.h: layer_bytes),
 * not slabs of its rows. */
static inline int qjit__layer_section(const qjit__weights_view *v, int i)
{
    return v->scheme->layer_bytes && v->scheme->layer_bytes(i, v->K) > 0;
}

/* A two-part layer's INT8 channels (the first ones of its order, or its
 * set's); -1 for a layer of one part. */
static inline int64_t qjit__int8_channels(const qjit__weights_view *v)
{
    return v->scheme->two_part ? (int64_t)v->param * QJIT__A8_BLOCK : -1;
}

/* A two-part layer's channel order (K little-endian u32: the caller's
 * channel at each position); NULL: the caller's own. */
static inline const uint8_t *qjit__view_order(const qjit__weights_view *v)
{
    return v->scheme->two_part && v->scheme->order_section >= 0 ? qjit__view_section(v, v->scheme->order_section)
                                                                 : NULL;
}

/* A two-part layer in the caller's order: its INT8 channels' set (K / 8
 * bytes, bit k % 8 of byte k / 8 for channel k); NULL: none (one part, or
 * a layer order whose first channels are the INT8 ones). */
static inline const uint8_t *qjit__view_a8set(const qjit__weights_view *v)
{
    return v->scheme->two_part && v->scheme->order_section < 0 ? qjit__view_section(v, v->scheme->set_section)
                                                                : NULL;
}

/* The view of rows n0 .. n0 + rows - 1 (multiples of 16): every section is
 * a whole number of 16-row slabs (or the layer's own, kept whole), so a
 * sub-view is moved offsets. */
qjit__weights_view qjit__view_rows(const qjit__weights_view *v, int64_t n0, int64_t rows);

#endif
