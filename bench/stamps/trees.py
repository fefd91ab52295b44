#!/usr/bin/env python3
# bench/stamps/trees.py SRC DST NAME...: diagnostic copies of the template tree SRC (e.g. templates) at
# DST/NAME/templates, each with one more piece of a sparse TMA kernel taken away, for timing studies on the GPU
# (bench/stamps/bisect.py). They give wrong sums: timing only, never the library's templates. Each tree adds to
# the one before it (session 43, bench/results/2026-11-28-session43):
#   X    the MMA warps run the dense steps only (no tile test, no fold; a ring of blocks' places still handed on);
#        the producer still looks the residual up and copies it into the stage
#   X0   X with the residual warp's rmask loads gone (its cursor reads zero words: nothing found, nothing copied)
#   Xc   X with the residual found but not copied (the warp arrives with no bytes)
#   Xl   X with every copy from the residual's first block (an L2 hit, never DRAM): Xl - Xc the copies' own
#        cost, X - Xl their DRAM latency
#   Xs   X without the copies of the slice's first STAGES K tiles (those tiles arrive with no bytes, as in Xc)
#   Xt   X with the copies of the slice's first STAGES K tiles only: X - Xs and X - Xt split X - Xc into the
#        ring's first fill (its copies behind every CTA's first tensor copies) and the rest
#   Y    X with the residual warp arriving on each slot without lookups or copies
#   Z    Y without the residual warp (a `full` barrier of one arrival)
#   Z2   Z without the residual's room in the stage (the plan's stage bytes the dense kernel's)
#   Z3   Z2 with the dense kernel's register split (the producer warpgroup at 24, its MMA warpgroups the rest)
#   W    the split kept where a warpgroup has two or more 64-row blocks (its tile test, branch and places handed
#        on), but both of its paths the dense steps: S - W the fold's loads and adds, W - X the test and branch
#   Xw   X without the cp.async pipes' residual (warp 0 looks nothing up, copies nothing, writes a presence word of
#        0): X - Xw what the lookup in the stage load costs every warp at the next barrier
#   Xr   X without a ring of blocks' copies (the blocks found, their places handed out and on, no bytes): X - Xr
#        what the ring's copies cost
#   Z4   Z2 without the residual's kernel parameters (rmask, rweight) and the residual warp's dead branch: what
#        is left is the sparse key (the kernel's name, the producer's registers)
# (W branches off the templates; Xr, Xw, X0, Xc, Xl, Xs and Xt off X; Y, Z, Z2 follow each other; Z3 and Z4 branch off Z2.) A tree that loses a stage's
# room (Z2) plans keys the sparse twin could not; a key at the dense kernel's stages then measures everything but
# the room. Each patch asserts that its place in the templates is still there, so a template edit that moves one
# fails here.
import os, shutil, sys

def patch(root, path, old, new):
    p = os.path.join(root, path)
    s = open(p).read()
    assert s.count(old) == 1, (path, old[:80], s.count(old))
    open(p, 'w').write(s.replace(old, new))

STEPS_FOLD = '''        if (__any_sync(0xFFFFFFFFu, (rbits & rwg) != 0u)) {'''
DENSE_STEPS = '''{{ (render("lib/wgmma_steps.cu", { p = p, par = par, ends = ends, sums = sums, fold = false }):gsub("\\n$", "")) }}
'''
HAND_ON = '''//%   if p.rpieces > 0 then
        if (__any_sync(0xFFFFFFFFu, (rbits & rwg) != 0u)) {
            __syncwarp();
            if (lane == 0)
                mbar_arrive(rread0 + (({{ it }} % STAGES) * WG_N + wg_n) * 8);
        }
//%   end
'''
CURSOR = ('                residual_cursor rcur = residual_tile_start(rmask, lane, BK / 64, (BN / 16) * (BK / 64), '
          'n_cta, kt_begin + rw,\n                                                           N, K);\n')
ROOM_CALL = ('                    slot_residual(smem_base + slot * STAGE_BYTES, full0 + slot * 8, kt_begin + kt, lane, rcur, '
             'rweight);')

def x(root):
    # The per-tile split (warpgroups of two or more 64-row blocks) and the one path (of one) both made the dense
    # steps; a ring of blocks still hands its places on (without, the persistent 128x256 kernel would wait forever
    # once its ring filled).
    p = os.path.join(root, 'lib/wgmma_tile.cu')
    s = open(p).read()
    a = s.index(STEPS_FOLD)
    b = s.index('//% else', a)
    open(p, 'w').write(s[:a] + '        (void)rbits; (void)rtile;\n' + DENSE_STEPS + HAND_ON + s[b:])
    patch(root, 'lib/wgmma_tile.cu', 'fold = p.sparse == 1, early = true }', 'fold = false }')

def w(root):
    patch(root, 'lib/wgmma_tile.cu', """            const u32 rfirst = lds32(stage + RB_OFF + 4) & 0xFFu;
//%   end
{{ (render("lib/wgmma_steps.cu", { p = p, par = par, ends = ends, sums = sums, fold = true }):gsub("\\n$", "")) }}""",
          """            (void)rtile;
//%   end
{{ (render("lib/wgmma_steps.cu", { p = p, par = par, ends = ends, sums = sums, fold = false }):gsub("\\n$", "")) }}""")

