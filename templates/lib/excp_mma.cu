//% -- lib/excp_mma.cu -- the MMAs of one K tile in an explicit-dequantization
//% -- kernel (excp=1, gemm_tma.cu): once the dequantization warpgroup has
//% -- filled the tile's INT8 slot, BK / 32 k32 steps of MI wgmmas with both
//% -- operands in shared memory (this warpgroup's rows of the slot, its
//% -- tokens of the stage), one commit group a tile; after the wait that
//% -- leaves this tile's group in flight, the previous tile's MMAs are done
//% -- and the warp releases its stage and its INT8 slot. A persistent
//% -- kernel's rings count K tiles across its output tiles (ring0 + kt).
//% local it = p.persist == 1 and "(ring0 + kt)" or "kt"
        const u32 stage = smem_base + ({{ it }} % STAGES) * STAGE_BYTES;
        const u32 xtile = stage + X_OFF + wg_m * NT * BK;
        const u32 wtile = smem_base + W8_OFF + ({{ it }} % W8_SLOTS) * W8_BYTES + wg_n * (BN / WG_N) * BK;
        mbar_wait(wfull0 + ({{ it }} % W8_SLOTS) * 8, ({{ it }} / W8_SLOTS) & 1);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 32; ++ks)
#pragma unroll
            for (int i = 0; i < MI; ++i)
                wgmma_s8_m64n{{ p.nt }}k32_ss(acc[i], x_desc(wtile + i * 64 * BK + ks * 32), x_desc(xtile + ks * 32));
        wgmma_commit();
        wgmma_wait<1>();
        if (kt > 0 && lane == 0) {
            mbar_arrive(empty0 + (({{ it }} - 1) % STAGES) * 8);
            mbar_arrive(wempty0 + (({{ it }} - 1) % W8_SLOTS) * 8);
        }
