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
//% -- each wgmma names its accumulators where the code is generated.
//% if p.parts == 2 then
    /* Two activation parts: the K tiles of the layer's first k8 channels
     * (INT8 tokens) sum into acc, the rest (INT4 values) into acc4; k8 is
     * a multiple of 128, so a K tile lies in one part. */
    const int kt8 = min(max(k8 / BK - kt_begin, 0), ktiles);
    int kt = 0;
    for (; kt < kt8; ++kt) {
{{ (render(body, { p = p, par = 0, ends = "check", sums = "acc" }):gsub("\n$", "")) }}
    }
    for (; kt < ktiles; ++kt) {
{{ (render(body, { p = p, par = 0, ends = "check", sums = "acc4" }):gsub("\n$", "")) }}
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
