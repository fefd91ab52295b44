/* scheme.h -- the host side of the quantization schemes: each scheme's
 * quantizer, packer and reference operand (one file per scheme,
 * scheme_<name>.c), and the one table (schemes.c) that maps a qjit_scheme
 * value to it and to its Lua module (templates/schemes/<name>.lua). The
 * container (packed.c), the layer and the CPU reference call schemes only
 * through this table. */
#ifndef QJIT_SCHEME_H
#define QJIT_SCHEME_H

#include <stddef.h>
#include <stdint.h>
#include "qjit.h"

#define QJIT__MAX_SECTIONS 8

typedef struct qjit__weights_view qjit__weights_view;

/* The weights being quantized, read one 16-row slab at a time as floats. */
typedef struct qjit__slabs {
    const void *W;               /* row-major N x K */
    qjit_dtype dtype;
    int64_t N, K;
} qjit__slabs;

/* Rows 16 nb .. 16 nb + 15 of the weights, as floats, into out (16 x K). */
void qjit__slab_load(const qjit__slabs *s, int64_t nb, float *out);

typedef struct qjit__scheme {
    qjit_scheme id;
    const char *name;            /* its Lua module: templates/schemes/<name>.lua */
    int nsections;
    const char *sections[QJIT__MAX_SECTIONS];   /* in buffer order; the names the kernels bind */
    int param_is_alpha;          /* 1: the layer parameter is log2 of an amplifier (qjit_weights_info.alpha) */
    int act_bits;                /* the activations' bits: 8, or 4 (0 in the table means 8) */
    int two_part;                /* 1: activations in two parts, the layer's first param x
                                    QJIT__A8_BLOCK channels (in its order, section order_section)
                                    INT8 and the rest INT4, each with its own scale per token and
                                    INT32 accumulator (w4ax) */
    int order_section;           /* with two_part: the section of the layer's channel order, or -1
                                    (the caller's order, set_section saying which channels are INT8) */
    int set_section;             /* with two_part and no order: the section of the INT8 channels' set
                                    (K / 8 bytes, bit k % 8 of byte k / 8 for channel k) */
    int shared_scale;            /* with two_part: one scale per token for both parts (the INT8
                                    part at the INT4 part's step) and one INT32 sum (w4ax-s) */
    int reads_v1;                /* 1: buffers of format version 1 (qjit 0.1) may hold this scheme */
    /* Why `group` cannot be used with this scheme (NULL: it can). */
    const char *(*group_problem)(int group);
    /* Why K cannot be used (NULL: it can); NULL: any K the container takes. */
    const char *(*k_problem)(int64_t K);
    /* Bytes of section i per 16-row slab, for K columns in groups of
     * `group` (0: per channel): a section is a whole number of slabs, or
     * (layer_bytes(i, K) > 0, slab_bytes 0) the layer's own, whole in
     * every view of its rows. layer_bytes NULL: none is. */
    size_t (*slab_bytes)(int i, int64_t K, int group);
    size_t (*layer_bytes)(int i, int64_t K);
    /* Scratch bytes quantize_slab needs. */
    size_t (*scratch_bytes)(int64_t K, int group);
    /* A layer-wide parameter read from all the weights before any slab is
     * quantized (w4a8-is: log2 of the amplifier), or NULL (parameter 0).
     * May refuse (the message names the layer). */
    qjit_status (*prepare)(qjit_context *ctx, const qjit__slabs *w, int group, const qjit_quantize_options *opts,
                           int32_t *param);
    /* The layer's own bytes of the sections that have some (layer_bytes),
     * written into layer[i] after prepare (which may refuse, the message
     * naming the layer), before any slab; NULL: none. */
    qjit_status (*prepare_layer)(qjit_context *ctx, const qjit__slabs *w, int group, const qjit_quantize_options *opts,
                                 int32_t *param, uint8_t *const layer[]);
    /* Quantizes one finite 16 x K slab w into dst[i], section i's share of
     * the slab; layer[i]: the layer's own bytes of section i (as written
     * by prepare_layer). Cannot fail. */
    void (*quantize_slab)(const float *w, int64_t K, int group, int32_t param, const uint8_t *const layer[],
                          void *scratch, uint8_t *const dst[]);
    /* Why a stored layer parameter is not one this scheme writes for K
     * columns (NULL: it is); NULL: only 0. */
    const char *(*param_problem)(int32_t param, int64_t K);
    /* Checks the layer's own bytes of a verified buffer (a checksum proves
     * the bytes, not that they mean anything); NULL: nothing to check.
     * @return QJIT_CORRUPT_WEIGHTS with the reason. */
    qjit_status (*check_layer)(qjit_context *ctx, const qjit__weights_view *v);
    /* The reference: rows [n0, n0 + rows) (rows a multiple of 16) of the
     * INT8 MMA operand the kernels compute, into wq (rows x K); scratch holds
     * rows x K bytes. For fold schemes, the per-group 4-bit values. */
    void (*operand)(const qjit__weights_view *v, int64_t n0, int64_t rows, int8_t *wq, uint8_t *scratch);
    /* Fold schemes (w4a8-is): the integer scale of row n and group gi that
     * multiplies the group's INT32 sum; NULL for the others. */
    int32_t (*group_scale)(const qjit__weights_view *v, int64_t n, int64_t gi);
    /* The sparse residual (runtime/residual.c): the INT8 values of one row
     * that the scheme's operand approximates (its first level), with the
     * scale the epilogue applies to both; NULL: the scheme takes no
     * residual. residual_problem: why it takes none at `group` (NULL: it
     * does), when residual_target is set. */
    float (*residual_target)(const float *w, int64_t K, int8_t *q8);
    const char *(*residual_problem)(int group);
    /* The sections the epilogue reads per output channel: its float scale,
     * and its int32 zero point (-1: none; an empty section: none either). */
    int scale_section, zero_section;
} qjit__scheme;

