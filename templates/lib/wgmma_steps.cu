//% -- lib/wgmma_steps.cu -- the 64-k steps of one K tile (lib/wgmma_tile.cu,
//% -- which reads the tile's slot: stage, xtile; with a residual rbits and
//% -- rtile): packed weights and group parameters of one step at a time
//% -- (W_VECS 128-bit loads per 16-row block give this lane its weights for
//% -- two k32 steps), dequantized into the A registers, the next step's
//% -- loaded while this step's MMAs run. On the TMA ring the warp releases
//% -- the previous tile's slot once its MMAs are done.
//% -- A scheme with a per-group rescale (fold) sums each group apart: with
//% -- p.fold2 in two sets of registers, a pair of groups in turn (set `par`
//% -- for a tile's first group), drained and folded after the pair; without
//% -- it in one set, drained at every group end. `sums`: the accumulators
//% -- the tile's MMAs add into (two activation parts: acc or acc4). `fold`:
//% -- the steps add the tile's residual blocks to their A registers; with
//% -- `early` (a tile that runs these steps with or without blocks) each
//% -- step's blocks are loaded with its weights, not after the dequant.
//% local it = p.persist == 1 and "(ring0 + kt)" or "kt"
        uint4 w[MI][W_VECS];
//% if p.gparams_tiled == 1 then
        u32 gp[MI];
//% end
//% if fold and early then
        /* This warp's residual blocks of one step, loaded with the step's
         * weights (a block the tile lacks is not read): the fold then waits
         * on no load after the dequantization. */
        uint4 rw[MI];
//% end
#pragma unroll
        for (int i = 0; i < MI; ++i) {
#pragma unroll
            for (int v = 0; v < W_VECS; ++v)
                w[i][v] = lds128(stage + W_OFF + (nbl0 + i * 4) * (BK / 64) * (512 * W_VECS) + v * 512 + lane * 16);
//% if fold and early then
            if (rbits >> ((nbl0 + i * 4) * (BK / 64)) & 1u)
                rw[i] = lds128(R_WARP_AT(rtile, rbits, rfirst, nbl0, i, 0) + lane * 16);
//% end
//% if p.gparams_tiled == 1 then
            gp[i] = lds32(stage + GP_OFF + (nbl0 + i * 4) * NG * 32 + (lane >> 2) * 4);
//% end
        }
#pragma unroll
        for (int kb = 0; kb < BK / 64; ++kb) {
            u32 a[MI][2][4];
//% if p.fold2 == 1 then
            /* Groups divide the tile: a group starts at this step when its k
             * is a multiple of GROUP (known here, the loops are unrolled). */
            const bool fresh = kb * 64 % GROUP == 0;
            const int set = ({{ par or 0 }} + kb * 64 / GROUP) & 1;   /* this group's set of sums */
//% elseif p.fold == 1 then
            wparams prs[MI];
            const int k_step = (kt_begin + kt) * BK + kb * 64;
            /* A group's first step overwrites the sums the last fold took. */
            const int fresh = k_step % GROUP == 0 || (kt == 0 && kb == 0);
//% end
#pragma unroll
            for (int i = 0; i < MI; ++i) {
//% if p.gparams_tiled == 1 then
                const wparams pr = wparams_from(gp[i]);
//% elseif p.gparams_channel == 1 then
                const wparams pr = params[i];
//% else
                const wparams pr = {};
//% end
                dequant(w[i], pr, a[i]);
//% -- A dequantization without parameters (masks of the loaded words)
//% -- is sunk past the wgmma_fence unless pinned (C7520).
//% if p.a_is_loaded == 0 and p.gparams_tiled == 0 and p.gparams_channel == 0 then
#pragma unroll
                for (int r = 0; r < 8; ++r)
                    reg_pin(a[i][r / 4][r % 4]);
//% end
//% if p.fold2 == 1 then
                if (fresh)
                    prs[set][i] = pr;
//% elseif p.fold == 1 then
                prs[i] = pr;
//% end
            }
//% if fold then
            /* This warp's residual blocks at this step, added to its A
             * registers (lib/residual.cu) before the fence. The vote tells
             * ptxas the branch is the warp's as a whole (the bits are the
             * CTA's). */
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const int bit = (nbl0 + i * 4) * (BK / 64) + kb;
                if (__any_sync(0xFFFFFFFFu, rbits >> bit & 1u))
//% if early then
                    residual_fold(rw[i], a[i]);
//% else
                    residual_fold(lds128(R_WARP_AT(rtile, rbits, rfirst, nbl0, i, kb) + lane * 16), a[i]);
//% end
                /* Pinned: the two paths' common last XOR would otherwise be
                 * sunk past the fence (C7519, C7520). */
#pragma unroll
                for (int r = 0; r < 8; ++r)
                    reg_pin(a[i][r / 4][r % 4]);
            }
