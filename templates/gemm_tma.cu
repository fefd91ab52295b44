// qjit variant: {{ key }}
//
// GEMM, scheme {{ f.scheme }}, warpgroup-MMA pipeline for {{ f.arch }}, its ring filled by the
// tensor memory accelerator: one thread issues the tensor copies of a K tile
// (tokens, packed weights, group parameters), which complete on the slot's
// "full" mbarrier; warps wait on it (no CTA barrier in the main loop) and
// release the slot on its "empty" mbarrier once their MMAs have read it.
//   Y[m, n] = epi_value(sum_k Xq[m, k] * W'[n, k])   (the scheme's epilogue)
// The MMAs are those of pipe=wgmma (lib/wgmma_tile.cu): dequantized weights
// as the register A operand, tokens (N = {{ p.nt }}) from a 128-byte-swizzled tile.
// CTA tile: {{ p.tile_m }} tokens x {{ p.tile_n }} weight rows x {{ p.tile_k }} k; {{ p.warps_m }} x {{ p.wg_n }} warpgroups
// (tokens x rows), {{ p.mi }} 64-row block(s) per warpgroup; ring of {{ p.stages }} stages.
//% if p.excp == 1 then
// Explicit dequantization (excp=1): a warpgroup of its own dequantizes each
// K tile's weights into a ring of INT8 slots in shared memory (its "wfull"
// barrier), and the MMA warpgroups take both operands from shared memory,
// releasing the slot on its "wempty" barrier.
//% end
//% if p.persist == 1 then
// Persistent: one CTA per place on the SMs, each walking output tiles
// blockIdx.x, + gridDim.x, ... (bands of token tiles along the weight
// rows); the ring runs on across tiles, so the producer fills the next
// tile's stages while the MMA warpgroups store this one's.
//% if p.sk == 1 then
// sk=1: the tiles of the last, partial wave split along K where that pays
// (lib/work.cu), the slices' sums meeting in the workspace.
//% end
//% end
//% if p.split > 1 then
// Split-K {{ p.split }}: blockIdx.z takes a slice of K; {{ p.cluster > 1 and "the tile's CTAs form a cluster and\n// each adds its share of the rows from the others' INT32 accumulators (exact)." or "the last CTA of a tile to\n// finish adds the others' INT32 partials (exact) and runs the epilogue." }}
//% end
{{ render("lib/prelude.cu", { bf16 = f.dtype == "bf16" }) }}
{{ render("lib/wgmma.cu", { nt = p.nt, ss = p.excp == 1, atype = p.wu8 == 1 and "u8" or "s8" }) }}
{{ render("lib/tma.cu") }}
{{ render(scheme.device, { p = p }) }}
{{ gemm.lib(p, f) }}
{{ render("lib/wgmma_defs.cu", { p = p, grouped = true }) }}
//% if p.excp == 1 then
{{ render("lib/excp.cu", { p = p }) }}
//% end
#define TX_BYTES {{ p.x_bytes + p.w_bytes + p.gp_bytes }}   /* bytes the TMA brings per stage */

/* Issues the copies of K tile kt into a stage (thread 0 only): the packed
 * weights and group parameters (WEIGHTS) and the token tile (TOKENS), apart,
 * so weights can be requested before the activations exist. */
//% local gmap = p.gparams_tiled == 1
template <bool WEIGHTS, bool TOKENS>
static __device__ __forceinline__ void tma_stage(u32 stage, u32 full, int kt, const qjit_tmap &xmap,
                                                 const qjit_tmap &wmap, {{ gmap and "const qjit_tmap &gmap, " or "" }}int n_cta, int m_cta)
{
    if (WEIGHTS) {
        /* Packed weights: BN/16 rows of the 16-row-block view, 64 x W_VECS
         * u64 per 64-k block. */
        tma_load_2d(stage + W_OFF, &wmap, kt * (BK / 64) * (64 * W_VECS), n_cta / 16, full);
//% if p.gparams_tiled == 1 then
        /* Group parameters: NG entries of 8 words per 16-row block. */
        tma_load_2d(stage + GP_OFF, &gmap, kt * BK / GROUP * 8, n_cta / 16, full);
//% end
    }
    if (TOKENS)
        tma_load_2d(stage + X_OFF, &xmap, kt * BK, m_cta, full);   /* 128-byte swizzled by the map */
}

//% if p.sparse == 1 then
/* One contiguous copy of `bytes` (a multiple of 16) into shared memory,
 * completing on an mbarrier. */
