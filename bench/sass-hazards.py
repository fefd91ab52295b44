#!/usr/bin/env python3
"""sass-hazards.py CUBIN... -- a static scan of warpgroup-MMA kernels for
writes to a register that an IGMMA still in flight reads as its A operand
(PTX leaves that undefined; ptxas does not prevent it). For every backward
branch the loop body is walked twice (so hazards across the back edge show):
IGMMAs open a group, "gsb0" closes it, WARPGROUP.DEPBAR.LE gsb0, N retires
all but the N newest groups, and any instruction writing a register of a
pending group's A operand is reported. Needs cuobjdump (CUDA toolkit or the
nvidia-cuda-cuobjdump wheel). Dump cubins with `qjit compile` into a cache
and read them from a test program, or compile `qjit gen` output with
nvcc -cubin -gencode=arch=compute_90a,code=sm_90a."""
import re, subprocess, sys
def sass(path):
    out = subprocess.run(['cuobjdump','-sass',path],capture_output=True,text=True).stdout
    ins = []
    for line in out.splitlines():
        m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line)
        if m: ins.append((int(m.group(1),16), m.group(2).strip()))
    return ins
NOWRITE = ('ST', 'STS', 'STG', 'LDGSTS', 'BRA', 'BAR', 'EXIT', 'WARPGROUP', 'DEPBAR', 'LDGDEPBAR', 'NOP', 'RED', 'ATOM', 'CCTL', 'MEMBAR', 'WARPSYNC', 'SYNCS', 'UTMALDG', 'ARRIVES', 'BSYNC', 'BSSY', 'CALL', 'RET', 'ERRBAR', 'FENCE', 'ELECT', 'UTMACCTL', 'UTMAPF','PREEXIT','ACQBULK')
def dests(text):
    t = re.sub(r'^@!?U?P\w+\s+', '', text)
    op = t.split()[0]
    base = op.split('.')[0]
    if base in NOWRITE or base.startswith('U') and base not in ('UIADD3',): return []
    rest = t[len(op):].strip()
    m = re.match(r'(R\d+)', rest)
    if not m: return []
    r = int(m.group(1)[1:])
    w = 4 if '.128' in op else 2 if ('.64' in op or '.WIDE' in op) else 1
    return list(range(r, r + w))
def scan(path):
    ins = sass(path); problems = []
    addr_idx = {a:i for i,(a,_) in enumerate(ins)}
    for i,(a,t) in enumerate(ins):
        m = re.search(r'BRA\s+(?:`\(\.\w+\)\s*)?0x([0-9a-f]+)', t)
        if not m: continue
        tgt = int(m.group(1),16)
        if tgt >= a or tgt not in addr_idx: continue
        body = ins[addr_idx[tgt]:i+1]
        pending = []  # list of groups: sets of A regs; current open group
        cur = set()
        for rnd in range(2):
            for (aa, tt) in body:
                if 'IGMMA' in tt or 'HGMMA' in tt:
                    mm = re.search(r'GMMA\S*\s+R\d+,\s*(R\d+),', tt)
                    if mm:
                        r = int(mm.group(1)[1:]); cur |= set(range(r, r+4))
                    if 'gsb0' in tt:
                        pending.append(cur); cur = set()
                    continue
                mm = re.search(r'WARPGROUP.DEPBAR.LE gsb0, 0x(\d+)', tt)
                if mm:
                    n = int(mm.group(1)); pending = pending[len(pending)-n:] if n else []
                    continue
                live = set().union(*pending) if pending else set()
                live |= cur
                for d in dests(tt):
                    if d in live and rnd == 1:
                        problems.append('%04x: %s  (R%d read by an IGMMA in flight)' % (aa, tt, d))
    return problems
bad = 0
for p in sys.argv[1:]:
    pr = scan(p)
    if pr:
        bad += 1
        print(p, len(pr), 'hazards, e.g.', pr[0])
print('%d of %d cubins with hazards' % (bad, len(sys.argv)-1))