/* The scheme of a value; NULL if there is none. */
const qjit__scheme *qjit__scheme_get(qjit_scheme id);

/* The registered schemes (for tests and listings). */
extern const qjit__scheme *const qjit__schemes[];
extern const int qjit__nschemes;

/* A two-part layer's INT8 channels come in blocks of this many. */
#define QJIT__A8_BLOCK 128

/* Symmetric INT8 of one row: s = max|W| / limit (1 if it underflows to 0),
 * q = clamp(round(W / s), -limit, limit), round half away from zero (a float
 * division, then roundf). Returns s. Level 1 of the two-level schemes is
 * limit 119 (the protective range, QJIT__Q8_PROTECTED); plain INT8 is 127. */
#define QJIT__Q8_PROTECTED 119
float qjit__symmetric_row(const float *w, int64_t K, int limit, int8_t *q);
/* Scratch of a two-level slab: Q8 and Q4 of 16 rows, two parameter bytes
 * per row and group. */
size_t qjit__scratch_two_level(int64_t K, int group);
/* The first level of the two-level schemes as a residual target:
 * qjit__symmetric_row with the protective range. */
float qjit__level1_row(const float *w, int64_t K, int8_t *q8);
/* The reference operand of a scheme whose section 0 holds 4-bit values
 * stored offset by 8 (Q4 + 8): Q4 of rows [n0, n0 + rows) into wq; scratch
 * holds rows x K bytes. */
void qjit__operand_offset8(const qjit__weights_view *v, int64_t n0, int64_t rows, int8_t *wq, uint8_t *scratch);
/* ceil(share x total) for a share in [0, 1], forgiving the last bits of a
 * product that should be whole (0.1 x 640 is 64.00000000000001 in doubles);
 * at most total. */
int64_t qjit__ceil_share(double share, int64_t total);
/* Per-channel symmetric INT4 of a 16 x K slab (w4a4, w4ax): sw = max|W| / 7
 * (1 if it underflows to 0), Wq = clamp(round(W / sw), -7, 7) stored + 8 in
 * the 4-bit block layout into q, the 16 scales (floats) into scale;
 * scratch: 2 x 16 x K bytes. */
void qjit__quantize_int4_slab(const float *w, int64_t K, void *scratch, uint8_t *q, uint8_t *scale);
/* w4ax's channel order (scheme_w4ax.c): perm[j] = the channel at position
 * j; the a8_channels largest amax (ties: the lower k) first, then the
 * others, each part in ascending k. scratch: qjit__w4ax_order_scratch(K). */
void qjit__w4ax_order(const float *amax, int64_t K, int64_t a8_channels, uint32_t *perm, void *scratch);
size_t qjit__w4ax_order_scratch(int64_t K);
/* Round half away from zero of num / den for den > 0, in integers. */
int qjit__round_div(int num, int den);
/* The group parameters of a view: entry for (row block nb, group gi). */
const uint8_t *qjit__gparams_entry(const qjit__weights_view *v, int64_t nb, int64_t gi);
/* Channel n's epilogue scale and zero point (0 where the scheme has none). */
void qjit__channel(const qjit__weights_view *v, int64_t n, float *scale, int32_t *zero);
/* Bytes per 16-row slab of the three sections of a 4-bit scheme with group
 * parameters and a per-channel scale (w4a8-lqq, w4a8-is): qweight, gparams,
 * scale. */
size_t qjit__slab_bytes_q4(int i, int64_t K, int group);
/* Group-size check shared by schemes taking 0 or multiples of 64. */
const char *qjit__group_0_or_64(int group);

#endif
