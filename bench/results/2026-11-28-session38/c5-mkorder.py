#!/usr/bin/env python3
# Template copy: the TMA pipe's prologue requests only the first EARLY stages' weights before waiting for the
# activation kernel (then their tokens), and the rest of the ring's stages whole (weights and tokens) in order.
import shutil, sys, os
src, dst, early = sys.argv[1], sys.argv[2], int(sys.argv[3])
if os.path.exists(dst): shutil.rmtree(dst)
shutil.copytree(src, dst)
p = os.path.join(dst, "gemm_tma.cu"); s = open(p).read()
old_wg = "                    for (; kt < STAGES && kt < ktiles; ++kt) {\n                        mbar_expect_tx(full0 + kt * 8, TX_BYTES);\n                        tma_stage<true, false>"
assert s.count(old_wg) == 1
s = s.replace(old_wg, old_wg.replace("kt < STAGES && kt < ktiles", f"kt < {early} && kt < ktiles"))
old1 = """//% else
    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s) {
            mbar_expect_tx(full0 + s * 8, TX_BYTES);
            tma_stage<true, false>"""
assert s.count(old1) == 1
s = s.replace(old1, old1.replace("s < STAGES && s < ktiles", f"s < {early} && s < ktiles"))
old2 = """    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s)
            tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, {{ gmap and "gmap, " or "" }}
                                   n_cta, m_cta);
//% end"""
assert s.count(old2) == 1, s.count(old2)
new2 = """//% if p.sparse == 1 then
    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s)
            tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, {{ gmap and "gmap, " or "" }}
                                   n_cta, m_cta);
//% else
    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s) {
            if (s < EARLYX) {
                tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, {{ gmap and "gmap, " or "" }}
                                       n_cta, m_cta);
            } else {
                mbar_expect_tx(full0 + s * 8, TX_BYTES);
                tma_stage<true, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, {{ gmap and "gmap, " or "" }}
                                      n_cta, m_cta);
            }
        }
//% end
//% end""".replace("EARLYX", str(early))
s = s.replace(old2, new2)
open(p, "w").write(s)
print("ok")
