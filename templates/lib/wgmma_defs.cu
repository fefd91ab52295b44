/* The warpgroup-MMA pipes' tile (lib/wgmma_defs.cu): BM tokens x BN weight
 * rows x BK k per CTA, WG_M x WG_N warpgroups, MI 64-row wgmma blocks per
 * warpgroup of NT tokens each; a stage holds the token tile (the swizzled B
 * operand, on a 1024-byte boundary), the packed weights and the group
 * parameters. */
#define BM {{ p.tile_m }}
#define BN {{ p.tile_n }}
#define BK {{ p.tile_k }}
#define WG_M {{ p.warps_m }}            /* warpgroups along the tokens */
#define WG_N {{ p.wg_n }}               /* warpgroups along the weight rows */
#define THREADS {{ p.consumers }}              /* the MMA warpgroups' threads (a producer warpgroup is past them) */
#define STAGES {{ p.stages }}
#define GROUP {{ p.group }}             /* 0: one group per row (per channel) */
#define MI {{ p.mi }}                   /* 64-row wgmma blocks per warpgroup */
#define NT {{ p.nt }}                   /* tokens per wgmma */
#define NG {{ p.ng }}                   /* group-parameter entries per 16-row block per stage */
#define X_STAGE {{ p.x_bytes }}
#define W_STAGE {{ p.w_bytes }}
#define STAGE_BYTES {{ p.stage_bytes }}
#define LDC {{ p.ldc }}                 /* padded row of the output tile in shared memory */
#define SPLIT {{ p.split }}
#define X_OFF 0                         /* a stage: activations, packed weights, group parameters */
#define W_OFF X_STAGE
#define GP_OFF (X_STAGE + W_STAGE)
//% if p.sparse == 1 and p.rslots > 0 then
/* The residual's own ring (gemm_tma.cu): RSLOTS slots of one tile's
 * residual blocks (512 bytes each) past the stages; a stage keeps its
 * tile's presence word, the tile's ordinal among those that carry a
 * residual, and where each present block starts in rweight. */
#define RB_OFF (GP_OFF + {{ p.gp_bytes }})
#define RSLOTS {{ p.rslots }}
#define R_RING_OFF {{ p.r_ring_off }}
#define R_SLOT_BYTES {{ p.r_bytes }}
//% elseif p.sparse == 1 and p.rpieces > 0 then
/* The residual's ring of blocks (gemm_tma.cu): RPIECES places of one 16 x
 * 64 block (512 bytes) past the stages, handed out in order, a kept
 * residual block's part of a tile (R_GROUP of them, lying together in
 * rweight) at a time, so that one bulk copy brings it (as in the room,
 * below); a stage keeps its tile's presence word and the place of its
 * first block. Parts come in the order of their first blocks' bits
 * (R_HEADS): a block's place is its part's rank among the present ones
 * times R_GROUP past that place, plus its place in the part. The ring
 * holds whole parts (RPIECES a multiple of R_GROUP, every tile's count
 * too), so none wraps. */
#define RB_OFF (GP_OFF + {{ p.gp_bytes }})
#define RPIECES {{ p.rpieces }}
#define R_RING_OFF {{ p.r_ring_off }}
//% elseif p.sparse == 1 then
#define R_OFF (GP_OFF + {{ p.gp_bytes }})   /* the tile's residual blocks, 512 bytes each */
#define RB_OFF (R_OFF + {{ p.r_bytes }})    /* their presence word */
//% end
//% if p.sparse == 1 and p.rslots == 0 and grouped then
/* The room and the ring as the TMA pipe fills them: the 16 x 64 blocks of
 * one kept residual block (RBN x RBK) lie together, in rweight's order
 * (16-row slab, then 64-k step), so that one bulk copy brings the block's
 * part of the tile. Each bulk copy has a fixed cost in the SM's copy unit
 * that its bytes do not: per 512-byte block it cost 1-4 points over dense,
 * from L2 as from DRAM (bench/results/2026-11-28-session44). Where a
 * residual block spans K tiles (RBK > BK) its part in a tile is not
 * contiguous: a 16 x 64 block a copy.
 * R_SLABS: a residual block's 16-row slabs in a tile; R_KSTEPS: its 64-k
 * steps; R_HEAD(bit): whether block `bit` (16-row block bit / (BK / 64),
 * step bit % (BK / 64)) starts its residual block's part; R_IN(bit): its
 * place in the part. */
