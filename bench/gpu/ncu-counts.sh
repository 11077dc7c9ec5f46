#!/usr/bin/env bash
# Instruction counts of the fast kernels at their tuned shapes, on the GPU machine (ncu):
#   source .device-deps/env.sh; bench/gpu/ncu-counts.sh inverse,getrf 16,32
# Builds sweep_gpu for those operations and sizes only, then for each (op, type, n) profiles
# the first launch of that operation's kernel (the warm-up run of tuning.hpp's shape with its
# pivot search; until 2026-11-26 the sweep ran the butterfly variant first, and the n = 32
# counts of bench/results/h100/gpu-h100-2d8b5d1-ncu-counts.txt are of that variant) and
# prints warp instructions per matrix, registers, issue-active and DRAM figures: the
# numbers behind the kernels' issue-slot bound (docs/design.md, CUDA kernels).
set -uo pipefail
ops=${1:-inverse,getrf}
sizes=${2:-16,32}
gib=${TB_GIB:-0.25}
out=${OUT:-$(pwd)/device-logs}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
mask=0
case ",$ops," in *,getrf,*) mask=$((mask | 1)) ;; esac
case ",$ops," in *,inverse,*) mask=$((mask | 2)) ;; esac
case ",$ops," in *,potrf,*) mask=$((mask | 4)) ;; esac
(meson setup build-ncu -Dcuda=enabled -Dtests=false -Dbenchmarks=true -Dexamples=false \
   -Dsweep_build=$mask -Dsweep_sizes=$sizes && ninja -C build-ncu bench/gpu/sweep_gpu) >"$out/ncu-build.log" 2>&1 ||
  { tail -20 "$out/ncu-build.log"; exit 1; }
metrics=smsp__inst_executed.sum,gpu__time_duration.sum,dram__bytes.sum,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second
printf '%-8s %s %2s %-10s %9s %5s %6s %6s %8s %8s\n' op t n batch inst/mat regs issue% warps% DRAM_GB/s MHz
for op in ${ops//,/ }; do
  for n in ${sizes//,/ }; do
    for t in f d; do
      bytes=4; [ "$t" = d ] && bytes=8
      batch=$(python3 -c "print(int($gib * 2**30 / ($n * $n * $bytes)))")
      csv=$(ncu --csv --print-units base --metrics $metrics --kernel-name-base mangled --kernel-name "regex:${op}_.*I${t}Li${n}E" \
              --launch-count 1 build-ncu/bench/gpu/sweep_gpu --ops $op --n $n --gib $gib --reps 1 --warmup-ms 0 2>/dev/null |
            grep '^"')
      NCU_CSV="$csv" python3 - "$op" "$t" "$n" "$batch" <<'PY'
import csv, io, os, sys
op, t, n, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = list(csv.DictReader(io.StringIO(os.environ["NCU_CSV"])))
m = {r["Metric Name"]: float(r["Metric Value"].replace(",", "")) for r in rows}
if not m:
    print(f"{op:8} {t} {n:2d} no kernel profiled"); sys.exit()
ns = m["gpu__time_duration.sum"]
print(f"{op:8} {t} {n:2d} {batch:<10d} {m['smsp__inst_executed.sum'] / batch:9.0f} {m['launch__registers_per_thread']:5.0f} "
      f"{m['smsp__issue_active.avg.pct_of_peak_sustained_active']:6.1f} {m['sm__warps_active.avg.pct_of_peak_sustained_active']:6.1f} "
      f"{m['dram__bytes.sum'] / ns:8.0f} {m['sm__cycles_elapsed.avg.per_second'] / 1e6:8.0f}")
PY
    done
  done
done
