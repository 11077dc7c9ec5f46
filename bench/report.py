#!/usr/bin/env python3
"""Writes docs/performance.md and its plots (docs/img/perf/) from the committed benchmark CSVs.

    python3 bench/report.py            # from the repository root; no network, python3 + matplotlib

Which runs it reads is the MACHINES table below (the latest full run of each benchmark per
machine; a later partial run replaces the cells it covers). The paragraph on what limits each
machine's figures is hand-written in bench/report_notes.md (one "## <machine id>" section
each). To add a run: commit its CSV under bench/results/<machine>/, list it here, rerun.
"""
import csv
import os
import re
import sys
from collections import defaultdict

try:
    import matplotlib
except ImportError:  # a python3 on PATH without it (pyenv, a venv): Debian's has python3-matplotlib
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = "bench/results"
OUT_MD = "docs/performance.md"
OUT_IMG = "docs/img/perf"
NOTES = "bench/report_notes.md"

OPS = ["gemm", "getrf", "getrs", "potrf", "potrs", "inverse"]
PRECS = {"d": "double", "s": "float"}

# (file under bench/results, options): ops / precs limit what is read from it, regime renames
# the CSV's regime (CPU runs), kind "torch" reads torch.linalg's columns (GFLOP/s only).
MACHINES = [
    {
        "id": "h200", "title": "NVIDIA H200 (the GPU machine)", "backend": "gpu",
        "sources": [("h200/gpu-h200-b70cdcc.csv", {})],
    },
    {
        "id": "h100", "title": "NVIDIA H100 80GB HBM3", "backend": "gpu",
        "sources": [("h100/gpu-h100-203013e.csv", {}),
                    ("h100/torch-linalg.csv", {"kind": "torch"})],
    },
    {
        "id": "xeon-vm", "title": "Intel Xeon VM, 2 cores, AVX-512", "backend": "cpu",
        "sources": [("xeon-vm/cpu-e2ffbf4-xeonvm-d.csv", {"precs": ["d"]}),
                    ("xeon-vm/cpu-145f651-xeonvm-s.csv", {"precs": ["s"]})],
    },
    {
        "id": "epyc-vm", "title": "AMD EPYC VM (Zen 4), 2 cores, AVX-512", "backend": "cpu",
        "sources": [("epyc-vm/cpu-8d297db-epyc-all-d.csv", {}),
                    ("epyc-vm/cpu-8b35e4c-epyc-all-s.csv", {}),
                    ("epyc-vm/cpu-34198cc-epyc-gemm.csv", {}),
                    ("epyc-vm/cpu-34198cc-epyc-tiny.csv", {})],
    },
    {
        "id": "zen3-vm", "title": "AMD EPYC VM (Zen 3), 2 cores, AVX2", "backend": "cpu",
        "sources": [("zen3-vm/cpu-49b46b8-zen3-cache-1t.csv", {"regime": "cache, 1 thread"}),
                    ("zen3-vm/cpu-ecc98e8-zen3-solves.csv", {})],
    },
    {
        "id": "gpu-host-xeon", "title": "The GPU machine's Xeon, 16 threads", "backend": "cpu",
        "sources": [("gpu-host-xeon/cpu-f27346a-xeon-small-kib16-merged.csv",
                     {"regime": "cache, 16 KiB per operand"}),
                    ("gpu-host-xeon/cpu-f27346a-xeon-small-kib64-merged.csv",
                     {"regime": "cache, 64 KiB per operand"})],
    },
]

