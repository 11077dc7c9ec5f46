#!/usr/bin/env python3
"""Plots a bench_cpu CSV: one PNG per operation and precision, GFLOP/s (left) and fraction of
the memory roofline (right; its rates are in the CSV) against n, one line per implementation,
solid for the streaming regime and dashed for the cache-resident one.

    python3 bench/plot.py bench/results/<machine>/cpu-XXXX.csv [--out DIR]
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    header = ""
    rows = []
    with open(path) as f:
        lines = f.readlines()
    body = []
    for line in lines:
        if line.startswith("#"):
            header = header or line[1:].strip()  # the first comment line names the machine
        else:
            body.append(line)
    for r in csv.DictReader(body):
        r["n"] = int(r["n"])
        r["gflops"] = float(r["gflops"])
        r["roofline_fraction"] = float(r["roofline_fraction"])
        rows.append(r)
    return header, rows


def table(rows, prec):
    for regime in ("stream", "cache"):
        for op in sorted({r["op"] for r in rows}):
            rs = [r for r in rows if r["prec"] == prec and r["op"] == op and r["regime"] == regime]
            if not rs:
                continue
            impls = sorted({r["impl"] for r in rs}, key=lambda s: (not s.startswith("tinybatch"), s))
            sizes = sorted({r["n"] for r in rs})
            cell = {(r["impl"], r["n"]): r for r in rs}
            print(f"\n{op}, {regime}, {prec}: GFLOP/s (fraction of roofline)\n")
            print("| n | " + " | ".join(impls) + " |")
            print("| --- " * (len(impls) + 1) + "|")
            for n in sizes:
                row = []
                for i in impls:
                    r = cell.get((i, n))
                    row.append(f"{r['gflops']:.2f} ({r['roofline_fraction']:.2f})" if r else "-")
                print(f"| {n} | " + " | ".join(row) + " |")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--out", default=None, help="folder for the PNGs (default: next to the CSV)")
    ap.add_argument("--table", default=None, metavar="PREC",
                    help="print a markdown table (GFLOP/s and roofline fraction) for d or s; no plots")
    args = ap.parse_args()
    header, rows = load(args.csv)
    if args.table:
        return table(rows, args.table)
    out = args.out or os.path.dirname(os.path.abspath(args.csv))
    stem = os.path.splitext(os.path.basename(args.csv))[0]
    groups = defaultdict(list)
    for r in rows:
        groups[(r["op"], r["prec"])].append(r)
    impls = sorted({r["impl"] for r in rows})
    colors = {name: plt.cm.tab10(i % 10) for i, name in enumerate(impls)}
    styles = {"stream": "-", "cache": "--"}
    written = []
    for (op, prec), rs in sorted(groups.items()):
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
        for impl in impls:
            for regime, ls in styles.items():
                pts = sorted((r["n"], r["gflops"], r["roofline_fraction"]) for r in rs
                             if r["impl"] == impl and r["regime"] == regime)
                if not pts:
                    continue
                n = [p[0] for p in pts]
                ax1.plot(n, [p[1] for p in pts], ls, marker="o", ms=3, color=colors[impl],
                         label=f"{impl} ({regime})")
                ax2.plot(n, [p[2] for p in pts], ls, marker="o", ms=3, color=colors[impl])
        ax1.set_xlabel("n")
        ax1.set_ylabel("GFLOP/s")
        ax1.set_yscale("log")
        ax2.set_xlabel("n")
        ax2.set_ylabel("fraction of memory roofline")
        ax2.set_yscale("log")
        ax2.axhline(1.0, color="gray", lw=0.8)
        for ax in (ax1, ax2):
            ax.grid(True, which="both", alpha=0.3)
        ax1.legend(fontsize=7, ncol=2)
        name = {"d": "double", "s": "float"}.get(prec, prec)
        fig.suptitle(f"{op}, {name} (solid: streaming, dashed: cache-resident)\n{header}", fontsize=8)
        fig.tight_layout()
        path = os.path.join(out, f"{stem}-{op}-{prec}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    print("\n".join(written))


if __name__ == "__main__":
    sys.exit(main())