static __device__ __forceinline__ void bulk_load(u32 dst, const void *src, u32 bytes, u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

/* Two warps fill a slot with K tile kt and its residual, each arriving once
 * on its `full` barrier (two arrivals per phase): warp 0 the tile's copies,
 * the residual's warp (warp 5, in the other warpgroup, with two; warp 1
 * measured the same) its lookup and copies. Warp 0 doing both in series
 * paced the ring (3-9 points over dense at M >= 256, bench/results/
 * 2026-11-23-session16-h100). */
//% if p.producer == 1 then
/* With a producer warpgroup the residual is its second warp's, and its
 * third's but in a ring of blocks (R_WARPS, each taking every R_WARPS-th K
 * tile; its first warp's lane 0 issues the tensor copies): neither job is
 * an MMA warp's. */
#define R_WARP (THREADS / 32 + 1)
#define R_WARPS {{ p.rpieces > 0 and 1 or 2 }}
//% else
#define R_WARP (THREADS / 32 > 4 ? 5 : 1)
//% end

/* Warp 0's part: lane 0, once the slot is free (WAIT: its `empty` phase of
 * this parity), arrives with the tile's bytes and issues its tensor copies
 * (TOKENS: the tokens too). */
template <bool WAIT, bool TOKENS>
static __device__ __forceinline__ void slot_copies(u32 stage, u32 full, u32 empty, u32 parity, int kt, int lane,
                                                   const qjit_tmap &xmap, const qjit_tmap &wmap, {{ gmap and "const qjit_tmap &gmap, " or "" }}int n_cta,
                                                   int m_cta)
{
    if (lane == 0) {
        if (WAIT)
            mbar_wait(empty, parity);
        mbar_expect_tx(full, TX_BYTES);
        tma_stage<true, TOKENS>(stage, full, kt, xmap, wmap, {{ gmap and "gmap, " or "" }}n_cta, m_cta);
    }
}

/* The residual warp's wait for a slot (its `empty` phase of this parity):
 * lane 0 waits, and the warp's lanes write the slot after it. */
static __device__ __forceinline__ void slot_free(u32 empty, u32 parity, int lane)
{
    if (lane == 0)
        mbar_wait(empty, parity);
    __syncwarp();
}

//% if p.rslots > 0 then
/* The residual's ring (RSLOTS slots, lib/wgmma_defs.cu) as its warp keeps it,
 * in slice-relative K tiles: how many tiles carrying a residual it has
 * looked up with their tile (`announced`) and issued the residual of
 * (`issued`, in order: the n-th goes to slot n % RSLOTS), and the next tile
 * to look at for the next one to issue (`scan`). */
struct residual_ring { int announced, issued, scan; };

/* The residual warp's part: lane l looks up its block of the tile and notes
 * where a present one starts in rweight; lane 0 writes the presence word
 * and the tile's ordinal among the tiles that carry a residual, and arrives
 * on the slot (which publishes the words). The blocks themselves come
 * later, into the residual's ring (residual_issue). */
static __device__ __forceinline__ void slot_residual(u32 stage, u32 full, int kt, int lane, residual_cursor &rcur,
                                                     residual_ring &ring, const uint4 *__restrict__ rweight)
{
    const uint4 *src = residual_tile_lookup(rcur, rweight, kt, lane, BK / 64);
    const u32 present = __ballot_sync(0xFFFFFFFFu, src != nullptr);
    if (src)
        sts32(stage + RB_OFF + 8 + lane * 4, (u32)(src - rweight));
    if (lane == 0) {
        sts32(stage + RB_OFF, present);
        sts32(stage + RB_OFF + 4, (u32)ring.announced);
    }
    __syncwarp();
    if (lane == 0)
        mbar_arrive(full);
    ring.announced += present != 0u;
}

/* Issues, in order, the residual of every announced tile it can: the n-th
 * into slot n % RSLOTS once every warp has folded the (n - RSLOTS)-th (the
 * slot's `rempty` phase), one bulk copy per present block completing on the
 * slot's `rfull`. Tiles before kt_now are consumed, so the scan starts there
 * at the earliest; every tile from there to the last looked up is still in
 * the ring, its words in its stage. `need`: the tile whose residual must be
 * in flight on return (for it the slot is waited for: the tile that used it
 * is an earlier one, which this warp has folded and the other warps reach
 * without it); -1: issue only what needs no wait. */
static __device__ __forceinline__ void residual_issue(residual_ring &ring, u32 smem_base, u32 rfull0, u32 rempty0,
                                                      int kt_now, int need, int lane, const uint4 *__restrict__ rweight)
{
    if (ring.scan < kt_now)
        ring.scan = kt_now;
    while (ring.issued < ring.announced) {
        const u32 word = smem_base + (ring.scan % STAGES) * STAGE_BYTES + RB_OFF;
        const u32 present = lds32(word);
        if (present == 0u) {
            ++ring.scan;
            continue;
        }
        const int slot = ring.issued % RSLOTS;
        if (ring.issued >= RSLOTS) {
            const u32 parity = (u32)(ring.issued / RSLOTS - 1) & 1u;
            if (ring.scan > need) {
                /* Every lane tests (and so acquires) for itself; all agree or none issues. */
                if (!__all_sync(0xFFFFFFFFu, mbar_test(rempty0 + slot * 8, parity)))
                    break;
            } else {
                mbar_wait(rempty0 + slot * 8, parity);
            }
        }
        if (lane == 0)
            mbar_expect_tx(rfull0 + slot * 8, __popc(present) * 512);
        if (lane < (BN / 16) * (BK / 64) && (present >> lane & 1u))
            bulk_load(smem_base + R_RING_OFF + slot * R_SLOT_BYTES + lane * 512, rweight + lds32(word + 8 + lane * 4), 512,
                      rfull0 + slot * 8);
        ++ring.issued;
        ++ring.scan;
    }
}
//% elseif p.rpieces > 0 then
/* The warpgroups (along the weight rows) whose rows have blocks in a
 * tile's presence bits: bit g for warpgroup wg_n = g. */
static __device__ __forceinline__ u32 residual_readers(u32 present)
{
    u32 r = 0u;
#pragma unroll
    for (int g = 0; g < WG_N; ++g)
        r |= (present & R_WG_BITS(g)) != 0u ? 1u << g : 0u;
    return r;
}

/* The residual warp's part for tile `it` (slot it % STAGES, K tile kt)
 * with a ring of RPIECES places for blocks past the stages (lib/
 * wgmma_defs.cu): lane l looks up its block of the tile; the present ones
 * take the ring's next places, a kept residual block's part of the tile
 * at a time in the order of its first block's lane, each part one bulk
 * copy from that lane completing on the slot's `full` (R_PART_AT: head
 * and every count are multiples of the part's R_GROUP places, so a part
 * never wraps); lane 0 writes the stage's words
 * and arrives with the residual's bytes. The words of a stage: the
 * presence bits; the place of its first block (bits 0-7; the MMA warps
 * read both) and, from bit 8, per warpgroup along the rows, the parity of
 * the slot's `rread` phases for it; `head`, the blocks handed out before
 * this tile; and the count past its blocks (the next tile's head: the
 * warp's counts live there, its registers hold no more). A place is free
 * again once the warpgroups whose rows the tile's blocks are in have read
 * them (rread[slot][g]: one phase per tile with blocks in warpgroup g's
 * rows, so its parity counts those tiles): where the blocks would reach
 * those of a tile still held the warp waits for that (never for a slot's
 * release, which comes only as the next tile starts: the tile before this
 * one would then wait for this one). The tiles before it - STAGES + 1 are
 * released (the caller waited for slot it % STAGES). */
static __device__ __forceinline__ void slot_residual(u32 smem_base, u32 full0, u32 rread0, int it, int kt, int lane,
                                                     residual_cursor &rcur, const uint4 *__restrict__ rweight)
{
    const u32 stage = smem_base + (it % STAGES) * STAGE_BYTES, full = full0 + (it % STAGES) * 8;
    const u32 head = it > 0 ? lds32(smem_base + ((it - 1) % STAGES) * STAGE_BYTES + RB_OFF + 12) : 0u;
    /* Per warpgroup, the tiles with blocks in its rows in this slot before
     * this one, mod 2. */
    const u32 before = it >= STAGES ? lds32(stage + RB_OFF + 4) >> 8 : 0u;
    const uint4 *src = residual_tile_lookup(rcur, rweight, kt, lane, BK / 64);
    const u32 present = __ballot_sync(0xFFFFFFFFu, src != nullptr);
    const u32 count = __popc(present);
    if (count != 0u) {
        for (int v = max(it - STAGES + 1, 0); v < it; ++v) {
            const u32 held = smem_base + (v % STAGES) * STAGE_BYTES + RB_OFF;
            if (head + count - lds32(held + 8) <= RPIECES)
                break;
            const u32 readers = residual_readers(lds32(held)), ph = lds32(held + 4) >> 8;
            if (lane < WG_N && (readers >> lane & 1u))
                mbar_wait(rread0 + ((v % STAGES) * WG_N + lane) * 8, (ph >> lane & 1u) ^ 1u);
            __syncwarp();
        }
        if (src && R_HEAD(lane))
            bulk_load(smem_base + R_RING_OFF + R_PART_AT(head, present, lane) * 512, src, R_GROUP * 512, full);
    }
    __syncwarp();   /* every lane has read the words this tile's overwrite */
    if (lane == 0) {
        sts32(stage + RB_OFF, present);
        sts32(stage + RB_OFF + 4, head % RPIECES | (before ^ residual_readers(present)) << 8);
        sts32(stage + RB_OFF + 8, head);
        sts32(stage + RB_OFF + 12, head + count);
        mbar_expect_tx(full, count * 512);
    }
    __syncwarp();   /* the words above, read by every lane at later tiles */
}
//% else
/* The residual warp's part: lane l looks up its block of the tile; the
 * present ones come in one bulk copy per kept residual block, from the
 * lane of its first 16 x 64 block (R_HEAD) into the room's places
 * (R_PLACE, lib/wgmma_defs.cu); lane 0 writes the stage's presence word
 * and arrives with the residual's bytes: the phase completes only after
 * this arrival, whatever lands first. */
static __device__ __forceinline__ void slot_residual(u32 stage, u32 full, int kt, int lane, residual_cursor &rcur,
                                                     const uint4 *__restrict__ rweight)
{
    const uint4 *src = residual_tile_lookup(rcur, rweight, kt, lane, BK / 64);
    const u32 present = __ballot_sync(0xFFFFFFFFu, src != nullptr);
    if (src && R_HEAD(lane))
        bulk_load(stage + R_OFF + R_PLACE(lane) * 512, src, R_SLABS * R_KSTEPS * 512, full);
    if (lane == 0) {
        sts32(stage + RB_OFF, present);
        mbar_expect_tx(full, __popc(present) * 512);
    }
}
//% end
//% end

//% if p.persist == 1 then
/* The L2 a band of token tiles should stay within while the weight tiles
 * pass it (a quarter to a half of a Hopper's), unless the key names the
 * band (band=B). */
#define BAND_BYTES (24 << 20)

/* Output tile t of a persistent kernel, in bands of `band` token tiles
 * (the last band may be narrower): a band's weight tiles in order, its
 * token tiles fastest, so the CTAs at work at once share the band's tokens
 * and a few weight tiles, each read from DRAM about once. */
static __device__ __forceinline__ void tile_origin(int t, int tiles_n, int tiles_m, int band, int &n_cta, int &m_cta)
{
    const int per_band = band * tiles_n;
    const int b = t / per_band, r = t - b * per_band;
    const int rows = min(band, tiles_m - b * band);
    m_cta = (b * band + r % rows) * BM;
    n_cta = (r / rows) * BN;
}

{{ render("lib/work.cu", { p = p }) }}
//% end
extern "C" __global__ void __launch_bounds__({{ p.threads }}{{ p.min_blocks > 0 and ", " .. p.min_blocks or "" }}) {{ p.name }}(
    {{ gemm.params(slots) }})
{
{{ render("lib/wgmma_head.cu", { p = p }) }}
    /* full[s]: an arrival of each warp that fills the slot (with its byte
     * count) plus the TMA bytes; empty[s]: one arrival per warp once it has
     * read the slot. */
//% local ring = p.sparse == 1 and p.rslots > 0
//% if ring then
    /* The residual's ring likewise: rfull[r] one arrival with the bytes,
     * rempty[r] one arrival per warp once it has folded the slot. */
    __shared__ __align__(8) u64 bars[2 * STAGES + 2 * RSLOTS];
//% elseif p.pingpong == 1 then
    /* pingpong: turn[w] completes a phase when the other MMA warpgroup's
     * main loop has passed every slot of its tile, which lets warpgroup w
     * start its next one (below). */
    __shared__ __align__(8) u64 bars[2 * STAGES + 2];
//% elseif p.excp == 1 then
    /* The INT8 weights' ring likewise: wfull[j] one arrival per
     * dequantizing warp, wempty[j] one per MMA warp; a stage's `empty`
     * also takes the dequantizing warps' arrivals. */
    __shared__ __align__(8) u64 bars[2 * STAGES + 2 * W8_SLOTS];
//% elseif p.rpieces > 0 then
    /* The ring of residual blocks: rread[s][g] one arrival per MMA warp of
     * the warpgroups along the rows at g once they have read the blocks in
     * their rows of slot s's tile (a tile with some). */
    __shared__ __align__(8) u64 bars[(2 + WG_N) * STAGES];
//% else
    __shared__ __align__(8) u64 bars[2 * STAGES];
//% end
    const u32 full0 = smem_addr(bars), empty0 = full0 + STAGES * 8;
//% if ring then
    const u32 rfull0 = empty0 + STAGES * 8, rempty0 = rfull0 + RSLOTS * 8;
    residual_ring ring = { 0, 0, 0 };
//% elseif p.excp == 1 then
    const u32 wfull0 = empty0 + STAGES * 8, wempty0 = wfull0 + W8_SLOTS * 8;
//% elseif p.pingpong == 1 then
    const u32 turn0 = empty0 + STAGES * 8;
//% elseif p.rpieces > 0 then
    const u32 rread0 = empty0 + STAGES * 8;
//% end
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + s * 8, {{ p.sparse == 1 and 2 or 1 }});
            mbar_init(empty0 + s * 8, {{ p.pingpong == 1 and "4" or "THREADS / 32" }}{{ p.excp == 1 and " + 4" or "" }});
//% if p.rpieces > 0 then
            for (int g = 0; g < WG_N; ++g)
                mbar_init(rread0 + (s * WG_N + g) * 8, {{ p.pingpong == 1 and "4" or "THREADS / 32 / WG_N" }});
//% end
        }
