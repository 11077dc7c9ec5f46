#!/usr/bin/env python3
"""The GEMM-updated Cholesky against the fused kernel and cuSOLVER, from a sweep of
bench_potrf_large (--no-var --sweep): GFLOP/s by n, double and float side by side, and the
markdown table docs/cholesky.md quotes (ms).

    python3 bench/gpu/plot_potrf_gemm.py bench/results/h200/potrf-gemm-<commit>-sweep-h200.csv docs/img/potrf-gemm-h200.png
"""
import csv, sys
from collections import defaultdict

src, png = sys.argv[1], sys.argv[2]
head = open(src).readline().lstrip('# ').strip()
rows = [r for r in csv.DictReader(l for l in open(src) if not l.startswith('#')) if r['kind'] == 'fixed']
t = defaultdict(dict)  # (prec, impl:variant) -> n -> (ms, gflops)
for r in rows:
    t[(r['prec'], r['impl'] + ':' + r['variant'])][int(r['n_or_max'])] = (float(r['ms']), float(r['gflops']))
series = [('tinybatch:ib8_rpt1_t512_exc', 'fused IB 8'), ('tinybatch:ib8_rpt1_t512_inc', 'fused IB 8, loop-inclusive'),
          ('tinybatch:ib32_rpt1_t256_exc', 'fused IB 32'), ('tinybatch:gemm_nb32', 'GEMM-updated, 32 columns'),
          ('tinybatch:gemm_nb64', 'GEMM-updated, 64 columns'), ('cusolver_potrf_batched:-', 'cuSOLVER potrfBatched')]
for p in ('d', 's'):
    ns = sorted(t[(p, 'cusolver_potrf_batched:-')])
    print(f'\n{p}: ms')
    print('| n | ' + ' | '.join(map(str, ns)) + ' |')
    print('| --- |' + ' --- |' * len(ns))
    for k, lab in series:
        print(f'| {lab} | ' + ' | '.join(f'{t[(p, k)][n][0]:.2f}' if n in t[(p, k)] else '' for n in ns) + ' |')
    cu = t[(p, 'cusolver_potrf_batched:-')]
    g = t[(p, 'tinybatch:gemm_nb32')]
    print('| cuSOLVER / GEMM 32 | ' + ' | '.join(f'{cu[n][0] / g[n][0]:.2f}' for n in ns) + ' |')
try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit('no matplotlib: tables only')
fig, ax = plt.subplots(1, 2, figsize=(11, 4))
for a, p, name in [(ax[0], 'd', 'double'), (ax[1], 's', 'float')]:
    for k, lab in series:
        d = t[(p, k)]
        ns = sorted(d)
        a.plot(ns, [d[n][1] for n in ns], 'o-', label=lab, ms=3)
    a.set_xscale('log', base=2); a.set_xlabel('n'); a.set_ylabel('GFLOP/s'); a.set_title(f'{name}, 0.5 GiB per batch')
    a.legend(fontsize=7)
fig.suptitle(head, fontsize=8)
fig.tight_layout()
fig.savefig(png, dpi=110)
