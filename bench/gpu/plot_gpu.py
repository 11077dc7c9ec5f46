#!/usr/bin/env python3
"""Plots bench_gpu's CSV: one PNG per operation, GFLOP/s (left) and roofline fraction (right)
against n, tinybatch and the vendor routines, float and double.

    python3 bench/gpu/plot_gpu.py bench/results/h100/gpu-h100-<commit>.csv [outdir]
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    path = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(path) or "."
    header = []
    with open(path) as f:
        lines = [l for l in f if not (l.startswith("#") and header.append(l.strip("# \n")) is None)]
    rows = list(csv.DictReader(lines))
    base = os.path.splitext(os.path.basename(path))[0]
    for op in sorted({r["op"] for r in rows}):
        fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
        for impl in sorted({r["impl"] for r in rows if r["op"] == op}):
            for prec, style in (("s", "--"), ("d", "-")):
                pts = sorted((int(r["n"]), float(r["gflops"]), float(r["roofline_fraction"]))
                             for r in rows if r["op"] == op and r["impl"] == impl and r["prec"] == prec)
                if not pts:
                    continue
                n = [p[0] for p in pts]
                marker = "o" if impl == "tinybatch" else "x"
                ax[0].plot(n, [p[1] for p in pts], style, marker=marker, label=f"{impl} ({prec})")
                ax[1].plot(n, [p[2] for p in pts], style, marker=marker, label=f"{impl} ({prec})")
        ax[0].set_yscale("log")
        ax[0].set_ylabel("GFLOP/s")
        ax[1].set_ylabel("fraction of the memory roofline")
        ax[1].axhline(0.85, color="grey", lw=0.8, ls=":")
        ax[1].set_ylim(0, 1.1)
        for a in ax:
            a.set_xlabel("n")
            a.grid(alpha=0.3)
        ax[1].legend(fontsize=7)
        fig.suptitle(f"{op}: " + "; ".join(h for h in header[:2]), fontsize=9)
        fig.tight_layout()
        out = os.path.join(outdir, f"{base}-{op}.png")
        fig.savefig(out, dpi=110)
        print(out)


if __name__ == "__main__":
    main()