//% if p.pingpong == 1 then
        mbar_init(turn0, 1);
        mbar_init(turn0 + 8, 1);
//% end
//% if p.excp == 1 then
        for (int j = 0; j < W8_SLOTS; ++j) {
            mbar_init(wfull0 + j * 8, 4);
            mbar_init(wempty0 + j * 8, THREADS / 32);
        }
//% end
//% if ring then
        for (int r = 0; r < RSLOTS; ++r) {
            mbar_init(rfull0 + r * 8, 1);
            mbar_init(rempty0 + r * 8, THREADS / 32);
        }
//% end
        mbar_init_fence();
    }
    __syncthreads();
    /* Fill the ring: weights first -- they do not depend on the activation
     * kernel that may still be running (programmatic dependent launch). */
//% if p.sparse == 1 and p.producer == 0 then
    /* Warp 0 issues every slot's tensor copies, the residual's warp each
     * tile's residual beside them: its blocks (one copy of 512 bytes per
     * block present, counted into the slot's bytes) or, with a ring of its
     * own, the first RSLOTS tiles' worth there; and the stage's presence
     * word (published by its arrival). */
    if (warp == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s)
            slot_copies<false, false>(smem_base + s * STAGE_BYTES, full0 + s * 8, 0u, 0u, kt_begin + s, lane, xmap, wmap,
                                      {{ gmap and "gmap, " or "" }}n_cta, m_cta);
    if (warp == R_WARP) {
        for (int s = 0; s < STAGES && s < ktiles; ++s)
            slot_residual(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, lane, rcur, {{ ring and "ring, " or "" }}rweight);
//% if ring then
        residual_issue(ring, smem_base, rfull0, rempty0, 0, -1, lane, rweight);
//% end
    }