# Implementation columns shown, in order, and their names; others (reference loops, generic
# kernels kept for comparison) are left out.
IMPLS = {
    "tinybatch": "tinybatch",
    "tinybatch_par": "tinybatch",
    "tinybatch_par_team": "tinybatch, team always",
    "tinybatch_seq": "tinybatch, one thread",
    "tb_compact_par": "tinybatch, compact layout",
    "tb_compact_par_team": "tinybatch, compact layout, team always",
    "cublas_gemm_strided": "cuBLAS gemmStridedBatched",
    "cublas_getrf": "cuBLAS getrfBatched",
    "cublas_getrs": "cuBLAS getrsBatched",
    "cublas_matinv": "cuBLAS matinvBatched",
    "cublas_getrf+getri": "cuBLAS getrfBatched + getriBatched",
    "cusolver_potrf_batched": "cuSOLVER potrfBatched",
    "cusolver_potrs_batched": "cuSOLVER potrsBatched",
    "torch_bmm": "torch.bmm",
    "torch_lu_factor_cusolver": "torch lu_factor (cuSOLVER)",
    "torch_lu_factor_magma": "torch lu_factor (MAGMA)",
    "torch_cholesky_cusolver": "torch cholesky (cuSOLVER)",
    "torch_cholesky_magma": "torch cholesky (MAGMA)",
    "torch_inv_cusolver": "torch inv (cuSOLVER)",
    "torch_inv_magma": "torch inv (MAGMA)",
    "eigen": "Eigen fixed-size",
    "eigen_team": "Eigen fixed-size, team always",
    "lapacke": "LAPACKE loop (OpenBLAS)",
    "openblas": "OpenBLAS cblas loop",
    "libxsmm": "LIBXSMM",
}
ORDER = list(IMPLS)
TORCH_OP = {"bmm": "gemm", "lu_factor": "getrf", "cholesky": "potrf", "inv": "inverse"}


def is_tinybatch(impl):
    return impl.startswith("tinybatch") or impl.startswith("tb_")


def clean(text):
    """A header's free text without the notes on how the run was made."""
    parts = [p.strip() for p in text.split(",")]
    return ", ".join(p for p in parts if p and not re.search(r"session|issue \d", p, re.I))


def read_csv(path):
    comments, body = [], []
    with open(os.path.join(ROOT, RESULTS, path)) as f:
        for line in f:
            (comments if line.startswith("#") else body).append(line)
    return [c[1:].strip() for c in comments], list(csv.DictReader(body))


def load_machine(m):
    """cells[(op, prec, regime)][impl][n] = (gflops, fraction or None, source); runs: metadata."""
    cells = defaultdict(lambda: defaultdict(dict))
    runs = []
    for path, opt in m["sources"]:
        comments, rows = read_csv(path)
        run = {"path": path, "covers": set(), "notes": comments}
        for r in rows:
            if opt.get("kind") == "torch":
                what = r["op"][len("torch_"):]
                what = what if what == "bmm" else what.rsplit("_", 1)[0]
                op, impl, regime, frac = TORCH_OP.get(what), r["op"], "", None
                if int(r["n"]) > 32:  # beyond the batched kernels' sizes
                    continue
            else:
                op, impl = r["op"], r["impl"]
                regime = opt.get("regime", r.get("regime", ""))
                frac = float(r["roofline_fraction"]) if r.get("roofline_fraction") else None
            prec, n = r["prec"], int(r["n"])
            if op not in OPS or impl not in IMPLS:
                continue
            if "ops" in opt and op not in opt["ops"] or "precs" in opt and prec not in opt["precs"]:
                continue
            cells[(op, prec, regime)][impl][n] = (float(r["gflops"]), frac, path)
            run["covers"].add((op, prec))
            for k in ("date", "commit", "threads", "read_gbs", "write_gbs", "in_place_gbs"):
                if k in r and k not in run:
                    run[k] = r[k]
        for c in comments:  # bench_gpu: "# device ...", "# date ...", "# commit ..."
            for k in ("device", "date", "commit", "d2d bandwidth"):
                if c.startswith(k + " ") and k not in run:
                    run[k] = c[len(k) + 1:]
        if comments and comments[0].startswith("machine "):  # bench_cpu's one header line
            h = comments[0]
            mdate = re.search(r"\d{4}-\d\d-\d\dT[\d:]+,", h)
            run["device"] = clean(h[mdate.end():]) if mdate else ""
            run["device"] = run["device"] or clean(h.split(",")[0][len("machine "):])
        runs.append(run)
    return cells, runs


def fmt_g(g):
    return f"{g:.0f}" if g >= 100 else f"{g:.1f}" if g >= 1 else f"{g:.2f}"


