#!/usr/bin/env python3
"""The variable-size rows of bench_potrf_large's CSV, one panel per (sizes, batch): GFLOP/s on
the actual sizes by largest order, for the variants named (impl:variant, 'default' for the
plain impl), against tinybatch's and cuSOLVER's padded batches.

    python3 bench/gpu/plot_potrf_var.py results.csv out.png tinybatch_vbatch:inclusive tinybatch_vbatch:gemm_nb32_mma_split
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

src, png, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = [r for r in csv.DictReader(l for l in open(src) if not l.startswith("#")) if r["kind"] == "var"]
prec = {"d": "double", "s": "float"}.get(rows[0]["prec"], rows[0]["prec"])
device = rows[0]["device"]
series = defaultdict(lambda: defaultdict(dict))
for r in rows:
    series[(r["dist"], int(r["batch"]))][r["impl"] + ":" + r["variant"]][int(r["n_or_max"])] = float(r["gflops"])
lines = wanted + ["tinybatch_fixed_padded:default", "cusolver_potrf_batched_padded:-"]
panels = sorted(series)
fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4), squeeze=False)
for ax, key in zip(axes[0], panels):
    for name in lines:
        pts = series[key].get(name)
        if pts:
            xs = sorted(pts)
            ax.plot(xs, [pts[x] for x in xs], marker="o", label=name.replace("tinybatch_", "").replace(":-", ""))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("largest order")
    ax.set_title(f"{key[0]} sizes, {key[1]} matrices")
axes[0][0].set_ylabel(f"GFLOP/s on the actual sizes ({prec})")
axes[0][0].legend(fontsize=7)
fig.suptitle(f"variable-size batched Cholesky, {prec}, {device}")
fig.tight_layout()
fig.savefig(png, dpi=110)
