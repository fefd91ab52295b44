//% -- lib/epi_pre.cu -- the epilogue's loads of a warpgroup-MMA output tile
//% -- at (n0, m0) (default n_cta, m_cta): the scheme's column values of the
//% -- thread's weight rows, pre_n[i][half], with bias=1 the columns' bias,
//% -- pre_b[i][half], and unless rows == false its row values of its
//% -- tokens, pre_m[j][odd]. A warpgroup-MMA kernel makes them ahead where
//% -- its registers allow (p.epi_early, lib/wgmma_plan.lua: a persistent one
//% -- as a tile starts, a CTA a tile before its main loop; where its
//% -- epilogue also reads the tokens' row sums, a persistent one before its
//% -- drain) so that its epilogue does not wait for them (lib/epilogue.cu
//% -- with pre = true); other kernels make the columns' in their epilogue.
//% local n0, m0 = n0 or "n_cta", m0 or "m_cta"
    epi_col pre_n[MI][2];
//% if p.bias == 1 then
    float pre_b[MI][2];
//% end
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int n = {{ n0 }} + ACC_NL(i * ACC_NJ * 4 + half * 2);
            pre_n[i][half] = epi_col_load(EPI_COL_ARGS, n, n < N);
//% if p.bias == 1 then
            pre_b[i][half] = n < N ? bias[n] : 0.0f;
//% end
        }
//% if rows ~= false then
    epi_row pre_m[ACC_NJ][2];
#pragma unroll
    for (int j = 0; j < ACC_NJ; ++j)
#pragma unroll
        for (int odd = 0; odd < 2; ++odd) {
            const int m = {{ m0 }} + ACC_ML(j * 4 + odd);
            pre_m[j][odd] = epi_row_load(EPI_ROW_ARGS, m, m < M);
        }
//% end