//% elseif p.producer == 1 then
    /* The producer warpgroup (past the MMA warpgroups) keeps few registers
     * and gives the rest to them (setmaxnreg: every warp of a warpgroup
     * executes it). Its first lane fills the ring -- the first stages'
     * weights before the activation kernel is waited for, their tokens
     * after -- then refills each slot once every MMA warp has released
     * it, with the tile STAGES ahead (with a sparse residual its second
     * warp brings each tile's residual beside it, R_WARP); then the
     * warpgroup leaves (an exited warp holds up no CTA or cluster
     * barrier). */
//% if p.persist == 1 then
    /* The output tiles, and the token tiles of a band (BAND_BYTES). */
    const int tiles_n = (N + BN - 1) / BN, tiles_m = (M + BM - 1) / BM, tiles = tiles_n * tiles_m;
//%   if p.band > 0 then
    const int band = min({{ p.band }}, tiles_m);   /* the key's band */
//%   else
    const int band = max(1, min(tiles_m, (int)(BAND_BYTES / ((long long)BM * K))));
//%   end
    /* Which tiles each CTA takes whole, and which in slices along K. */
    const work_plan wp = plan_work(tiles, ktiles, gridDim.x);
//% end
//% if p.excp == 1 then
    /* The dequantization warpgroup (past the MMA warpgroups): for each K
     * tile in the ring's order, once its stage has landed and its INT8 slot
     * is free, each warp dequantizes its blocks into the slot (lib/excp.cu),
     * makes its stores visible to the MMAs' reads (the async proxy), and
     * arrives on the slot's wfull and on the stage's empty (the packed
     * words are read; the MMA warps release the tokens). */
    if (warp < THREADS / 32 + 4 && warp >= THREADS / 32) {
//%   if p.regs_dequant > 0 then
        asm volatile("setmaxnreg.dec.sync.aligned.u32 {{ p.regs_dequant }};\n" ::: "memory");
//%   end
        asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
        const int q = warp - THREADS / 32;
        int it = 0;
//%   if p.persist == 1 then
        work u;
        for (int n = 0; work_next(wp, n, u); ++n) {
            const int ktiles = u.hi - u.lo;   /* the piece's K tiles */
            int n_cta, m_cta;
            tile_origin(u.t, tiles_n, tiles_m, band, n_cta, m_cta);
//%   else
        {
//%   end
//%   if p.gparams_channel == 1 then
            /* Per-channel: the parameters of the warp's rows, read once a tile. */
            wparams params[MD];
            channel_params(params, gparams, n_cta, q, N, lane);
//%   end
            for (int kt = 0; kt < ktiles; ++kt, ++it) {
                const int slot = it % STAGES, j = it % W8_SLOTS;
                mbar_wait(full0 + slot * 8, (it / STAGES) & 1);
                if (it >= W8_SLOTS)
                    mbar_wait(wempty0 + j * 8, (it / W8_SLOTS - 1) & 1);
                dequant_tile(smem_base + slot * STAGE_BYTES, smem_base + W8_OFF + j * W8_BYTES, q, lane{{ p.gparams_channel == 1 and ", params" or "" }});
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                __syncwarp();
                if (lane == 0) {
                    mbar_arrive(wfull0 + j * 8);
                    mbar_arrive(empty0 + slot * 8);
                }
            }
        }
        return;
    }
//% end
    if (warp >= THREADS / 32) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 {{ p.regs_producer }};\n" ::: "memory");
        /* A CTA lets the next kernel start once all its threads have said so
         * or left (the next kernel waits for this one before it reads). */
        asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
        /* The ring counts K tiles across the CTA's output tiles (one, but
         * in a persistent kernel): the it-th goes to slot it % STAGES once
         * its (it / STAGES)-th use is over. The CTA's first stages: weights
         * before the activation kernel is waited for, tokens after. */
//% -- Each producer warp's loop over its pieces of work (a persistent
//% -- kernel's output tiles and slices; else the CTA's one): opened here,
//% -- closed by the warp's code.
//% local pieces = p.persist == 0 and "            {" or table.concat({
//%     "            work u;",
//%     "            for (int n = 0; work_next(wp, n, u); ++n) {",
//%     "                const int kt_begin = u.lo, ktiles = u.hi - u.lo;   /* the piece's K tiles */",
//%     "                int n_cta, m_cta;",
//%     "                tile_origin(u.t, tiles_n, tiles_m, band, n_cta, m_cta);" }, "\n")
//% if p.sparse == 1 then
        /* The residual's warps (R_WARPS of them from R_WARP, each taking
         * every R_WARPS-th K tile of a piece): each K tile's residual into its
         * slot beside the tile's copies (slot_residual), the slot taken when
         * the copies' thread takes it -- once every MMA warp has released
         * it. A warp's lanes' cursor starts at its first tile of each piece.
         * A ring of blocks hands its places on in tile order: one warp. In
         * the room two: one warp's lookup, copies and arrival a tile paced
         * the ring at one CTA an SM (H200: 0.99 of one warp's time, 0.95-0.97
         * on the longest K loops; bench/results/2026-11-29-session50). (A branch
         * of its own: in one shared with the copies' thread ptxas keeps the
         * copies' loop counters per thread, not in uniform registers.) */
//%   if p.rpieces > 0 then
        if (warp == R_WARP) {
            int it = 0;
{{ pieces }}
                residual_cursor rcur = residual_tile_start(rmask, lane, BK / 64, (BN / 16) * (BK / 64), n_cta, kt_begin, N, K);
                for (int kt = 0; kt < ktiles; ++kt, ++it) {
                    const int slot = it % STAGES;
                    if (it >= STAGES)
                        slot_free(empty0 + slot * 8, (it / STAGES - 1) & 1, lane);
                    slot_residual(smem_base, full0, rread0, it, kt_begin + kt, lane, rcur, rweight);
                }
            }
//%   else
        if (warp >= R_WARP && warp < R_WARP + R_WARPS) {
            const int rw = warp - R_WARP;
            int it = 0;
{{ pieces }}
                residual_cursor rcur = residual_tile_start(rmask, lane, BK / 64, (BN / 16) * (BK / 64), n_cta, kt_begin + rw,
                                                           N, K);
                for (int kt = rw; kt < ktiles; kt += R_WARPS) {
                    const int t = it + kt, slot = t % STAGES;
                    if (t >= STAGES)
                        slot_free(empty0 + slot * 8, (t / STAGES - 1) & 1, lane);
                    slot_residual(smem_base + slot * STAGE_BYTES, full0 + slot * 8, kt_begin + kt, lane, rcur, rweight);
                }
                it += ktiles;
            }
//%   end
            return;
        }