#define R_SLABS (RBK > BK ? 1 : RBN < BN ? RBN / 16 : BN / 16)
#define R_KSTEPS (RBK <= BK ? RBK / 64 : 1)
#define R_GROUP (R_SLABS * R_KSTEPS)
#define R_HEAD(bit) (((bit) / (BK / 64)) % R_SLABS == 0 && ((bit) % (BK / 64)) % R_KSTEPS == 0)
#define R_IN(bit) ((((bit) / (BK / 64)) % R_SLABS) * R_KSTEPS + ((bit) % (BK / 64)) % R_KSTEPS)
//% end
//% if p.sparse == 1 and p.rpieces > 0 then
/* The bits of a tile's presence word that R_HEAD holds for. */
static constexpr u32 r_heads()
{
    u32 m = 0u;
    for (int bit = 0; bit < (BN / 16) * (BK / 64); ++bit)
        m |= R_HEAD(bit) ? 1u << bit : 0u;
    return m;
}
#define R_HEADS r_heads()
#define R_HEAD_OF(bit) ((bit) - R_IN(bit) / R_KSTEPS * (BK / 64) - R_IN(bit) % R_KSTEPS)
#define R_PART_AT(rfirst, rbits, head) \
    (((rfirst) + R_GROUP * __popc((rbits) & R_HEADS & ((1u << (head)) - 1u))) % RPIECES)
#define R_BLOCK_AT(rtile, rbits, rfirst, bit) \
    ((rtile) + (R_PART_AT(rfirst, rbits, R_HEAD_OF(bit)) + R_IN(bit)) * 512)
static_assert(RPIECES % R_GROUP == 0, "the ring holds whole parts of residual blocks");
//% end
//% if p.sparse == 1 and p.rpieces == 0 and p.rslots == 0 and grouped then
/* In the room, R_PLACE(bit): the place of block `bit` (its part's first
 * block's place is where the part's copy goes). */
#define R_PLACE(bit) (R_ROW_PLACE((bit) / (BK / 64)) + R_STEP_PLACE((bit) % (BK / 64)))
/* An MMA warp's block at its i-th 16-row block (nbl0 + 4 i) and step kb:
 * R_PLACE splits into a part of the 16-row block and one of the step, and
 * where a residual block has at most 4 slabs in the tile (they divide the
 * warp's stride of 4) the first part moves by 4 x BK / 64 places per i, so
 * the address is the warp's own (hoisted out of the K loop) plus a
 * constant, as without the grouping. */
#define R_ROW_PLACE(nbl) (((nbl) / R_SLABS) * (BK / 64) * R_SLABS + ((nbl) % R_SLABS) * R_KSTEPS)
#define R_STEP_PLACE(kb) (((kb) / R_KSTEPS) * R_SLABS * R_KSTEPS + (kb) % R_KSTEPS)
#if R_SLABS <= 4
#define R_WARP_AT(rtile, rbits, rfirst, nbl0, i, kb) \
    ((rtile) + (R_ROW_PLACE(nbl0) + (i) * 4 * (BK / 64) + R_STEP_PLACE(kb)) * 512)
#else
#define R_WARP_AT(rtile, rbits, rfirst, nbl0, i, kb) ((rtile) + (R_ROW_PLACE((nbl0) + (i) * 4) + R_STEP_PLACE(kb)) * 512)
#endif
//% elseif p.sparse == 1 and p.rpieces == 0 then
#define R_BLOCK_AT(rtile, rbits, rfirst, bit) ((rtile) + (bit) * 512)   /* block `bit` of the tile's residual */
//% end
//% if p.sparse == 1 and not (p.rpieces == 0 and p.rslots == 0 and grouped) then
#define R_WARP_AT(rtile, rbits, rfirst, nbl0, i, kb) R_BLOCK_AT(rtile, rbits, rfirst, ((nbl0) + (i) * 4) * (BK / 64) + (kb))
//% end
//% if p.sparse == 1 and p.rslots == 0 then
/* The bits of the warpgroup at g along the rows in a tile's presence word:
 * those of its BN / WG_N / 16 row blocks, BK / 64 each. */