def fmt_r(r):
    return f"{r:.0f}" if r >= 20 else f"{r:.1f}" if r >= 2 else f"{r:.2f}"


def summarize(by):
    """tinybatch's roofline fractions over n, its ratio to the fastest anchor at each n, and
    the anchor that was fastest most often; None without a tinybatch row."""
    main_impl = "tinybatch" if "tinybatch" in by else "tinybatch_par"
    if main_impl not in by:
        return None
    fr = [v[1] for v in by[main_impl].values() if v[1] is not None]
    ratios, best = [], defaultdict(int)
    for n, v in by[main_impl].items():
        anchors = [(by[i][n][0], i) for i in by if not is_tinybatch(i) and n in by[i]]
        if anchors:
            g, i = max(anchors)
            ratios.append(v[0] / g)
            best[IMPLS[i]] += 1
    fr_s = f"{min(fr):.2f} - {max(fr):.2f}" if fr else "-"
    ra_s = f"{fmt_r(min(ratios))} - {fmt_r(max(ratios))}x" if ratios else "-"
    b = max(best, key=best.get) if best else "-"
    return fr_s, ra_s, b


def plot(m, cells, prec, regime, fname):
    ops = [op for op in OPS if (op, prec, regime) in cells]
    cols = 3
    rows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(12, 3.4 * rows), squeeze=False)
    for ax in axes.flat[len(ops):]:
        ax.axis("off")
    for ax, op in zip(axes.flat, ops):
        by = cells[(op, prec, regime)]
        for impl in ORDER:
            pts = sorted((n, v[1]) for n, v in by.get(impl, {}).items() if v[1] is not None)
            if not pts:
                continue
            tb = is_tinybatch(impl)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                    lw=2.2 if tb else 1.2, ls="-" if tb else "--", label=IMPLS[impl])
        ax.axhline(1.0, color="grey", lw=0.6)
        ax.set_title(op)
        ax.set_xlabel("n")
        ax.set_ylabel("fraction of the memory roofline")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    where = f", {regime}" if regime else ""
    fig.suptitle(f"{m['title']}: {PRECS[prec]}{where}")
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, OUT_IMG, fname), dpi=80)
    plt.close(fig)


def notes():
    text = open(os.path.join(ROOT, NOTES)).read()
    out, key = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            key = line[3:].strip()
            out[key] = []
        elif key:
            out[key].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def slug(s):
    s = re.sub(r"[^\w\- ]", "", s.strip().lower())
    return s.replace(" ", "-")