def xr(root):
    patch(root, 'gemm_tma.cu', '''        if (src && R_HEAD(lane))
            bulk_load(smem_base + R_RING_OFF''', '''        if (src && R_HEAD(lane) && lane > 32)
            bulk_load(smem_base + R_RING_OFF''')
    patch(root, 'gemm_tma.cu', 'mbar_expect_tx(full, count * 512);', 'mbar_expect_tx(full, 0u);')

def xw(root):
    patch(root, 'lib/stage_load.cu', '''        const uint4 *src = residual_tile_lookup(rcur, rweight, kt, tid, BK / 64);''',
          '''        const uint4 *src = nullptr;''')

def x0(root):
    patch(root, 'gemm_tma.cu', CURSOR, '                residual_cursor rcur = residual_start(rmask, N / 16, 0, N, K);\n')

def xc(root):
    patch(root, 'gemm_tma.cu', '''    if (src && R_HEAD(lane))
        bulk_load(stage + R_OFF + R_PLACE(lane) * 512, src, R_SLABS * R_KSTEPS * 512, full);
    if (lane == 0) {
        sts32(stage + RB_OFF, present);
        mbar_expect_tx(full, __popc(present) * 512);''', '''    if (lane == 0) {
        sts32(stage + RB_OFF, present);
        mbar_expect_tx(full, 0u);''')

def xl(root):
    patch(root, 'gemm_tma.cu', '''    if (src && R_HEAD(lane))
        bulk_load(stage + R_OFF + R_PLACE(lane) * 512, src,''', '''    if (src && R_HEAD(lane))
        bulk_load(stage + R_OFF + R_PLACE(lane) * 512, rweight,''')

def first_tiles(root, keep):
    # The copies of the residual of the slice's first STAGES K tiles only (keep 'first') or of the others only
    # (keep 'rest'); a tile without them arrives with no bytes, as in Xc.
    first = '(kt < (int)((long long)(K / BK) * blockIdx.z / SPLIT) + STAGES)'
    cond = first if keep == 'first' else '!' + first
    patch(root, 'gemm_tma.cu', '''    if (src && R_HEAD(lane))
        bulk_load(stage + R_OFF + R_PLACE(lane) * 512, src,''', '''    if (src && R_HEAD(lane) && %s)
        bulk_load(stage + R_OFF + R_PLACE(lane) * 512, src,''' % cond)
    patch(root, 'gemm_tma.cu', '        mbar_expect_tx(full, __popc(present) * 512);',
          '        mbar_expect_tx(full, %s ? __popc(present) * 512 : 0u);' % cond)

def xs(root): first_tiles(root, 'rest')
def xt(root): first_tiles(root, 'first')

def y(root):
    patch(root, 'gemm_tma.cu', CURSOR, '')
    patch(root, 'gemm_tma.cu', ROOM_CALL,
          '                    if (lane == 0) { sts32(smem_base + slot * STAGE_BYTES + RB_OFF, 0u); '
          'mbar_arrive(full0 + slot * 8); }')

def z(root):
    patch(root, 'gemm_tma.cu', '        if (warp >= R_WARP && warp < R_WARP + R_WARPS) {\n',
          '        if (warp >= R_WARP && warp < R_WARP + R_WARPS)\n            return;\n        if (K < 0) {\n')
    patch(root, 'gemm_tma.cu', '            mbar_init(full0 + s * 8, {{ p.sparse == 1 and 2 or 1 }});',
          '            mbar_init(full0 + s * 8, 1);')

def z2(root):
    patch(root, 'lib/wgmma_plan.lua', '  local sp, r_stage = G.sparse(f, L, bn, bk)\n',
          '  local sp, r_stage = G.sparse(f, L, bn, bk)\n  r_stage = 0\n')
    patch(root, 'lib/wgmma_tile.cu', '        const u32 rbits = lds32(stage + RB_OFF);', '        const u32 rbits = 0u;')

def z4(root):
    patch(root, 'gemm_tma.cu', '        if (warp >= R_WARP && warp < R_WARP + R_WARPS)\n            return;\n        if (K < 0) {\n',
          '        if (false) {\n')
    patch(root, 'lib/gemm.lua', '''    add("rmask", "const uint2 *__restrict__", "w", "rmask")
    add("rweight", "const uint4 *__restrict__", "w", "rweight")
''', '')

def z3(root):
    patch(root, 'lib/wgmma_plan.lua', '(f.sparsity and PRODUCER_REGS_SPARSE) or ', '')

TREES = {'X': [x], 'W': [w], 'Xr': [x, xr], 'Xw': [x, xw], 'X0': [x, x0], 'Xc': [x, xc], 'Xl': [x, xl], 'Xs': [x, xs], 'Xt': [x, xt], 'Y': [x, y], 'Z': [x, y, z], 'Z2': [x, y, z, z2], 'Z3': [x, y, z, z2, z3],
         'Z4': [x, y, z, z2, z4]}

if __name__ == '__main__':
    if len(sys.argv) < 4 or any(n not in TREES for n in sys.argv[3:]):
        sys.exit('usage: trees.py SRC DST NAME... (NAME: %s)' % ' '.join(TREES))
    src, dst = sys.argv[1], sys.argv[2]
    for name in sys.argv[3:]:
        root = os.path.join(dst, name, 'templates')
        if os.path.exists(root):
            shutil.rmtree(root)
        shutil.copytree(src, root)
        for step in TREES[name]:
            step(root)
        print(root)
