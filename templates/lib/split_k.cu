//% -- lib/split_k.cu -- split-K fix-up inside a kernel, after its main loop: the
//% -- thread's ACC_REGS accumulators (a multiple of 4), ACC(q) the q-th in register order, ACC_ML(q)
//% -- its tile row. reduce=global: through INT32 partials and arrival counters
//% -- in the workspace; reduce=cluster: over distributed shared memory.
//% -- sk=1 (a persistent kernel's loop over its work `u` of plan `wp`,
//% -- lib/work.cu): a slice of a split tile (u.sk >= 0) leaves its sums in
//% -- the workspace and, unless it is the tile's last slice to finish, goes
//% -- on without the epilogue.
//% if p.split > 1 and p.cluster == 1 or p.sk == 1 then
#ifndef PARTIALS_STORE
/* The thread's sums R(q) through the workspace in register order, four to a
 * 16-byte store or load (the stores and loads coalesce). */
#define PARTIALS_STORE(dst, R)                                                               \
    _Pragma("unroll") for (int q = 0; q < ACC_REGS; q += 4)                                    \
        __stcg((int4 *)(dst) + (q / 4) * THREADS + tid, make_int4(R(q), R(q + 1), R(q + 2), R(q + 3)))
#define PARTIALS_ADD(src, R)                                                                 \
    _Pragma("unroll") for (int q = 0; q < ACC_REGS; q += 4) {                                  \
        const int4 v_ = __ldcg((const int4 *)(src) + (q / 4) * THREADS + tid);                   \
        R(q) += v_.x;                                                                          \
        R(q + 1) += v_.y;                                                                      \
        R(q + 2) += v_.z;                                                                      \
        R(q + 3) += v_.w;                                                                      \
    }
#endif
    static_assert(ACC_REGS % 4 == 0, "the partials go four registers to a 16-byte store");
//% end
//% if p.split > 1 and p.cluster > 1 then
    /* Split-K inside the cluster, distributed: the SPLIT CTAs of this tile
     * (one per K slice; cluster rank = blockIdx.z) each own an even share of
     * the tile rows (row pairs). Once every CTA of the cluster has drained
     * its ring (a cluster barrier that publishes nothing: the ring's reads
     * are done), each stores the accumulators of the rows a peer owns
     * straight into that peer's shared memory (st.async, four per 16-byte
     * word in register order, one region per sender over the drained ring),
     * their bytes counted on the peer's `recv` mbarrier; then it waits for
     * its own rows from every peer and adds them exactly. It then runs the
     * epilogue into its own output tile and stores its rows. No fence, no
     * second barrier, no global partials: a CTA's shared memory is written
     * by its peers only before its `recv` phase completes, which it waits
     * for. */
    const int rank = (int)blockIdx.z;
    /* Rank r owns the tile rows [row_edge(r), row_edge(r + 1)). */
    const auto row_edge = [](int r) { return 2 * ((r * (BM / 2) + SPLIT - 1) / SPLIT); };
    const int row_lo = row_edge(rank), row_hi = row_edge(rank + 1);
    {
        constexpr u32 REGION = ACC_REGS * THREADS * 4;   /* a sender's region: the tile's sums, in register order */
        static_assert(ACC_REGS * THREADS == BM * BN, "one sum per thread and register for each output of the tile");
        __shared__ __align__(8) u64 recv_bar;
        const u32 recv = smem_addr(&recv_bar);
        if (tid == 0) {
            /* Armed before the barrier below, past which the peers store. */
            mbar_init(recv, 1);
            mbar_init_fence();
            mbar_expect_tx(recv, (u32)((SPLIT - 1) * (row_hi - row_lo) * BN * 4));
        }
        cluster_sync_relaxed();
#pragma unroll 1
        for (int dz = 1; dz < SPLIT; ++dz) {
            /* To the peer dz ranks on, into its region for a sender SPLIT - dz ranks back. */
            const u32 peer = (u32)((rank + dz) % SPLIT);
            const int plo = row_edge((int)peer), phi = row_edge((int)peer + 1);
            const u32 dst = cluster_map(smem_base + (SPLIT - dz - 1) * REGION, peer);
            const u32 bar = cluster_map(recv, peer);
#pragma unroll
            for (int q = 0; q < ACC_REGS; q += 4)
                if (ACC_ML(q) >= plo && ACC_ML(q) < phi)
                    st_async128(dst + ((q / 4) * THREADS + tid) * 16, ACC(q), ACC(q + 1), ACC(q + 2), ACC(q + 3), bar);
        }
        mbar_wait(recv, 0);
        /* ACC(q .. q + 3) lie on rows ACC_ML(q) and ACC_ML(q) + 1 (a pair).
//% if p.producer == 1 then
         * Every load at once (the MMA warpgroups have the producer's
         * registers). */
        constexpr int CHUNK = ACC_REGS;
//% else
         * Sixteen registers at a time, so the sum needs few registers beyond
         * the accumulators (two CTAs per SM stay resident, as the plan
         * declares: min_blocks). */
        constexpr int CHUNK = ACC_REGS < 16 ? ACC_REGS : 16;
//% end
#pragma unroll
        for (int q0 = 0; q0 < ACC_REGS; q0 += CHUNK) {
#pragma unroll 1
            for (int r = 0; r < SPLIT - 1; ++r) {
                uint4 part[CHUNK / 4];
#pragma unroll
                for (int q = q0; q < q0 + CHUNK; q += 4)
                    if (ACC_ML(q) >= row_lo && ACC_ML(q) < row_hi)
                        part[(q - q0) / 4] = lds128(smem_base + r * REGION + ((q / 4) * THREADS + tid) * 16);
#pragma unroll
                for (int q = q0; q < q0 + CHUNK; q += 4)
                    if (ACC_ML(q) >= row_lo && ACC_ML(q) < row_hi) {
                        ACC(q) += (int)part[(q - q0) / 4].x;
                        ACC(q + 1) += (int)part[(q - q0) / 4].y;
                        ACC(q + 2) += (int)part[(q - q0) / 4].z;
                        ACC(q + 3) += (int)part[(q - q0) / 4].w;
                    }
            }
        }
//% if p.split > 2 then
        /* Every thread has read the regions before the epilogue writes its
         * tile, which the regions past the first overlap. */
        {{ p.producer == 1 and 'asm volatile("bar.sync 1, %0;\\n" :: "n"(THREADS) : "memory");' or "__syncthreads();" }}
//% end
    }
