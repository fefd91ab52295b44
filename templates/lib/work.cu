//% -- lib/work.cu -- the work of a persistent CTA (gemm_tma.cu): output tiles
//% -- in tile_origin's order, CTA c taking whole tiles c, c + grid, ...;
//% -- with sk=1 the tiles of the last, partial wave are split along K
//% -- instead, where the cost model says that pays: `split` slices a tile,
//% -- CTA c taking slice c / shared of tile c % shared (so the CTAs at work
//% -- at once sit at `split` places along K, the weight and token tiles of
//% -- a band read once for the CTAs at each). A slice adds its INT32 sums
//% -- to the others' through the workspace (lib/split_k.cu); the last to
//% -- finish stores the tile.
//% if p.sk == 1 then
/* The cost model that picks the split, in the MMA time of one K tile:
 * storing a slice's INT32 sums to the workspace, and reading back one other
 * slice's for the CTA that finishes the tile (a BM x BN tile of sums is
 * 4 x 128 bytes per output, a K tile 2 x 128 operations per output: at
 * ~64 bytes per cycle of L2 per SM, about two K tiles each). A tile is cut
 * into at most SK_SPLIT slices. */
#define SK_PUBLISH 2
#define SK_READ 2
#define SK_SPLIT 8
//% end

/* What the CTAs do: the first `whole` tiles of the order whole, then (sk=1)
 * the next `shared` tiles in `split` slices along K, a slice a CTA. */
struct work_plan { int whole, shared, split, ktiles; };

/* One piece of a CTA's work: output tile t of the order, its K tiles lo ..
 * hi - 1; sk: the tile's index among the split ones (its sums meet the
 * other slices'), else -1. */
struct work { int t, lo, hi, sk; };

/* The plan for `tiles` output tiles of `ktiles` K tiles on `grid` CTAs. Every
 * thread of every role computes the same. Without sk, or where splitting
 * does not pay, every tile is taken whole; else the tiles past the last
 * whole wave in the split the cost model prices lowest, from 2 to what the
 * grid holds (a slice a CTA). */
static __device__ __forceinline__ work_plan plan_work(int tiles, int ktiles, int grid)
{
    work_plan w = { tiles, 0, 1, ktiles };
//% if p.sk == 1 then
    const int rest = tiles % grid;
    /* The last wave's time taken whole, less the eighth of a tile that
     * splitting must win to be taken (the model is rough). */
    int best = ktiles - ktiles / 8;
    for (int split = 2; rest > 0 && split <= SK_SPLIT && split <= ktiles && rest * split <= grid; ++split) {
        const int cost = (ktiles + split - 1) / split + SK_PUBLISH + SK_READ * (split - 1);
        if (cost < best) {
            best = cost;
            w = { tiles - rest, rest, split, ktiles };
        }
    }
//% end
    return w;
}

/* The CTA's n-th piece of work into u (n from 0); false once there is none.
 * The whole tiles first (a multiple of the grid where any are split). */
static __device__ __forceinline__ bool work_next(const work_plan &w, int n, work &u)
{
    const int c = (int)blockIdx.x, t = c + n * (int)gridDim.x;
    if (t < w.whole) {
        u = { t, 0, w.ktiles, -1 };
        return true;
    }
    if (t != w.whole + c || c >= w.shared * w.split)
        return false;
    const int i = c % w.shared, z = c / w.shared;
    u = { w.whole + i, w.ktiles * z / w.split, w.ktiles * (z + 1) / w.split, i };
    return true;
}
