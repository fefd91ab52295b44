//% -- lib/epilogue.cu -- the epilogue of the MMA pipes: each thread's
//% -- accumulators, through the scheme's epi_value into 16-bit floats (epi f16; FP16 or BF16 by
//% -- the key's dtype) or raw (epi i32),
//% -- staged as the BM x BN output tile in shared memory (row stride LDC, at
//% -- EPI_TILE_OFF), then stored as whole rows of 16-byte writes. The template
//% -- defines ACC(q), ACC_NJ (8-token groups per 16-row block of a thread's
//% -- registers: ACC(q) for q = (i * ACC_NJ + j) * 4 + r is block i, group j),
//% -- and ACC_ML(q) / ACC_NL(q), its row (token) and column (weight row) in the
//% -- tile. pre: the epilogue's loads are already in registers, pre_n[i][half]
//% -- (columns) and pre_m[j][odd] (rows); else they are made here. A cluster
//% -- reduction's rank stores only the rows it owns, then waits until its peers
//% -- are done reading its shared memory.
//% -- Two activation parts (p.parts == 2, the template defines ACC2(q)): the
//% -- scheme's epi_value2 of both sums, or with epi i32 both planes, the
//% -- second M x N after the first.
//% -- bias=1 (epi f16): the layer's bias of the column, added to the value
//% -- before rounding. p.epi_direct (a persistent kernel's INT32 sums): no
//% -- staging, each register stored where it goes. With a producer
//% -- warpgroup (p.producer) the barriers are the MMA warpgroups' own
//% -- (named barrier 1): the producer's warps may still be filling the ring.
//% -- pingpong (p.pingpong): each MMA warpgroup stores its own tile, with
//% -- its own staging room and barrier (1 + pp).
//% -- p.tma_store (a persistent kernel's 16-bit outputs): the tile staged in
//% -- the tensor map's 128-byte swizzled column blocks, stored by the
//% -- tensor memory accelerator (ymap) from one thread, not waited for
//% -- here: the kernel waits before the room is written again.
//% -- p.stsm (the warpgroup-MMA pipes' 16-bit outputs): the registers go to
//% -- the staged tile as transposed 8 x 8 blocks (stmatrix), two values a
//% -- conversion; pre_b[i][half] with pre and bias=1 (lib/epi_pre.cu).
//% local pingpong = p.pingpong == 1
//% local sync = (pingpong and 'asm volatile("bar.sync %0, 128;\\n" :: "r"(1 + pp) : "memory");')
//%              or (p.producer == 1 and 'asm volatile("bar.sync 1, %0;\\n" :: "n"(THREADS) : "memory");') or "__syncthreads();"
//% local team, me = pingpong and "128" or "THREADS", pingpong and "(tid & 127)" or "tid"
//% local scaled = p.epi ~= "i32"
//% local out = scaled and "u16" or "int"
//% local two = p.parts == 2
//% local planes = (two and not scaled) and 2 or 1
//% -- __fadd_rn: never contracted into the scale's multiply (an FMA would
//% -- round differently when the bias cancels the value).
//% local plus = scaled and p.bias == 1
//% local cl = p.split > 1 and p.cluster > 1
//% local add0, add1 = plus and "__fadd_rn(" or "", plus and ", bcol)" or ""
//% if p.epi_direct == 1 then
    /* Epilogue: each sum straight from its register (INT32, the exactness
     * checks' output). */
    (void)smem;
#pragma unroll
    for (int q = 0; q < ACC_REGS; ++q) {
        const int m = m_cta + ACC_ML(q), n = n_cta + ACC_NL(q);
        if (m < M && n < N)
            Y[(size_t)m * N + n] = ACC(q);
    }
//% else
//% local tma = p.tma_store == 1
//% local stsm = p.stsm == 1 and scaled
//% if not tma then
    {{ out }} *tile = ({{ out }} *)(smem + EPI_TILE_OFF{{ pingpong and " + pp * EPI_TILE_BYTES" or "" }});
//% end
//% if tma then
    /* Epilogue: stage the tile in shared memory as BN / 64 blocks of 64
     * columns, BM rows of 128 bytes each, 128-byte swizzled (the 16-byte
     * chunk c of row r at c ^ (r % 8): the tensor map's layout), then one
     * thread hands the blocks to the tensor memory accelerator, which
     * writes the rows and columns inside the output. The MMA warpgroups go
     * on to their next tile while the stores drain. */
//% else
    /* Epilogue: stage the tile in shared memory, then store whole rows with
     * 16-byte writes. */
//% end
//% if stsm then
    /* A thread's registers are 8 x 8 blocks of the warp's (8 weight rows x
     * 8 tokens: i, half, j), each an MMA fragment once two tokens' values
     * share a word: four blocks at a time go out transposed (stmatrix), a
     * row of 8 columns each, 16 bytes at one place -- the 8 rows of a block
     * {{ tma and "at 8 different swizzled chunks" or "8 x 16 bytes apart (the row's padding)" }}, no bank conflict. */
//% if pre then
    /* Its loads are lib/epi_pre.cu's, made before the drain. */
//% else
    /* Its loads are made here, from the tile's origin passed through an
     * empty asm: the compiler would otherwise hoist them into the main
     * loop, where their registers would cost a CTA per SM. */