//% elseif p.split > 1 then
    /* Split-K: publish this slice's accumulators (in register order, four
     * to a 16-byte store, so the stores and the loads below are coalesced
     * and a quarter as many as one a register), then count arrivals; only
     * the last CTA of the tile goes on, adding the other slices exactly. */
//% local parts = p.parts
    {
        __shared__ unsigned last;
        const size_t tile = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
        int *mine = partials + (tile * SPLIT + blockIdx.z) * (size_t)(BM * BN * {{ parts }});
//% if p.stash == 1 then
        /* The INT8 part's sums went to the first plane at the part
         * boundary (lib/kt_loop.cu); a slice without INT8 tiles stores
         * zeros there. Only the INT4 part's are added here; the epilogue
         * sums the first planes (lib/stash.cu). */
        if (kt8 == 0)
#pragma unroll
            for (int q = 0; q < ACC_REGS; ++q)
                __stcg(mine + q * THREADS + tid, 0);
//% else
        PARTIALS_STORE(mine, ACC);
//% end
//% if parts == 2 then
        /* The second part's sums after the first's. */
        PARTIALS_STORE(mine + ACC_REGS * THREADS, ACC2);
//% end
        __threadfence();
        __syncthreads();
        if (tid == 0)
            last = atomicAdd(counters + tile, 1u) == SPLIT - 1;
        __syncthreads();
        if (!last)
            return;
        /* Every slice has arrived: the counter is free again, so a layer's
         * workspace stays zeroed from call to call even when no activation
         * kernel runs before the GEMM (quantized tokens passed in). */
        if (tid == 0)
            counters[tile] = 0u;
        __threadfence();
        /* One slice at a time: this runs once a tile, and unrolled the
         * slices' loads and adds made the kernel's code (and its compile)
         * grow with the split. */
#pragma unroll 1
        for (int z = 0; z < SPLIT; ++z) {
            if (z == (int)blockIdx.z)
                continue;
            const int *other = partials + (tile * SPLIT + z) * (size_t)(BM * BN * {{ parts }});
//% if p.stash ~= 1 then
            PARTIALS_ADD(other, ACC);
//% end
//% if parts == 2 then
            PARTIALS_ADD(other + ACC_REGS * THREADS, ACC2);
//% end
        }
    }
//% elseif p.sk == 1 then
        if (u.sk >= 0) {
            /* A slice of a split tile: publish its sums in register order,
             * four to a 16-byte store (the stores and loads coalesce, and
             * there are a quarter as many), in the CTA's slot, then count
             * arrivals; the last of the tile's slices -- CTAs i, i + shared,
             * ... (lib/work.cu) -- adds the others' exactly and stores the
             * tile. No slice waits for another. */
            __shared__ unsigned sk_last;
            const int i = u.sk, c = (int)blockIdx.x;
            int *mine = partials + (size_t)c * (BM * BN);
            PARTIALS_STORE(mine, ACC);
            __threadfence();
            asm volatile("bar.sync 1, %0;\n" :: "n"(THREADS) : "memory");
            if (tid == 0)
                sk_last = atomicAdd(counters + i, 1u) == (unsigned)(wp.split - 1);
            asm volatile("bar.sync 1, %0;\n" :: "n"(THREADS) : "memory");
            if (!sk_last)
                continue;
            /* Every slice has arrived: the counter is free again for the
             * next call (as split-K's). */
            if (tid == 0)
                counters[i] = 0u;
            __threadfence();
            for (int c2 = i; c2 < wp.shared * wp.split; c2 += wp.shared) {
                if (c2 == c)
                    continue;
                const int *other = partials + (size_t)c2 * (BM * BN);
                PARTIALS_ADD(other, ACC);
            }
        }
//% end
//% if p.stash == 1 then
    /* The INT8 part's sums for the epilogue (ACC(q), lib/stash.cu): the
     * slices' first planes of partials, or this CTA's slot of the stash. */
//%   if p.split > 1 then
    const int *p8 = partials + (size_t)(blockIdx.y * gridDim.x + blockIdx.x) * SPLIT * (2 * BM * BN);
    const int n8 = SPLIT;
    const int mask8 = -1;
//%   else
    const int *p8 = stash + (size_t)(kt8 > 0 ? stash_slot : 0) * (BM * BN);
    const int n8 = 1;
    const int mask8 = kt8 > 0 ? -1 : 0;
//%   end
//% end
