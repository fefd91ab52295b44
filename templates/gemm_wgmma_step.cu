//% -- gemm_wgmma_step.cu -- one K tile of the cp.async warpgroup-MMA pipe:
//% -- wait for its stage, refill the slot read two tiles ago (every
//% -- warpgroup has waited for those wgmmas, wait_group 1, before reaching
//% -- the barrier), then its MMAs. `par`: the tile's set of group sums;
//% -- `sums`: its accumulators (lib/kt_loop.cu).
        cp_async_wait<STAGES - 3>();
        fence_proxy_async();
        __syncthreads();
        /* Refill the slot read two tiles ago: every warpgroup has waited for
         * those wgmmas (wait_group 1 below) before reaching the barrier. */
        refill_slot(smem_base, kt + PREFETCH, ktiles, kt_begin, tid, STAGE_PTRS, n_cta, m_cta, M, N, K);

{{ render("lib/wgmma_tile.cu", { p = p, par = par, ends = ends, sums = sums }) }}