//%   if p.rslots > 0 then
            /* The tile's last step has read its residual: the warp releases
             * the slot (the pins above keep the reads before this). */
            if (kb == BK / 64 - 1 && rbits != 0u) {
                __syncwarp();
                if (lane == 0)
                    mbar_arrive(rempty0 + (rord % RSLOTS) * 8);
            }
//%   end
//% end
            wgmma_fence();
//% if p.fold2 == 1 then
#pragma unroll
            for (int i = 0; i < MI; ++i)
                wgmma_s8_m64n{{ p.nt }}k32_sd(part[set][i], a[i][0], x_desc(xtile + kb * 64), !fresh);
#pragma unroll
            for (int i = 0; i < MI; ++i)
                wgmma_s8_m64n{{ p.nt }}k32(part[set][i], a[i][1], x_desc(xtile + kb * 64 + 32));
//% elseif p.fold == 1 then
#pragma unroll
            for (int i = 0; i < MI; ++i)
                wgmma_s8_m64n{{ p.nt }}k32_sd(part[i], a[i][0], x_desc(xtile + kb * 64), !fresh);
#pragma unroll
            for (int i = 0; i < MI; ++i)
                wgmma_s8_m64n{{ p.nt }}k32(part[i], a[i][1], x_desc(xtile + kb * 64 + 32));
//% else
#pragma unroll
            for (int kk = 0; kk < 2; ++kk)
#pragma unroll
                for (int i = 0; i < MI; ++i)
                    wgmma_s8_m64n{{ p.nt }}k32({{ sums or "acc" }}[i], a[i][kk], x_desc(xtile + kb * 64 + kk * 32));
//% end
            wgmma_commit();
//% if p.a_is_loaded == 1 then
            /* The A registers are the loaded words themselves: the previous
             * step's MMAs, which read the registers this step's loads reuse,
             * must be done first (PTX leaves writing a wgmma's A registers
             * before its wait_group undefined). */
            wgmma_wait<1>();
//% end
            if (kb + 1 < BK / 64) {
#pragma unroll
                for (int i = 0; i < MI; ++i) {
                    const int nbl = nbl0 + i * 4;
#pragma unroll
                    for (int v = 0; v < W_VECS; ++v)
                        w[i][v] = lds128(stage + W_OFF + (nbl * (BK / 64) + kb + 1) * (512 * W_VECS) + v * 512 + lane * 16);
//% if fold and early then
                    if (rbits >> (nbl * (BK / 64) + kb + 1) & 1u)
                        rw[i] = lds128(R_WARP_AT(rtile, rbits, rfirst, nbl0, i, kb + 1) + lane * 16);
//% end
//% if p.gparams_tiled == 1 then
                    if (GROUP < BK)
                        gp[i] = lds32(stage + GP_OFF + (nbl * NG + (kb + 1) * 64 / GROUP) * 32 + (lane >> 2) * 4);
//% end
                }
            }
//% if p.fold2 == 1 then
            /* The second group of a pair ends here, or the slice does: every
             * MMA done, acc += sums * S for each set in use (no accumulator
             * is read while an MMA is in flight, which would make ptxas
             * serialize every wgmma). */
//% local slice_end = ({ never = "false", always = "kb == BK / 64 - 1", check = "(kt == ktiles - 1 && kb == BK / 64 - 1)" })[ends]
            if ((kb + 1) * 64 % GROUP == 0 && (set == 1 || {{ slice_end }})) {
                wgmma_wait<0>();
#pragma unroll
                for (int h = 0; h <= set; ++h)
#pragma unroll
                    for (int i = 0; i < MI; ++i)
#pragma unroll
                        for (int j = 0; j < NT / 2; ++j) {
                            reg_fence(part[h][i][j]);
                            acc[i][j] += part[h][i][j] * fold_scale(prs[h][i], (j >> 1) & 1);
                        }
            } else {
                wgmma_wait<1>();
            }
//% elseif p.fold == 1 then
            if ((k_step + 64) % GROUP == 0 || (kt == ktiles - 1 && kb == BK / 64 - 1)) {
                /* A group ends here, or the slice does: every MMA of it done,
                 * acc += part * S (the fences keep the reads after the wait). */
                wgmma_wait<0>();
#pragma unroll
                for (int i = 0; i < MI; ++i)
#pragma unroll
                    for (int j = 0; j < NT / 2; ++j) {
                        reg_fence(part[i][j]);
                        acc[i][j] += part[i][j] * fold_scale(prs[i], (j >> 1) & 1);
                    }
            } else {
                wgmma_wait<1>();
            }
//% elseif p.a_is_loaded == 0 then
            /* The previous step's MMAs are done: its A registers may be
             * reused and, at the next barrier, the previous tile's slot. */
            wgmma_wait<1>();
//% end
//% if p.tma == 1 then
            /* After the first step's wait the previous tile's MMAs and
             * loads are all done: this warp releases its slot. */
            if (kb == 0 && kt > 0 && lane == 0)
                mbar_arrive(empty0 + (({{ it }} - 1) % STAGES) * 8);
//% end
        }