#define R_WIDTH ((BN / WG_N / 16) * (BK / 64))
#define R_WG_BITS(g) ((R_WIDTH >= 32 ? 0xFFFFFFFFu : (1u << R_WIDTH) - 1u) << ((g) * R_WIDTH % 32))
//% end
//% if p.excp == 1 then
/* Explicit dequantization (excp=1, gemm_tma.cu): the INT8 weights' ring past
 * the stages, W8_SLOTS slots of BN rows x BK bytes, 128-byte swizzled as
 * the token tile is (the A operand through a descriptor); each
 * dequantizing warp takes MD 16-row blocks of the tile (warp q: q, q + 4,
 * ...). */
#define W8_OFF {{ p.w8_off }}
#define W8_SLOTS {{ p.w8_slots }}
#define W8_BYTES (BN * BK)
#define MD (BN / 64)
//% end
#define ACC_REGS (MI * NT / 2)          /* accumulators per thread, ACC(q) in register order */
//% if p.stash == 1 then
#define ACC_REG(q) acc[(q) / (NT / 2)][(q) % (NT / 2)]
/* Two activation parts with one set of sums (lib/stash.cu): after the main
 * loop acc holds the INT4 part's; the INT8 part's are read back from the
 * workspace. */
#define ACC(q) part8_sum(p8, n8, mask8, (q), tid)
#define ACC2(q) ACC_REG(q)
//% else
#define ACC(q) acc[(q) / (NT / 2)][(q) % (NT / 2)]
//% if p.parts == 2 then
#define ACC2(q) acc4[(q) / (NT / 2)][(q) % (NT / 2)]   /* the INT4 part's sums (acc: the INT8 part's) */
//% end
//% end
#define ACC_NJ (NT / 8)
/* The output tile's token (row) and weight row (column) of ACC(q). */
#define ACC_ML(q) (wg_m * NT + ((q) % (NT / 2)) / 4 * 8 + (lane & 3) * 2 + ((q) & 1))
#define ACC_NL(q) ((nbl0 + (q) / (NT / 2) * 4) * 16 + (lane >> 2) + ((q) >> 1 & 1) * 8)
#define EPI_TILE_OFF {{ p.epi_tile_off }}   /* the output tile: {{ p.cluster > 1 and "past the first peer's region of sums" or p.persist == 1 and "past the ring" or "over the ring" }} */
//% if p.pingpong == 1 then
#define EPI_TILE_BYTES {{ p.epi_bytes }}   /* pingpong: each MMA warpgroup's own output tile, one after the other */
//% end

/* Shared-memory matrix descriptor of a K-major INT8 tile with 128-byte rows
 * and the 128-byte swizzle: start address, 1024 bytes between 8-row groups. */
static __device__ __forceinline__ u64 x_desc(u32 addr)
{
    return (u64)((addr & 0x3FFFFu) >> 4) | ((u64)1 << 16) | ((u64)(1024 >> 4) << 32) | ((u64)1 << 62);
}
//% if p.gparams_channel == 1 then

/* Per channel (one group per row): the parameters of the 16-row blocks
 * nb0, nb0 + 4, ... of the tile at n_cta, read once. */
template <int B>
static __device__ __forceinline__ void channel_params(wparams (&params)[B], const u32 *__restrict__ gparams, int n_cta,
                                                      int nb0, int N, int lane)
{
#pragma unroll
    for (int i = 0; i < B; ++i) {
        const int nb = n_cta / 16 + nb0 + i * 4;
        params[i] = wparams_from(nb * 16 < N ? gparams[(size_t)nb * 8 + (lane >> 2)] : 0u);
    }
}
//% end
//% if p.stash == 1 then
{{ render("lib/stash.cu") }}
//% end
