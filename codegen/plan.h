/* plan.h -- a layer's launch plan, as templates/dispatch.lua states it and
 * the codegen floor reads it (typed records, no text): the packed sections
 * the weights must hold, and per M bucket the kernels to launch, the
 * arguments each takes (its slots, by name), the workspace sections and the
 * tensor maps. The layer binds the slots once per bucket; a forward patches
 * only the values of the call. */
#ifndef QJIT_PLAN_H
#define QJIT_PLAN_H

#include <stdint.h>
#include "qjit.h"

#define QJIT__PLAN_NAME 24
#define QJIT__PLAN_SECTIONS 8
#define QJIT__PLAN_BUCKETS 8
#define QJIT__PLAN_SLOTS 24
#define QJIT__PLAN_WS 8
#define QJIT__PLAN_MAPS 4

/* What a kernel argument is bound to. */
typedef enum qjit__slot_kind {
    QJIT__SLOT_WEIGHTS,          /* device address of a packed-weight section (per layer) */
    QJIT__SLOT_WORKSPACE,        /* device address of a workspace section (per call) */
    QJIT__SLOT_COUNT,            /* a workspace section's size in 4-byte words, as int (per call) */
    QJIT__SLOT_MAP,              /* a tensor map (of weights: per bucket; of the workspace: per call) */
    QJIT__SLOT_X,                /* the call's FP16 tokens */
    QJIT__SLOT_Y,                /* the call's output */
    QJIT__SLOT_M,                /* the token count, int */
    QJIT__SLOT_N,                /* output channels, int */
    QJIT__SLOT_K,                /* input channels, int */
    QJIT__SLOT_EPOCH,            /* the call's epoch, u64 (fused quantization) */
    QJIT__SLOT_PARAM,            /* the layer's parameter as its kernels take it, int (a two-part layer: its INT8 channels) */
    QJIT__SLOT_BIAS              /* device address of the layer's bias, N floats */
} qjit__slot_kind;

typedef struct qjit__slot {
    char name[QJIT__PLAN_NAME];
    qjit__slot_kind kind;
    int ref;                     /* index of the section / workspace section / map; -1: an optional
                                    workspace section the bucket lacks (bound to 0) */
} qjit__slot;

/* One grid dimension: ceil((base + per_m * M) / div). */
/* A launch dimension at M: ceil((base + per_m * M) / div) * mul, at most
 * max where max > 0 (a persistent kernel's CTAs: one per place on the SMs). */
typedef struct qjit__grid_dim {
    int64_t base, per_m, div, mul, max;
} qjit__grid_dim;

typedef struct qjit__kernel_plan {
    char *key;                   /* canonical variant key (qjit__strdup) */
    char *signature;             /* the slot names joined with ',' (checked against the kernel's facts) */
    qjit__grid_dim grid[3];
    int cluster;                 /* CTAs per cluster along z (1: none) */
    int nslots;
    qjit__slot slots[QJIT__PLAN_SLOTS];
    int flags;                   /* kernels taking an epoch: the workspace section of their flags,
                                    cleared while a stream is captured; else -1 */
} qjit__kernel_plan;

/* The quantized tokens' parts, as workspace sections hold them. */
enum { QJIT__TOKENS_XQ = 1, QJIT__TOKENS_SX = 2, QJIT__TOKENS_ROWSUM = 3 };

/* A workspace section: fixed + per_m * M + per_mtile * ceil(M / tile_m)
 * bytes, laid out in order, each 256-byte aligned. */
typedef struct qjit__ws_section {
    char name[QJIT__PLAN_NAME];
    uint64_t fixed, per_m, per_mtile;
    int tokens;                  /* what the activation kernel writes, or the caller passes in
                                    (qjit_tokens): QJIT__TOKENS_XQ, _SX, _ROWSUM; 0: other */
} qjit__ws_section;

/* Element types of tensor maps. */
typedef enum qjit__map_type { QJIT__MAP_U8, QJIT__MAP_U16, QJIT__MAP_U32, QJIT__MAP_U64 } qjit__map_type;

/* What a tensor map covers: a weight section (encoded once per layer), a
 * workspace section or the call's output (both encoded per call). */
typedef enum qjit__map_source { QJIT__MAP_OF_WEIGHTS, QJIT__MAP_OF_WORKSPACE, QJIT__MAP_OF_OUTPUT } qjit__map_source;

/* A 2D tensor map: rows of `cols` elements of `type`, `stride` bytes apart,
 * read in boxes of box_cols x box_rows; rows = rows + rows_per_m * M. */
typedef struct qjit__map_plan {
    char name[QJIT__PLAN_NAME];
    qjit__map_source source;
    int ref;                     /* that section's index (0 for the output) */
    qjit__map_type type;
    uint64_t cols, rows, rows_per_m, stride;
    uint32_t box_cols, box_rows;
    int swizzle;                 /* 0 or 128 (bytes) */
} qjit__map_plan;

typedef struct qjit__bucket_plan {
    int64_t max_m;               /* 0: any larger M */
    int tile_m;                  /* the GEMM's tokens per CTA (sizes per_mtile sections) */
    int has_quant;               /* 0: the GEMM quantizes its own tokens */
    int token_pack;              /* INT4 token values per byte of xq: 1, or 2 (mma=s4) */
    qjit__kernel_plan quant, gemm, gemm_acc;
    int nws;
    qjit__ws_section ws[QJIT__PLAN_WS];
    int nmaps;
    qjit__map_plan maps[QJIT__PLAN_MAPS];
} qjit__bucket_plan;

typedef struct qjit__section_plan {
    char name[QJIT__PLAN_NAME];
    uint64_t bytes;
    int derived;                 /* 1: not in the packed buffer; the layer builds it (after the stored ones) */
} qjit__section_plan;

typedef struct qjit__layer_plan {
    int nsections;
    qjit__section_plan sections[QJIT__PLAN_SECTIONS];
    int nbuckets;
    qjit__bucket_plan buckets[QJIT__PLAN_BUCKETS];
} qjit__layer_plan;

typedef struct qjit__plan_request {
    const char *scheme;          /* Lua name of the scheme (templates/schemes/<name>.lua) */
    int group;                   /* 0: per channel */
    int64_t N, K;
    const char *arch;            /* target ("sm_90a") */
    int sms;                     /* multiprocessors of the device (0: unknown) */
    const char *variant;         /* a GEMM key for every bucket, or NULL */
    int rblock_n, rblock_k;      /* the weights' sparse residual blocks; 0: dense weights */
    int64_t rblocks;             /* ... and how many are kept */
    const char *dtype;           /* the tokens' and outputs' floats: "f16" (NULL too) or "bf16" */
    int bias;                    /* 1: the layer has a bias (its GEMMs add it in the epilogue) */
    const char *picks;           /* buckets chosen by measurement, "MAX_M KEY" lines (dispatch.lua's
                                    D.plan), or NULL: the table's */
} qjit__plan_request;

/* Asks dispatch.lua for the layer's plan. The caller holds ctx->lock and
 * releases *out with qjit__plan_release (also after a failure). A variant
 * that does not fit the layer is QJIT_INVALID_ARGUMENT or QJIT_INVALID_KEY
 * with the reason. */
qjit_status qjit__plan_layer(qjit_context *ctx, const qjit__plan_request *req, qjit__layer_plan *out);
void qjit__plan_release(qjit_context *ctx, qjit__layer_plan *p);

#endif
