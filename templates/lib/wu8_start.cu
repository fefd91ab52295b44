//% -- lib/wu8_start.cu -- wu8=1 (unsigned weights U8' = Q8' + 128 into the
//% -- MMAs): the sums of the slice that starts the layer's K (kt_begin 0)
//% -- start at -128 * sum_k Xq[m, k], the token's row sum from the
//% -- activation kernel, so that they end as the signed weights' sums (exact:
//% -- INT32 wraps alike) and no epilogue reads the row sums. Rendered once the
//% -- tokens are ready, before the main loop; the other slices start at 0.
//% if p.wu8 == 1 then
    {
        /* All ones in the slice that starts K, else 0: a mask the compiler
         * cannot see through. A branch on kt_begin (or a select it turns
         * into one) makes ptxas serialize every wgmma (C7515). */
        unsigned first = kt_begin == 0 ? ~0u : 0u;
        asm("" : "+r"(first));
#pragma unroll
        for (int j = 0; j < ACC_NJ; ++j)
#pragma unroll
            for (int odd = 0; odd < 2; ++odd) {
                const int m = m_cta + ACC_ML(j * 4 + odd);
                const int off = m < M ? (int)((0u - ((unsigned)rowsum[m] << 7)) & first) : 0;
                /* The thread's registers of token m: every 16-row block, both halves. */
#pragma unroll
                for (int i = 0; i < MI; ++i)
#pragma unroll
                    for (int half = 0; half < 2; ++half)
                        acc[i][j * 4 + half * 2 + odd] = off;
            }
    }
//% end
