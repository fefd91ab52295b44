//% -- lib/kt_loop.cu -- the main loop of a warpgroup-MMA pipe over the
//% -- slice's K tiles, `body` rendered per tile (with `kt` its index; `par`
//% -- the set of group sums the tile starts; `ends`: whether the slice may
//% -- end with this tile, "check" / "never" / "always"). With p.kt_unroll = 2
//% -- (fold2, one group per K tile) it takes two tiles per iteration, sets 0
//% -- and 1, and an odd last tile after the loop, so where the slice ends is
//% -- known where the code is generated (ptxas serializes every wgmma if it
//% -- cannot prove no accumulator is read while an MMA is in flight).
//% if p.kt_unroll == 1 then
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
