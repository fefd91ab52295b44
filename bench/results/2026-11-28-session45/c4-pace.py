import sys, statistics as st, collections
def load(f):
    A={};B={}
    for line in open(f):
        t=line.split()
        if not t: continue
        if t[0]=='QS': A[(int(t[2]),int(t[3]))]=(int(t[7]),int(t[8]),[int(x) for x in t[10:18]])
        elif t[0]=='QT': B[(int(t[2]),int(t[3]))]=[int(x) for x in t[5:29]]
    runs=collections.defaultdict(dict)
    for k in A:
        if k in B: g0,g1,s=A[k]; runs[k[0]][k[1]]=(g0,g1,s+B[k])
    ev=[float(l.split()[3]) for l in open(f) if l.startswith('rep ')][2:]
    return runs, ev
for pt in sys.argv[1].split(','):
    print("==", pt, "  (per launch medians over CTAs; ns; 'kernel' = last CTA end from first CTA start)")
    print(f"   {'':4s} {'start':>6s} {'loop0':>6s} {'tile0':>6s} {'pace':>6s} {'lastT':>6s} {'drain':>6s} {'fixup':>6s} {'end':>6s} {'kernel':>7s} {'maxdur':>7s} {'resid%':>6s}")
    for tr in sys.argv[2].split(','):
        runs, ev = load(f"st-{tr}-{pt}.txt")
        for l in sorted(runs):
            ctas=runs[l]; g0m=min(v[0] for v in ctas.values())
            R=collections.defaultdict(list); nres=0
            for i,(g0,g1,s) in ctas.items():
                cpn=(s[31]-s[0])/(g1-g0)
                nk=len([k for k in range(24) if s[3+k]>0])
                c=lambda i: s[i]/cpn
                R['start'].append(g0-g0m); R['loop0'].append(c(2)); R['tile0'].append(c(3))
                R['pace'].append((c(3+nk-1)-c(3))/(nk-1)); R['lastT'].append(c(3+nk-1))
                R['drain'].append(c(27)); R['fix'].append(c(29)-c(28) if s[29] else 0); R['end'].append(c(31)); R['g1'].append(g1-g0m)
                nres+= s[30]!=0
            m=lambda k: st.median(R[k])
            print(f"   {tr:4s} {m('start'):6.0f} {m('loop0'):6.0f} {m('tile0'):6.0f} {m('pace'):6.1f} {m('lastT'):6.0f} {m('drain'):6.0f} {m('fix'):6.0f} {m('end'):6.0f} {max(R['g1']):7.0f} {max(R['end']):7.0f} {100*nres/len(ctas):6.0f}")
