#!/usr/bin/env python3
"""Plots and tables of bench_potrf_large's CSV: GFLOP/s by n (fixed) and by max (variable).

    python3 bench/gpu/plot_potrf_large.py bench/results/h200/potrf-large-<commit>-d.csv docs/img/potrf-large-h200.png
Prints the markdown tables docs/cholesky.md quotes.
"""
import csv, sys
from collections import defaultdict

src, png = sys.argv[1], sys.argv[2]
rows = [r for r in csv.DictReader(l for l in open(src) if not l.startswith('#'))]
fixed = defaultdict(dict)
var = defaultdict(dict)
for r in rows:
    key = r['impl'] + ('' if r['variant'] in ('-', 'default') else ':' + r['variant'])
    if r['kind'] == 'fixed':
        fixed[key][int(r['n_or_max'])] = (float(r['gflops']), float(r['bound_fraction']), float(r['ms']))
    else:
        var[(r['dist'], int(r['batch']))].setdefault(key, {})[int(r['n_or_max'])] = (float(r['gflops']), float(r['bound_fraction']), float(r['ms']))

ns = sorted(fixed['tinybatch'])
if ns:
    print('| n | ' + ' | '.join(map(str, ns)) + ' |')
    print('| --- |' + ' --- |' * len(ns))
    for k, label in [('tinybatch', 'tinybatch GFLOP/s'), ('cusolver_potrf_batched', 'cuSOLVER potrfBatched GFLOP/s')]:
        print(f'| {label} | ' + ' | '.join(f'{fixed[k][n][0]:.0f}' for n in ns) + ' |')
    print('| tinybatch / cuSOLVER | ' + ' | '.join(f"{fixed['cusolver_potrf_batched'][n][2] / fixed['tinybatch'][n][2]:.2f}" for n in ns) + ' |')
    print('| tinybatch, fraction of the bound | ' + ' | '.join(f"{fixed['tinybatch'][n][1]:.2f}" for n in ns) + ' |')
    best = {n: min((v[n][2], k) for k, v in fixed.items() if k.startswith('tinybatch') and n in v and 'upper' not in k) for n in ns}
    print('| best swept shape / its fraction | ' + ' | '.join(f"{best[n][1].split(':')[-1]} {fixed['tinybatch'][n][2] / best[n][0] * fixed['tinybatch'][n][1]:.2f}" for n in ns) + ' |')
print()
for (dist, count), d in sorted(var.items()):
    maxes = sorted(d['tinybatch_vbatch'])
    print(f'\n{dist}, {count} matrices: GFLOP/s on the actual sizes, by max')
    print('| impl | ' + ' | '.join(map(str, maxes)) + ' |')
    print('| --- |' + ' --- |' * len(maxes))
    for k in sorted(d):
        print(f'| {k} | ' + ' | '.join(f'{d[k][m][0]:.0f}' if m in d[k] else '' for m in maxes) + ' |')
    tb_ = d['tinybatch_vbatch']
    print('| vbatch / own padded | ' + ' | '.join(f"{d['tinybatch_fixed_padded'][m][2] / tb_[m][2]:.1f}" for m in maxes) + ' |')
    print('| vbatch / cuSOLVER padded | ' + ' | '.join(f"{d['cusolver_potrf_batched_padded'][m][2] / tb_[m][2]:.1f}" for m in maxes) + ' |')

try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit('no matplotlib: tables only')
# The device and precision from the CSV itself (one precision per file).
gpu = rows[0]['device'].replace('NVIDIA ', '').split()[0] if rows else '?'
prec = {'d': 'double', 's': 'float'}.get(rows[0]['prec'], rows[0]['prec']) if rows else '?'
panels = [p for p in ('fixed', 'var') if (fixed if p == 'fixed' else var)]
fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
ax = dict(zip(panels, axes[0]))
if 'fixed' in ax:
    for k, lab in [('tinybatch', 'tinybatch (default)'), ('cusolver_potrf_batched', 'cuSOLVER potrfBatched'),
                   ('tinybatch:onchip', 'tinybatch on-chip kernel'), ('tinybatch:gemm_nb32_split', 'GEMM path, two-launch panel'),
                   ('tinybatch:gemm_nb32_one_kernel', 'GEMM path, one panel kernel')]:
        if k in fixed:  # the optional rows where the CSV has them
            m = [n for n in ns if n in fixed[k]]
            ax['fixed'].plot(m, [fixed[k][n][0] for n in m], 'o-' if ':' not in k else 's--', label=lab)
    ax['fixed'].set_xscale('log', base=2); ax['fixed'].set_xlabel('n'); ax['fixed'].set_ylabel('GFLOP/s')
    ax['fixed'].set_title(f'fixed size, {prec}, {gpu}'); ax['fixed'].legend()
d = var.get(('uniform', 3000), {})
if d and 'var' in ax:
    ax = {1: ax['var']}
    maxes = sorted(d['tinybatch_vbatch'])
    for k in ['tinybatch_vbatch', 'tinybatch_fixed_padded', 'cusolver_potrf_batched_padded', 'cusolver_potrf_streams']:
        if k in d:
            ax[1].plot([m for m in maxes if m in d[k]], [d[k][m][0] for m in maxes if m in d[k]], 'o-', label=k)
    ax[1].set_xscale('log', base=2); ax[1].set_yscale('log'); ax[1].set_xlabel('max n (uniform sizes, 3000 matrices)')
    ax[1].set_ylabel('GFLOP/s (actual sizes)'); ax[1].set_title(f'variable size, {prec}, {gpu}'); ax[1].legend(fontsize=7)
fig.tight_layout()
fig.savefig(png, dpi=110)