//% end
        if (tid == {{ p.excp == 1 and "THREADS + 128" or "THREADS" }}) {
            int it = 0;
{{ pieces }}
                int kt = 0;
                if (it == 0) {
                    for (; kt < STAGES && kt < ktiles; ++kt) {
                        mbar_expect_tx(full0 + kt * 8, TX_BYTES);
                        tma_stage<true, false>(smem_base + kt * STAGE_BYTES, full0 + kt * 8, kt_begin + kt, xmap, wmap,
                                               {{ gmap and "gmap, " or "" }}n_cta, m_cta);
                    }
                    asm volatile("griddepcontrol.wait;\n" ::: "memory");
                    /* The tokens of those stages: once a kernel, kept a
                     * loop (unrolled, every tensor copy's issue loop was
                     * copied; the weights' loop above stays unrolled:
                     * rolled, its counters spill from the producer's
                     * registers). */
#pragma unroll 1
                    for (int s = 0; s < kt; ++s)
                        tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap,
                                               {{ gmap and "gmap, " or "" }}n_cta, m_cta);
                    it = kt;
                }
//% if p.persist == 1 and p.wu8 == 1 then
                /* The piece's token row sums, which its sums start at
                 * (lib/wu8_start.cu), fetched into the SM's L1 while the
                 * MMA warpgroups are still on the piece before: they then
                 * start it without waiting for them from L2. (After the
                 * wait for the activation kernel, which writes them.) */
                if (kt_begin == 0)
                    for (int r = 0; r < BM && m_cta + r < M; r += 32)
                        asm volatile("prefetch.global.L1 [%0];\n" :: "l"(rowsum + m_cta + r));
