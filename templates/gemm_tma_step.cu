//% -- gemm_tma_step.cu -- one K tile of the TMA pipe: wait for its slot,
//% -- its MMAs (excp=1: from the INT8 slot the dequantization warpgroup
//% -- fills, lib/excp_mma.cu), then refill the previous tile's slot with
//% -- the tile STAGES ahead once every warp has released it. `par`: the tile's set of group
//% -- sums; `sums`: its accumulators (lib/kt_loop.cu). A persistent
//% -- kernel's ring counts on across output tiles (ring0: the K tiles before
//% -- this output tile's).
//% local gmap = p.gparams_tiled == 1
//% local ring = p.sparse == 1 and p.rslots > 0
//% if ring then
        /* The residual this tile needs is in flight before its warp waits
         * for it (gemm_tma.cu). */
        if (warp == R_WARP)
            residual_issue(ring, smem_base, rfull0, rempty0, kt, kt, lane, rweight);
//% end
//% local it = p.persist == 1 and "(ring0 + kt)" or "kt"
        mbar_wait(full0 + ({{ it }} % STAGES) * 8, ({{ it }} / STAGES) & 1);
//% if p.excp == 1 then
{{ render("lib/excp_mma.cu", { p = p }) }}
//% else
{{ render("lib/wgmma_tile.cu", { p = p, par = par, ends = ends, sums = sums }) }}
//% end
        /* Refill the previous tile's slot with the tile STAGES ahead of it,
         * once every warp has released it. */
//% if p.sparse == 1 and p.producer == 0 then
        /* Warp 0: the tile's copies once the slot is free; the residual's
         * warp: its residual (gemm_tma.cu). */
        if ((warp == 0 || warp == R_WARP) && kt > 0 && kt - 1 + STAGES < ktiles) {
            const int slot = (kt - 1) % STAGES;
            const u32 st = smem_base + slot * STAGE_BYTES, full = full0 + slot * 8, empty = empty0 + slot * 8;
            const u32 parity = ((kt - 1) / STAGES) & 1;
            if (warp == 0) {
                slot_copies<true, true>(st, full, empty, parity, kt_begin + kt - 1 + STAGES, lane, xmap, wmap,
                                        {{ gmap and "gmap, " or "" }}n_cta, m_cta);
            } else {
                slot_free(empty, parity, lane);
                slot_residual(st, full, kt_begin + kt - 1 + STAGES, lane, rcur, {{ ring and "ring, " or "" }}rweight);
            }
        }
//% if ring then
        /* And whatever residual of the tiles ahead now has a free slot. */
        if (warp == R_WARP)
            residual_issue(ring, smem_base, rfull0, rempty0, kt, -1, lane, rweight);
//% end
//% elseif p.producer == 0 then
        if (tid == 0 && kt > 0 && kt - 1 + STAGES < ktiles) {
            const int slot = (kt - 1) % STAGES;
            mbar_wait(empty0 + slot * 8, ((kt - 1) / STAGES) & 1);
            mbar_expect_tx(full0 + slot * 8, TX_BYTES);
            tma_stage<true, true>(smem_base + slot * STAGE_BYTES, full0 + slot * 8, kt_begin + kt - 1 + STAGES,
                                  xmap, wmap, {{ gmap and "gmap, " or "" }}n_cta, m_cta);
        }
//% end
