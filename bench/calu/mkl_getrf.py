#!/usr/bin/env python3
"""MKL's dgetrf on the CPU cores through torch (torch.linalg.lu_factor on a CPU tensor),
the CPU anchor of bench_calu: same shapes, same flop count (m n^2 - n^3 / 3), best of
--reps after one warm-up, rows in bench_calu's CSV columns.

    python3 bench/calu/mkl_getrf.py --square=4096,8192 --tall=100000x1024 --csv=mkl.csv
"""
import argparse
import datetime
import os
import socket
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--square", default="4096")
    ap.add_argument("--tall", default="")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    shapes = [(int(s), int(s)) for s in a.square.split(",") if s]
    shapes += [tuple(int(x) for x in s.split("x")) for s in a.tall.split(",") if s]
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    date = datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S")
    header = ("host,cpu,device,threads,date,commit,method,type,m,n,b,d,model_d,row_blocks,"
              "seconds,gflops,check,info,note")
    out = open(a.csv, "w") if a.csv else None
    if out:
        print(header, file=out)
    print(f"# torch {torch.__version__}, MKL: {torch.backends.mkl.is_available()}, {a.threads} threads")
    for m, n in shapes:
        g = torch.Generator().manual_seed(m * 7 + n)
        a0 = torch.rand((n, m), dtype=torch.float64, generator=g).t() * 2 - 1  # column-major, as LAPACK's
        best = float("inf")
        for rep in range(a.reps + 1):
            w = a0.clone()
            t0 = time.perf_counter()
            _, _, info = torch.linalg.lu_factor_ex(w)
            dt = time.perf_counter() - t0
            if rep > 0:
                best = min(best, dt)
        flops = m * n * n - n ** 3 / 3
        gf = flops / best * 1e-9
        print(f"mkl {m:7d} {n:6d} {best:9.4f} s {gf:9.1f} GFLOP/s info {int(info)}", flush=True)
        if out:
            print(f'"{socket.gethostname()}","{cpu}","none",{a.threads},{date},"{a.commit}",mkl,double,'
                  f'{m},{n},0,0,0,0,{best},{gf},0,{int(info)},"torch.linalg.lu_factor_ex, CPU tensor"',
                  file=out, flush=True)


if __name__ == "__main__":
    main()
