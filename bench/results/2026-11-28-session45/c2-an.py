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
        if k in B:
            g0,g1,s=A[k]; runs[k[0]][k[1]]=(g0,g1,s+B[k])
    return runs
for f in sys.argv[1:]:
    runs=load(f)
    gap_r=[];gap_n=[];end_r=[];end_n=[];dur_r=[];dur_n=[]; slow=[]; pre=[]
    for l,ctas in runs.items():
        g0min=min(v[0] for v in ctas.values())
        ends=[]
        for i,(g0,g1,s) in ctas.items():
            ns=g1-g0; cpn=(s[31]-s[0])/ns
            nk=len([k for k in range(24) if s[3+k]>0])
            mask=s[30]
            land=[s[3+k]/cpn for k in range(nk)]
            gaps=[land[k]-land[k-1] for k in range(1,nk)]
            med=st.median(gaps)
            has=False
            for k in range(1,nk):
                if mask>>k&1:
                    gap_r.append(gaps[k-1]-med); has=True
                    if k+1<nk: pre.append(gaps[k]-med)
                else: gap_n.append(gaps[k-1]-med)
            (dur_r if mask else dur_n).append(s[31]/cpn)
            ends.append((g1-g0min, bool(mask), i))
        ends.sort()
        slow.append(sum(1 for e in ends[-8:] if e[1]))
    def p(n,v): print(f"  {n:36s} n={len(v):5d} med {st.median(v) if v else 0:8.1f} mean {st.mean(v) if v else 0:8.1f} max {max(v) if v else 0:8.1f}")
    print(f)
    p("gap at residual tile - CTA median gap", gap_r); p("gap after it", pre); p("gap at other tiles - median", gap_n)
    p("CTA duration with residual (ns)", dur_r); p("CTA duration without", dur_n)
    print("  residual CTAs among the 8 last to end, per launch:", slow)
