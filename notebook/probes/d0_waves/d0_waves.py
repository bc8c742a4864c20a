# d0 decode configs timed on a card (its results folder: gemm_bf16 CSVs, tunes included), fastest per config
# per shape at M <= 16: time over the shape's fastest, grid, blocks an SM holds (threads and the
# registers the row records: G=1 U=4 uses 119, so KW=8 blocks fit 2 an SM, KW=4 blocks 4), waves of
# those over the SMs, and steps of 32 U k per warp. Usage: python d0_waves.py [results/h200] [SMs]
# (2026-12-06, fifth session; output: h200.txt)
import csv,glob,math,collections,sys
folder=sys.argv[1] if len(sys.argv)>1 else 'results/h200'
SMS=int(sys.argv[2]) if len(sys.argv)>2 else 132
rows=[]
for f in glob.glob(folder+'/*gemm_bf16*.csv'):
    for r in csv.DictReader(open(f)):
        if (r.get('variant')=='d0' or (r.get('variant')=='best' and r.get('picked')=='d0')) and r.get('time_ms') and r.get('correct')=='true':
            rows.append(r)
best={}
for r in rows:
    k=(r['shape'],r['params']); t=float(r['time_ms'])
    if k not in best or t<best[k][0]: best[k]=(t,r)
by=collections.defaultdict(list)
for (s,p),(t,r) in best.items(): by[s].append((t,p,r))
for s in sorted(by, key=lambda s: tuple(map(int,s.split('x')))):
    M,N,K=map(int,s.split('x'))
    if M>16: continue
    L=sorted(by[s])
    t0=L[0][0]
    print(s, f"{N*K*2/t0/1e6:.0f} GB/s")
    for t,p,r in L[:10]:
        d=dict(kv.split('=') for kv in p.split())
        G,U,KW,MINB=int(d['G']),int(d['U']),int(d['KW']),int(d['MINB'])
        regs=int(r['reg_per_thread'] or 0)
        warps=KW; per=math.ceil(regs/8)*8*32*warps
        fit=min(64//warps, 65536//per if per else 99, 32)
        grid=[int(x) for x in r['grid'].split('x')]; blocks=math.prod(grid)
        print(f"   {t/t0:.3f} {t*1e3:7.1f}us {p:34s} grid {r['grid']:10s} fit {fit} tbps {r.get('theoretical_blocks_per_sm')} waves {blocks/(SMS*fit):.2f} steps {K//grid[1]//KW//(32*U)}")