//% end
                for (; kt < ktiles; ++kt, ++it) {
                    const int slot = it % STAGES;
                    if (it >= STAGES)
                        mbar_wait(empty0 + slot * 8, (it / STAGES - 1) & 1);
                    mbar_expect_tx(full0 + slot * 8, TX_BYTES);
                    tma_stage<true, true>(smem_base + slot * STAGE_BYTES, full0 + slot * 8, kt_begin + kt, xmap, wmap,
                                          {{ gmap and "gmap, " or "" }}n_cta, m_cta);
                }
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 {{ p.regs_consumer }};\n" ::: "memory");
    /* The MMA warpgroups read the activation kernel's scales in the epilogue. */
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");  /* as lib/token_wait.cu */
//% else
    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s) {
            mbar_expect_tx(full0 + s * 8, TX_BYTES);
            tma_stage<true, false>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, {{ gmap and "gmap, " or "" }}
                                   n_cta, m_cta);
        }
//% end
//% if p.producer == 0 then
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");  /* as lib/token_wait.cu */
    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s)
            tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, {{ gmap and "gmap, " or "" }}
                                   n_cta, m_cta);
//% end

//% if p.persist == 1 then
//%   if p.pingpong == 1 then
    /* The CTA's output tiles, every other one this warpgroup's (pp), in the
     * ring's order; ring0: the K tiles of the ring before this one's; n:
     * the warpgroup's tiles before this one. */
    for (int t = blockIdx.x + pp * gridDim.x, ring0 = pp * ktiles, n = 0; t < tiles;
         t += 2 * gridDim.x, ring0 += 2 * ktiles, ++n) {
//%   else
    /* The CTA's work (lib/work.cu); ring0: the K tiles of the ring before
     * this piece's. */
    int ring0 = 0;
    work u;
    for (int n = 0; work_next(wp, n, u); ++n, ring0 += u.hi - u.lo) {
        const int kt_begin = u.lo, ktiles = u.hi - u.lo;   /* the piece's K tiles */
        const int t = u.t;
        (void)kt_begin;   /* read by a per-group rescale's steps */
//%   end
        int n_cta, m_cta;
        tile_origin(t, tiles_n, tiles_m, band, n_cta, m_cta);
{{ (render("lib/wgmma_start.cu", { p = p }):gsub("\n$", "")) }}
//%   if p.epi_early == 1 then
        /* The epilogue's loads, made as the tile starts so that they have
         * landed when it ends (36 registers a thread at 128x256 fit beside
         * the main loop's; with an epilogue of the tokens' row sums as well
         * they would spill, and are made before the drain). */
{{ (render("lib/epi_pre.cu", { p = p }):gsub("\n$", "")) }}
//%   end
//%   if p.pingpong == 1 then
        /* The main loops take turns, in the tiles' order: this tile's
         * starts once the other warpgroup's main loop of the tile before
         * has waited for every slot of it. A slot's "full" phases are then
         * all complete up to this tile's, so waiting for one by its parity
         * is unambiguous (the other warpgroup's phases in between would
         * otherwise pass for this one's); and the tensor cores serve one
         * main loop at a time while the other warpgroup stores its tile. */
        if (pp == 1 || n > 0)
            mbar_wait(turn0 + pp * 8, (pp == 1 ? n : n - 1) & 1);
//%   end
{{ (render("lib/kt_loop.cu", { p = p, body = "gemm_tma_step.cu" }):gsub("\n$", "")) }}
//%   if p.pingpong == 1 then
        /* This main loop has passed its slots: the other warpgroup's turn. */
        if ((tid & 127) == 0)
            mbar_arrive(turn0 + (pp ^ 1) * 8);
//%   end
//%   if p.stsm == 1 and p.epi_early == 0 then
        /* With the tokens' row sums, the epilogue's loads are made while
         * the last MMAs run. */
{{ (render("lib/epi_pre.cu", { p = p }):gsub("\n$", "")) }}
//%   end
{{ render("lib/wgmma_drain.cu", { p = p }) }}
        /* Every MMA done: the warp releases the tile's last slot (the
         * others it released along the way){{ p.excp == 1 and ", and its last INT8 slot" or "" }}. */
        if (lane == 0) {
            mbar_arrive(empty0 + ((ring0 + ktiles - 1) % STAGES) * 8);
//%   if p.excp == 1 then
            mbar_arrive(wempty0 + ((ring0 + ktiles - 1) % W8_SLOTS) * 8);
//%   end
        }
{{ render("lib/split_k.cu", { p = p }) }}
//%   if p.epi_direct == 0 and p.pingpong == 1 then
        /* The warpgroup's last tile's stores have read its output tile
         * (its own barrier, 1 + pp). */
        asm volatile("bar.sync %0, 128;\n" :: "r"(1 + pp) : "memory");
//%   elseif p.tma_store == 1 then
        /* The last tile's tensor stores have read the output tile (their
         * thread waits for them, the other MMA threads for it). */
        if (tid == 0)
            bulk_wait_read();
        asm volatile("bar.sync 1, %0;\n" :: "n"(THREADS) : "memory");
//%   elseif p.epi_direct == 0 then
        /* The last tile's stores have read the output tile (the MMA
         * warpgroups only). */
        asm volatile("bar.sync 1, %0;\n" :: "n"(THREADS) : "memory");
//%   end
{{ (render("lib/epilogue.cu", { p = p, pre = p.stsm == 1 }):gsub("\n$", "")) }}
    }
//%   if p.tma_store == 1 then
    /* The last tile's tensor stores have read the CTA's shared memory
     * before it goes (their writes complete with the grid). */
    if (tid == 0)
        bulk_wait_read();
//%   end
//% else
//%   if p.epi_early == 1 then
    /* The epilogue's loads, made before the main loop so that they have
     * landed when the split-K fix-up ends (lib/wgmma_plan.lua: the
     * registers allow them). */
{{ (render("lib/epi_pre.cu", { p = p }):gsub("\n$", "")) }}
//%   end
{{ (render("lib/kt_loop.cu", { p = p, body = "gemm_tma_step.cu" }):gsub("\n$", "")) }}
{{ render("lib/wgmma_drain.cu", { p = p }) }}
//% if p.producer == 1 then
    /* The ring's last reads done (the MMA warpgroups: the producer has left). */
    asm volatile("bar.sync 1, %0;\n" :: "n"(THREADS) : "memory");
//% else
    __syncthreads();
//% end
{{ render("lib/split_k.cu", { p = p }) }}
{{ render("lib/epilogue.cu", { p = p, pre = p.epi_early == 1 }) }}
//% end
//% if p.stash == 1 and p.split == 1 then
    /* Every thread has read its INT8 sums (the epilogue's barrier): the
     * stash slot is free (lib/stash.cu). */
    if (tid == 0 && kt8 > 0)
        stash_release(counters, stash_slot);
//% end
}