//% end
    {
//% if not pre then
        int n_at = n_cta, m_at = m_cta;
        asm volatile("" : "+r"(n_at), "+r"(m_at));
        /* The columns' values once; the rows' once per 8 tokens (j). */
{{ render("lib/epi_pre.cu", { p = p, n0 = "n_at", rows = false }) }}        epi_row row[2];
//% end
        constexpr int BLOCKS = MI * 2 * ACC_NJ;
        const int r = lane & 7;
#pragma unroll
        for (int s = 0; s < BLOCKS; s += 4) {
            u32 v[4] = {};
#pragma unroll
            for (int e = 0; e < 4 && s + e < BLOCKS; ++e) {
                const int b = s + e, j = b / (MI * 2), i = b / 2 % MI, half = b % 2;
                const int q = (i * ACC_NJ + j) * 4 + half * 2;
//% if not pre then
                if (b % (MI * 2) == 0)
#pragma unroll
                    for (int odd = 0; odd < 2; ++odd) {
                        const int m = m_at + ACC_ML(j * 4 + odd);
                        row[odd] = epi_row_load(EPI_ROW_ARGS, m, m < M);
                    }
//% end
//% local function v(odd)
//%   local value = two and ("epi_value2(ACC(q + " .. odd .. "), ACC2(q + " .. odd .. "), ") or ("epi_value(ACC(q + " .. odd .. "), ")
//%   value = value .. (pre and "pre_m[j][" or "row[") .. odd .. "], pre_n[i][half])"
//%   return plus and ("__fadd_rn(" .. value .. ", pre_b[i][half])") or value
//% end
                v[e] = floats_to_y2({{ v(0) }},
                                    {{ v(1) }});
            }
            /* This lane's row: row r of block s + lane / 8. */
            const int b = s + (lane >> 3), j = b / (MI * 2), i = b / 2 % MI, half = b % 2;
            const int nl = ACC_NL(i * ACC_NJ * 4 + half * 2) - (lane >> 2);   /* the block's first column */
            const int ml = ACC_ML(j * 4) - (lane & 3) * 2 + r;
//% if tma then
            const u32 at = smem_base + EPI_TILE_OFF + ((nl / 64) * (BM * 64) + ml * 64 + (((nl % 64) / 8) ^ r) * 8) * 2;
//% else
            const u32 at = smem_base + EPI_TILE_OFF{{ pingpong and " + pp * EPI_TILE_BYTES" or "" }} + (ml * LDC + nl) * 2;
//% end
            if (s + 4 <= BLOCKS)
                stsm_x4_trans(at, v);
            else
                stsm_x2_trans(at, v);
        }
    }
//% else
//% if planes == 2 then
#pragma unroll
    for (int plane = 0; plane < 2; ++plane) {
    if (plane)
        {{ sync }}   /* the first plane's stores have read the tile */
//% end
#pragma unroll
    for (int i = 0; i < ACC_REGS / (ACC_NJ * 4); ++i) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int q_n = i * ACC_NJ * 4 + half * 2;
            const int nl = ACC_NL(q_n);
//% if scaled and pre then
            const epi_col col = pre_n[i][half];
//% elseif scaled then
            const epi_col col = epi_col_load(EPI_COL_ARGS, n_cta + nl, n_cta + nl < N);
//% end
//% if plus then
            const float bcol = n_cta + nl < N ? bias[n_cta + nl] : 0.0f;
//% end
#pragma unroll
            for (int j = 0; j < ACC_NJ; ++j) {
#pragma unroll
                for (int odd = 0; odd < 2; ++odd) {
                    const int q = q_n + j * 4 + odd;
                    const int ml = ACC_ML(q);
//% local value = two and "epi_value2(ACC(q), ACC2(q), " or "epi_value(ACC(q), "
//% if scaled and pre then
                    tile[ml * LDC + nl] = float_to_y({{ add0 }}{{ value }}pre_m[j][odd], col){{ add1 }});
//% elseif scaled then
                    const epi_row row = epi_row_load(EPI_ROW_ARGS, m_cta + ml, m_cta + ml < M);
                    tile[ml * LDC + nl] = float_to_y({{ add0 }}{{ value }}row, col){{ add1 }});
//% elseif planes == 2 then
                    tile[ml * LDC + nl] = plane ? ACC2(q) : ACC(q);
//% else
                    tile[ml * LDC + nl] = ACC(q);
//% end
                }
            }
        }
    }
//% end
//% if tma then
    /* The stores are the generic proxy's; the copies read through the
     * async proxy. */
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    {{ sync }}
    if (tid == 0) {
#pragma unroll
        for (int b = 0; b < BN / 64; ++b)
            tma_store_2d(&ymap, smem_base + EPI_TILE_OFF + b * (BM * 128), n_cta + b * 64, m_cta);
        bulk_commit();
    }
//% else
    {{ sync }}
    constexpr int PER_CHUNK = 16 / {{ p.out_bytes }};     /* outputs per 16-byte store */
    constexpr int CHUNKS_PER_ROW = BN / PER_CHUNK;
    for (int c = {{ cl and "row_lo" or "0" }} * CHUNKS_PER_ROW + {{ me }}; c < {{ cl and "row_hi" or "BM" }} * CHUNKS_PER_ROW; c += {{ team }}) {
        const int ml = c / CHUNKS_PER_ROW, cc = c % CHUNKS_PER_ROW;
        const int m = m_cta + ml, n = n_cta + cc * PER_CHUNK;
        if (m < M && n < N)
            *(uint4 *)(Y + {{ planes == 2 and "(size_t)plane * M * N + " or "" }}(size_t)m * N + n) = *(const uint4 *)(tile + ml * LDC + cc * PER_CHUNK);
    }
//% end
//% if planes == 2 then
    }
//% end
//% end
