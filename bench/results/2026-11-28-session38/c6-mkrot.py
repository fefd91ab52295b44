#!/usr/bin/env python3
# Template copy: non-persistent dense TMA kernels (no fold) walk their K slice from a per-CTA rotation, so the
# CTAs that share a token tile (same M tile and slice, different weight rows) do not all read it at once.
import shutil, sys, os
src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]   # mode: x (rotate by blockIdx.x), h (spread evenly)
if os.path.exists(dst): shutil.rmtree(dst)
shutil.copytree(src, dst)
def patch(path, old, new, n=1):
    p = os.path.join(dst, path); s = open(p).read()
    assert s.count(old) == n, (path, old[:60], s.count(old))
    open(p, "w").write(s.replace(old, new))
rot = "(int)(blockIdx.x % (unsigned)ktiles)" if mode == "x" else "(int)(((unsigned)blockIdx.x * (unsigned)ktiles) / gridDim.x)"
patch("lib/wgmma_head.cu", """    const int ktiles = kt_end - kt_begin;
""", """    const int ktiles = kt_end - kt_begin;
//% if p.persist ~= 1 and p.sparse ~= 1 and p.fold ~= 1 and p.fold2 ~= 1 and p.tma == 1 and p.parts ~= 2 then
    /* Rotation of the slice's K tiles (timing study). */
    const int krot = ktiles > 0 ? %ROT% : 0;
#define KT_AT(x) (kt_begin + ((x) + krot < ktiles ? (x) + krot : (x) + krot - ktiles))
//% else
#define KT_AT(x) (kt_begin + (x))
//% end
""".replace("%ROT%", rot))
# TMA pipe: non-persistent prologue (producer thread) and refill, producer warpgroup path
patch("gemm_tma.cu", """            tma_stage<true, false>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, {{ gmap and "gmap, " or "" }}""",
      """            tma_stage<true, false>(smem_base + s * STAGE_BYTES, full0 + s * 8, KT_AT(s), xmap, wmap, {{ gmap and "gmap, " or "" }}""")
patch("gemm_tma.cu", """            tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, {{ gmap and "gmap, " or "" }}""",
      """            tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, KT_AT(s), xmap, wmap, {{ gmap and "gmap, " or "" }}""")
patch("gemm_tma_step.cu", """            tma_stage<true, true>(smem_base + slot * STAGE_BYTES, full0 + slot * 8, kt_begin + kt - 1 + STAGES,""",
      """            tma_stage<true, true>(smem_base + slot * STAGE_BYTES, full0 + slot * 8, KT_AT(kt - 1 + STAGES),""")
# producer warpgroup (persistent kernels redefine kt_begin per piece: KT_AT is the identity there)
patch("gemm_tma.cu", """                        tma_stage<true, false>(smem_base + kt * STAGE_BYTES, full0 + kt * 8, kt_begin + kt, xmap, wmap,""",
      """                        tma_stage<true, false>(smem_base + kt * STAGE_BYTES, full0 + kt * 8, KT_AT(kt), xmap, wmap,""")
patch("gemm_tma.cu", """                        tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap,""",
      """                        tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, KT_AT(s), xmap, wmap,""")
patch("gemm_tma.cu", """                    tma_stage<true, true>(smem_base + slot * STAGE_BYTES, full0 + slot * 8, kt_begin + kt, xmap, wmap,""",
      """                    tma_stage<true, true>(smem_base + slot * STAGE_BYTES, full0 + slot * 8, KT_AT(kt), xmap, wmap,""")
print("ok")
