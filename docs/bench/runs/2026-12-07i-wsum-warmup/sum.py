import json,glob,sys,statistics as st,collections
d=sys.argv[1]
runs=collections.defaultdict(dict)
for f in glob.glob(d+'/wsum.r*.json'):
    r=f.split('/')[-1].split('.')[1]; p=f.split('/')[-1].split('.')[2]
    j=json.load(open(f))
    raw=j[0]['primaryMetric']['rawData'][0]
    runs[r][p]=raw
pools=['GLOBAL_QUEUE','WS_RING','WS_CHASE_LEV','LANE_EXTENSION','FORK_JOIN']
def m(x): return st.mean(x)
print("per fork ms/op: s1, s2, mean(s3-5) [protocol], mean(s12-14) [steady]")
for r in sorted(runs):
    for p in pools:
        if p in runs[r]:
            x=runs[r][p]; print(f"{r} {p:15s} {x[0]:6.1f} {x[1]:6.1f} {m(x[2:5]):6.2f} {m(x[11:14]):6.2f}")
print("paired FJP/ours by round (protocol seconds 3-5; steady 12-14)")
for p in pools[:-1]:
    a=[m(runs[r]['FORK_JOIN'][2:5])/m(runs[r][p][2:5]) for r in sorted(runs) if p in runs[r] and 'FORK_JOIN' in runs[r]]
    b=[m(runs[r]['FORK_JOIN'][11:14])/m(runs[r][p][11:14]) for r in sorted(runs) if p in runs[r] and 'FORK_JOIN' in runs[r]]
    print(f"{p:15s} protocol median {st.median(a):.2f} (worst {min(a):.2f}, best {max(a):.2f})  steady median {st.median(b):.2f} (worst {min(b):.2f}, best {max(b):.2f})")
