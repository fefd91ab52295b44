//% -- lib/wgmma_tile.cu -- the MMAs of one K tile in a warpgroup-MMA kernel,
//% -- from the ring's slot kt % STAGES (lib/wgmma_steps.cu: its 64-k steps).
//% -- A persistent kernel's ring counts K tiles across its output tiles: the
//% -- tile's place in it is ring0 + kt. With a sparse residual the steps
//% -- add the tile's residual blocks to the dequantized weights. Where a
//% -- warpgroup has two or more 64-row blocks (MI >= 2) and its rows have
//% -- none in the tile (most tiles at a budget of a few %) it runs the
//% -- dense kernel's steps instead, with no test per step (the branch is
//% -- the warpgroup's as a whole: its four warps run the same wgmma
//% -- instructions). With one (MI = 1) a step's MMAs are too short to hide
//% -- that test's wait on the presence word before the weights' loads:
//% -- every tile runs the folding steps, the word loaded beside the
//% -- weights (H200, bench/results/2026-11-29-session47: 0.96-1.00 of the
//% -- split on 4096x4096 at M = 64..256, 0.995 over every MI = 1 point; on
//% -- the persistent 128x256 tile one path was 1.03-1.11 of the split).
//% local it = p.persist == 1 and "(ring0 + kt)" or "kt"
        const u32 stage = smem_base + ({{ it }} % STAGES) * STAGE_BYTES;
        const u32 xtile = stage + X_OFF + wg_m * NT * BK;
//% if p.sparse == 1 then
        /* The tile's residual blocks: bit nbl * (BK / 64) + s per 16-row
         * block nbl and 64-k step s. */
        const u32 rbits = lds32(stage + RB_OFF);
//%   if p.rslots > 0 then
        /* They sit in slot (ordinal % RSLOTS) of the residual's own ring,
         * once its copies have landed. */
        const u32 rord = lds32(stage + RB_OFF + 4);
        const u32 rtile = smem_base + R_RING_OFF + (rord % RSLOTS) * R_SLOT_BYTES;
        if (rbits != 0u)
            mbar_wait(rfull0 + (rord % RSLOTS) * 8, (rord / RSLOTS) & 1u);
//%   elseif p.rpieces > 0 then
        /* They sit in the ring of blocks from place rfirst on (read where
         * the tile has some for this warpgroup). */
        const u32 rtile = smem_base + R_RING_OFF;
//%   else
        const u32 rtile = stage + R_OFF;
//%   end
//% end
//% if p.sparse == 1 and p.rslots == 0 and p.mi >= 2 then
        /* rwg: this warpgroup's bits in rbits (wgmma_head.cu). (With the
         * first step's loads made before the test, shared by both paths,
         * ptxas injects warpgroup arrives, C7519, and the persistent
         * kernels spill.) */
        if (__any_sync(0xFFFFFFFFu, (rbits & rwg) != 0u)) {
//%   if p.rpieces > 0 then
            const u32 rfirst = lds32(stage + RB_OFF + 4) & 0xFFu;
//%   end
{{ (render("lib/wgmma_steps.cu", { p = p, par = par, ends = ends, sums = sums, fold = true }):gsub("\n$", "")) }}
//%   if p.rpieces > 0 then
            /* Its blocks are read (the steps' MMAs took the registers they
             * were added to): their places may be handed on. */
            __syncwarp();
            if (lane == 0)
                mbar_arrive(rread0 + (({{ it }} % STAGES) * WG_N + wg_n) * 8);
//%   end
        } else {
{{ (render("lib/wgmma_steps.cu", { p = p, par = par, ends = ends, sums = sums, fold = false }):gsub("\n$", "")) }}
        }
//% else
//%   if p.sparse == 1 and p.rpieces > 0 then
        const u32 rfirst = lds32(stage + RB_OFF + 4) & 0xFFu;
//%   end
{{ (render("lib/wgmma_steps.cu", { p = p, par = par, ends = ends, sums = sums, fold = p.sparse == 1, early = true }):gsub("\n$", "")) }}
//%   if p.sparse == 1 and p.rpieces > 0 then
        /* Its blocks are read: their places may be handed on. */
        if (__any_sync(0xFFFFFFFFu, (rbits & rwg) != 0u)) {
            __syncwarp();
            if (lane == 0)
                mbar_arrive(rread0 + (({{ it }} % STAGES) * WG_N + wg_n) * 8);
        }
//%   end
//% end
