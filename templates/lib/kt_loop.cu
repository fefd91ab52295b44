//% -- lib/kt_loop.cu -- the main loop of a warpgroup-MMA pipe over the
//% -- slice's K tiles, `body` rendered per tile (with `kt` its index; `par`
//% -- the set of group sums the tile starts; `ends`: whether the slice may
//% -- end with this tile, "check" / "never" / "always"). With p.kt_unroll = 2
//% -- (fold2, one group per K tile) it takes two tiles per iteration, sets 0
//% -- and 1, and an odd last tile after the loop, so where the slice ends is
//% -- known where the code is generated (ptxas serializes every wgmma if it
//% -- cannot prove no accumulator is read while an MMA is in flight).
//% -- Two activation parts (p.parts == 2): the slice's K tiles of the layer's
//% -- first k8 channels sum into acc, the rest into acc4, in two loops, so
//% -- each wgmma names its accumulators where the code is generated; with
//% -- p.stash one set of sums, the first part's stored between the two loops
//% -- (lib/stash.cu). wu8=1: the sums start at the row sums' offset
//% -- (lib/wu8_start.cu).
{{ render("lib/wu8_start.cu", { p = p }) }}
//% if p.parts == 2 then
//%   local stash = p.stash == 1
//%   if stash then
    /* Two activation parts: the K tiles of the layer's first k8 channels
     * (INT8 tokens), then the rest (INT4 values); k8 is a multiple of 128,
     * so a K tile lies in one part. */
//%   else
    /* Two activation parts: the K tiles of the layer's first k8 channels
     * (INT8 tokens) sum into acc, the rest (INT4 values) into acc4; k8 is
     * a multiple of 128, so a K tile lies in one part. */
//%   end
    const int kt8 = min(max(k8 / BK - kt_begin, 0), ktiles);
//%   if stash and p.split == 1 then
    __shared__ int stash_slot;
//%   end
    int kt = 0;
    for (; kt < kt8; ++kt) {
{{ (render(body, { p = p, par = 0, ends = "check", sums = not stash and "acc" or nil }):gsub("\n$", "")) }}
    }
//%   if stash then
    if (kt8 > 0) {
        /* The INT8 part ends: every MMA done, its sums to the workspace
         * (lib/stash.cu), the set zeroed for the INT4 part. */
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NT / 2; ++j)
                reg_fence(acc[i][j]);
//%     if p.split == 1 then
        if (tid == 0)
            stash_slot = stash_claim(counters, nwords);
//%       if p.producer == 1 then
        /* The MMA warpgroups only: the producer may still be refilling. */
        asm volatile("bar.sync 1, %0;\n" :: "n"(THREADS) : "memory");
//%       else
        __syncthreads();
//%       end
        int *sums8 = stash + (size_t)stash_slot * (BM * BN);
//%     else
        int *sums8 = partials + ((size_t)(blockIdx.y * gridDim.x + blockIdx.x) * SPLIT + blockIdx.z) * (size_t)(2 * BM * BN);
//%     end
#pragma unroll
        for (int q = 0; q < ACC_REGS; ++q)
            __stcg(sums8 + q * THREADS + tid, ACC_REG(q));
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NT / 2; ++j)
                acc[i][j] = 0;
    }
//%   end
    for (; kt < ktiles; ++kt) {
{{ (render(body, { p = p, par = 0, ends = "check", sums = not stash and "acc4" or nil }):gsub("\n$", "")) }}
    }
//% elseif p.kt_unroll == 1 then
    for (int kt = 0; kt < ktiles; ++kt) {
{{ (render(body, { p = p, par = 0, ends = "check" }):gsub("\n$", "")) }}
    }
//% else
    int kt_pair = 0;
    for (; kt_pair + 1 < ktiles; kt_pair += 2) {
        {
            const int kt = kt_pair;
{{ (render(body, { p = p, par = 0, ends = "never" }):gsub("\n$", "")) }}
        }
        {
            const int kt = kt_pair + 1;
{{ (render(body, { p = p, par = 1, ends = "check" }):gsub("\n$", "")) }}
        }
    }
    if (kt_pair < ktiles) {
        const int kt = kt_pair;
{{ (render(body, { p = p, par = 0, ends = "always" }):gsub("\n$", "")) }}
    }
//% end