def main():
    os.makedirs(os.path.join(ROOT, OUT_IMG), exist_ok=True)
    note = notes()
    out = ["<!-- Generated by bench/report.py from the CSVs under bench/results/; do not edit. -->",
           "# Performance", "",
           "Generated from the committed benchmark CSVs: `python3 bench/report.py` (from the "
           "repository root; Debian's python3 with python3-matplotlib) rewrites this page and its plots (the runs it reads are listed in the script; the paragraph under "
           "each machine is `bench/report_notes.md`).", "",
           note.get("intro", ""), "",
           "Machines:", ""]
    data = []
    for m in MACHINES:
        cells, runs = load_machine(m)
        data.append((m, cells, runs))
        out.append(f"- [{m['title']}](#{slug(m['title'])})")
    out += ["", "## At a glance", "",
            "Double precision (CPU: the streaming regime where the run has one), n = 2 - 32: "
            "tinybatch's roofline fraction; its speed against the fastest other implementation "
            "at the same n. Float and the cache-resident regime are in each machine's section.",
            "", "| machine | " + " | ".join(OPS) + " |", "| --- |" + " --- |" * len(OPS)]
    for m, cells, runs in data:
        regs = sorted({k[2] for k in cells}, key=lambda r: (r not in ("", "stream"), r))
        row, used = [], []
        for op in OPS:
            r = next((r for r in regs if (op, "d", r) in cells), None)
            sm = summarize(cells[(op, "d", r)]) if r is not None else None
            row.append(f"{sm[0]}; {sm[1]}" if sm else "-")
            used.append(r if sm else None)
        odd = {u for u in used if u not in (None, "", "stream")}
        where = ""
        if len(odd) == 1 and all(u in odd or u is None for u in used):
            where = f" ({odd.pop()})"
        else:
            row = [c + (f" ({u})" if u not in (None, "", "stream") else "") for c, u in zip(row, used)]
        out.append(f"| [{m['title']}](#{slug(m['title'])}){where} | " + " | ".join(row) + " |")
    out.append("")
    for m, cells, runs in data:
        out += [f"## {m['title']}", "", note.get(m["id"], ""), ""]
        out += ["| run | device | date | commit | threads | covers |",
                "| --- | --- | --- | --- | --- | --- |"]
        for r in runs:
            cov = ", ".join(f"{op} {p}" for op in OPS for p in "ds" if (op, p) in r["covers"])
            dev = r.get("device", "")
            if r.get("d2d bandwidth"):
                dev += f"; {r['d2d bandwidth']}"
            if r.get("read_gbs"):
                dev += (f"; GB/s at the start: read {r['read_gbs']}, write {r['write_gbs']},"
                        f" in place {r['in_place_gbs']}")
            link = f"[{os.path.basename(r['path'])}](../{RESULTS}/{r['path']})"
            out.append(f"| {link} | {dev} | {r.get('date', '')[:10]} | {r.get('commit', '')} "
                       f"| {r.get('threads', '')} | {cov} |")
        out.append("")
        # summary: tinybatch's fraction and its ratio to the fastest anchor, over n
        out += ["Summary (tinybatch's roofline fraction over n, and its speed against the "
                "fastest other implementation at the same n):", "",
                "| operation | precision | regime | tinybatch roofline fraction | "
                "tinybatch / fastest anchor | fastest anchor (most often) |",
                "| --- | --- | --- | --- | --- | --- |"]
        keys = sorted(cells, key=lambda k: (OPS.index(k[0]), k[1], k[2]))
        regimes = sorted({k[2] for k in keys if k[2]}, key=lambda r: (r != "stream", r))
        for key in keys:
            sm = summarize(cells[key])
            if sm:
                op, prec, regime = key
                out.append(f"| {op} | {PRECS[prec]} | {regime or '-'} | {sm[0]} | {sm[1]} | {sm[2]} |")
        out.append("")
        for prec in "ds":
            for regime in (regimes or [""]):
                if not any(k[1] == prec and k[2] == regime for k in keys):
                    continue
                fname = f"{m['id']}-{prec}{'-' + slug(regime) if regime else ''}.png"
                plot(m, cells, prec, regime, fname)
                out += [f"![{m['title']}, {PRECS[prec]} {regime}](img/perf/{fname})", ""]
        out += ["Each cell: GFLOP/s (fraction of the memory roofline; `-` where the run did not "
                "measure it).", ""]
        for key in keys:
            op, prec, regime = key
            by = cells[key]
            ns = sorted({n for i in by for n in by[i]})
            srcs = sorted({v[2] for i in by for v in by[i].values()})
            where = f", {regime}" if regime else ""
            out += [f"### {m['id']}: {op}, {PRECS[prec]}{where}", "",
                    "Source: " + ", ".join(f"[{s}](../{RESULTS}/{s})" for s in srcs), "",
                    "| implementation | " + " | ".join(f"n = {n}" for n in ns) + " |",
                    "| --- |" + " --- |" * len(ns)]
            for impl in ORDER:
                if impl not in by:
                    continue
                row = []
                for n in ns:
                    v = by[impl].get(n)
                    row.append("" if v is None else fmt_g(v[0]) + (
                        f" ({v[1]:.2f})" if v[1] is not None else " (-)"))
                name = f"**{IMPLS[impl]}**" if is_tinybatch(impl) else IMPLS[impl]
                out.append(f"| {name} | " + " | ".join(row) + " |")
            out.append("")
    with open(os.path.join(ROOT, OUT_MD), "w") as f:
        f.write("\n".join(out).rstrip() + "\n")
    print(f"wrote {OUT_MD} and {OUT_IMG}/", file=sys.stderr)


if __name__ == "__main__":
    main()
