//% -- lib/prologue.cu -- fills the first PREFETCH slots of a cp.async ring, one
//% -- group each. With programmatic dependent launch (or fused quantization) the
//% -- weights do not depend on the tokens: their copies start first, and the
//% -- kernel waits for the tokens before reading Xq, sx or the counters.
//% if p.pdl == 1 or p.fused == 1 then
    /* Weights first: they do not depend on the tokens (quantized by the
     * activation kernel that may still be running, or by this grid); then
     * wait for the tokens. */
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s)
        if (s < ktiles)
            load_stage<true, false>(smem_base + s * STAGE_BYTES, kt_begin + s, tid, STAGE_PTRS, n_cta, m_cta, M, N, K);
{{ render("lib/token_wait.cu", { p = p, quantizers = quantizers }) }}
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s) {
        if (s < ktiles)
            load_stage<false, true>(smem_base + s * STAGE_BYTES, kt_begin + s, tid, STAGE_PTRS, n_cta, m_cta, M, N, K);
        cp_async_commit();
    }
//% else
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s) {
        if (s < ktiles)
            load_stage<true, true>(smem_base + s * STAGE_BYTES, kt_begin + s, tid, STAGE_PTRS, n_cta, m_cta, M, N, K);
        cp_async_commit();
    }
//% end
