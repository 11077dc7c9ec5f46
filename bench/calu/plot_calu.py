#!/usr/bin/env python3
"""Plots of bench_calu's CSVs (and mkl_getrf.py's), and the trace picture of one hybrid or CPU CALU run.

    python3 bench/calu/plot_calu.py calu-*.csv --out=prefix     # prefix-rates.png, prefix-sweep-d.png
    python3 bench/calu/plot_calu.py --trace=trace.csv --out=prefix   # prefix.png: CPU threads, GPU

rates: GFLOP/s of every method on every shape (best b and d for tinybatch, the model's d
marked); sweep-d: the hybrid's rate against d per (shape, b), the model's d marked; the
trace: one row per CPU thread (panels red, updates blue, sends orange, waits grey) and one
for the GPU's updates (green); a CPU CALU trace shows the panel's parts (leaves red, tree dark
red, the b x b LU pink, its TRSM salmon), updates blue and their GEMM chunks cyan, and prints
how busy the threads were.
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            lines = [l for l in f if not l.startswith("#")]
        rows += list(csv.DictReader(lines))
    for r in rows:  # GPU panels by cuSOLVER's getrf (--row-blocks=1): a method of its own
        if r.get("method", "").startswith("hybrid_gpu") and r.get("row_blocks") == "1":
            r["method"] += "/getrf"
    return rows


def rates(rows, out):
    best = defaultdict(float)
    for r in rows:
        key = (r["method"], f'{r["m"]}x{r["n"]}')
        best[key] = max(best[key], float(r["gflops"]))
    shapes = sorted({k[1] for k in best}, key=lambda s: (int(s.split("x")[1]) != int(s.split("x")[0]),
                                                        int(s.split("x")[0]) * int(s.split("x")[1])))
    methods = sorted({k[0] for k in best})
    fig, ax = plt.subplots(figsize=(max(8, len(shapes) * 1.3), 5))
    w = 0.8 / max(1, len(methods))
    for i, m in enumerate(methods):
        ax.bar([j + i * w for j in range(len(shapes))], [best.get((m, s), 0) for s in shapes], w, label=m)
    ax.set_xticks([j + 0.4 - w / 2 for j in range(len(shapes))])
    ax.set_xticklabels(shapes, rotation=30, ha="right")
    ax.set_ylabel("GFLOP/s (m n^2 - n^3/3), best of the sweep")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("Large LU, double")
    fig.tight_layout()
    fig.savefig(out + "-rates.png", dpi=120)


def sweep(rows, out):
    hyb = [r for r in rows if r["method"].startswith("hybrid") and int(r["d"]) > 0]  # GPU panels: no d
    if not hyb:
        return
    groups = defaultdict(list)
    for r in hyb:
        groups[(f'{r["m"]}x{r["n"]}', r["b"])].append(r)
    fig, ax = plt.subplots(figsize=(8, 5))
    for (shape, b), rs in sorted(groups.items()):
        pts = sorted({int(r["d"]): float(r["gflops"]) for r in rs}.items())
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"{shape} b {b}")
        model = int(rs[0]["model_d"])
        mv = [float(r["gflops"]) for r in rs if int(r["d"]) == model]
        if mv:
            ax.plot([model], [max(mv)], "*", ms=14, color=line.get_color())
    ax.set_xlabel("d (block columns on the CPU); star: the model's d")
    ax.set_ylabel("GFLOP/s")
    ax.set_xscale("log", base=2)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out + "-sweep-d.png", dpi=120)


def trace(path, out):
    with open(path) as f:
        title = f.readline().lstrip("# ").strip()
        ev = list(csv.DictReader(f))
    colors = {"panel": "tab:red", "update": "tab:blue", "send": "tab:orange", "wait": "0.6", "gpu_update": "tab:green",
              # the GPU-panel hybrid's two queues
              "tournament": "darkred", "lookahead": "tab:olive",
              # CPU CALU's kinds (its panel in parts, the updates' GEMM chunks apart)
              "leaf": "tab:red", "tree": "darkred", "panel_lu": "tab:pink", "panel_trsm": "salmon",
              "panel_getrf": "tab:brown", "gemm": "tab:cyan", "laswp": "0.3"}
    present = {e["what"] for e in ev}
    colors = {k: v for k, v in colors.items() if k in present}
    threads = sorted({int(e["thread"]) for e in ev})
    fig, ax = plt.subplots(figsize=(14, 0.35 * len(threads) + 2))
    # CPU threads from 0 up; the device's queues (thread < 0: -1 updates, -2 panels) above them.
    rows = [t for t in threads if t >= 0] + sorted((t for t in threads if t < 0), reverse=True)
    for e in ev:
        ax.barh(rows.index(int(e["thread"])), float(e["t1"]) - float(e["t0"]), left=float(e["t0"]),
                color=colors.get(e["what"], "k"), height=0.8)
    ax.set_yticks(range(len(rows)))
    names = {-1: "GPU updates", -2: "GPU panels"}
    ax.set_yticklabels([names.get(t, "GPU") if t < 0 else f"cpu {t}" for t in rows])
    ax.set_xlabel("seconds")
    ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
    ax.legend(handles, list(colors), loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.6 / len(threads)), ncol=8)
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=120)
    # The bound: panel time on the critical path against GPU update time.
    tot = defaultdict(float)
    for e in ev:
        tot[e["what"]] += float(e["t1"]) - float(e["t0"])
    print("total seconds per kind:", {k: round(v, 4) for k, v in tot.items()})
    cpu = [t for t in threads if t >= 0]
    span = max(float(e["t1"]) for e in ev)
    if cpu:
        busy = sum(float(e["t1"]) - float(e["t0"]) for e in ev if int(e["thread"]) >= 0)
        print(f"CPU threads busy {busy / (span * len(cpu)):.0%} of {len(cpu)} x {span:.4f} s")
    for t in (t for t in threads if t < 0):  # a device queue's busy time, and its overlap with the other's
        mine = sorted((float(e["t0"]), float(e["t1"])) for e in ev if int(e["thread"]) == t)
        print(f"{names.get(t, 'GPU')} busy {sum(b - a for a, b in mine):.4f} of {span:.4f} s")
    if {-1, -2} <= set(threads):
        p = [(float(e["t0"]), float(e["t1"])) for e in ev if int(e["thread"]) == -2]
        u = [(float(e["t0"]), float(e["t1"])) for e in ev if int(e["thread"]) == -1]
        both = sum(max(0.0, min(b, d) - max(a, c)) for a, b in p for c, d in u)
        print(f"both queues busy {both:.4f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv", nargs="*")
    ap.add_argument("--trace", default="")
    ap.add_argument("--out", default="calu")
    a = ap.parse_args()
    if a.trace:
        trace(a.trace, a.out)
        return
    rows = read_rows(a.csv)
    if not rows:
        sys.exit("no rows")
    rates(rows, a.out)
    sweep(rows, a.out)


if __name__ == "__main__":
    main()
