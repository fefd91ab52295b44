#!/usr/bin/env python3
"""sass-hazards.py CUBIN... -- a static scan of warpgroup-MMA kernels for
writes to a register that an IGMMA still in flight reads as its A operand
(PTX leaves that undefined; ptxas does not prevent it: with wgmma groups
committed under a branch and waited for on another path it hands their A
registers to later code, session 41). Every path from the kernel's entry is
walked (states: place, groups pending, group open): IGMMAs open a group,
"gsb0" closes it, WARPGROUP.DEPBAR.LE gsb0, N retires all but the N newest
groups, and any instruction writing a register of a pending or open group's
A operand is reported. The SASS comes from cuobjdump or, without it, from
nvdisasm (the CUDA toolkit's, or the nvidia-cuda-nvdisasm wheel's). Dump
cubins with `qjit compile` into a cache and read them from a test program,
or compile `qjit gen` output with nvcc -cubin
-gencode=arch=compute_90a,code=sm_90a."""
import re, shutil, subprocess, sys

def sass(path):
    """(instructions, label -> index): each instruction's text without its
    address, branch targets as labels."""
    if shutil.which('cuobjdump'):
        out = subprocess.run(['cuobjdump', '-sass', path], capture_output=True, text=True).stdout
        rows = [(int(m.group(1), 16), m.group(2).strip()) for m in
                (re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', l) for l in out.splitlines()) if m]
        at = {a: i for i, (a, _) in enumerate(rows)}
        ins = [re.sub(r'(?:`\(\.\w+\)\s*)?0x([0-9a-f]+)', lambda m: '(.A%x)' % int(m.group(1), 16), t)
               if re.search(r'BRA', t) else t for _, t in rows]
        return ins, {'.A%x' % a: i for a, i in at.items()}
    out = subprocess.run(['nvdisasm', '-c', path], capture_output=True, text=True).stdout
    ins, labels = [], {}
    for l in out.splitlines():
        m = re.match(r'\s*(\.L_x_\d+):', l)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.match(r'\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;', l)
        if m:
            ins.append(m.group(1).replace('`', ''))
    return ins, labels

NOWRITE = ('ST', 'STS', 'STG', 'STL', 'BRA', 'BAR', 'EXIT', 'WARPGROUP', 'DEPBAR', 'LDGDEPBAR', 'NOP', 'RED', 'ATOM',
           'CCTL', 'MEMBAR', 'WARPSYNC', 'SYNCS', 'UTMALDG', 'ARRIVES', 'BSYNC', 'BSSY', 'CALL', 'RET', 'ERRBAR', 'FENCE',
           'ELECT', 'UTMACCTL', 'UTMAPF', 'PREEXIT', 'ACQBULK', 'IGMMA', 'HGMMA')

def dests(text):
    t = re.sub(r'^@!?U?P\w+\s+', '', text)
    op = t.split()[0]
    base = op.split('.')[0]
    if base in NOWRITE or base.startswith('U') and base not in ('UIADD3',):
        return set()
    m = re.match(r'(R\d+)', t[len(op):].strip())
    if not m:
        return set()
    r = int(m.group(1)[1:])
    w = 4 if '.128' in op else 2 if ('.64' in op or '.WIDE' in op) else 1
    return set(range(r, r + w))

def scan(path):
    ins, labels = sass(path)
    problems, seen, stack = {}, set(), [(0, (), frozenset())]
    while stack:
        pc, pend, cur = stack.pop()
        while pc < len(ins):
            if (pc, pend, cur) in seen:
                break
            seen.add((pc, pend, cur))
            t = ins[pc]
            m = re.search(r'[IH]GMMA\S*\s+R\d+,\s*(R\d+),', t)
            if m:
                r = int(m.group(1)[1:])
                cur = cur | frozenset(range(r, r + 4))
            if re.search(r'[IH]GMMA', t) and 'gsb0' in t:
                pend, cur = pend + (cur,), frozenset()
            m = re.search(r'WARPGROUP.DEPBAR.LE gsb0, 0x(\d+)', t)
            if m:
                n = int(m.group(1), 16)
                pend = pend[len(pend) - n:] if n else ()
            live = set(cur).union(*pend)
            hit = dests(t) & live
            if hit and pc not in problems:
                problems[pc] = '%s  (R%d read by an IGMMA in flight)' % (t, min(hit))
            b = re.search(r'\bBRA[^(]*\((\.\w+)\)', t)
            if b and b.group(1) in labels:
                stack.append((labels[b.group(1)], pend, cur))
                # Unconditional but for a predicate or BRA.DIV (taken where
                # the warp diverged).
                if not t.startswith('@') and 'BRA.DIV' not in t:
                    break
            if re.match(r'(EXIT|RET)\b', t):
                break
            pc += 1
    return [problems[k] for k in sorted(problems)]

bad = 0
for p in sys.argv[1:]:
    pr = scan(p)
    if pr:
        bad += 1
        print(p, len(pr), 'hazards, e.g.', pr[0])
print('%d of %d cubins with hazards' % (bad, len(sys.argv) - 1))
