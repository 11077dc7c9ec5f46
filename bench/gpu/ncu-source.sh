#!/usr/bin/env bash
# Where the warps of a fast kernel wait, instruction by instruction (ncu's source page, SASS),
# on the GPU machine:
#   source .device-deps/env.sh; bench/gpu/ncu-source.sh getrf,inverse 32 f
# Builds sweep_gpu for those operations and sizes only, profiles the first launch of each
# (op, type, n) at its tuned shape with the SourceCounters and WarpStateStats sections, and
# writes under $OUT: <op>-<t><n>.ncu-rep, the source page as CSV (<op>-<t><n>-sass.csv), and a
# summary (stall samples by opcode and the instructions with the most samples). The numbers
# behind where the n = 32 kernels wait (docs/design.md, CUDA kernels).
set -uo pipefail
ops=${1:-getrf,inverse}
sizes=${2:-32}
types=${3:-f d}
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
for op in ${ops//,/ }; do
  for n in ${sizes//,/ }; do
    for t in ${types//,/ }; do
      rep="$out/$op-$t$n"
      ncu --section SourceCounters --section WarpStateStats --section LaunchStats --import-source no \
        --kernel-name-base mangled --kernel-name "regex:${op}_kernelI${t}Li${n}E" --launch-count 1 -f -o "$rep" \
        build-ncu/bench/gpu/sweep_gpu --ops $op --n $n --gib $gib --reps 1 --warmup-ms 0 >"$rep.log" 2>&1 ||
        { echo "$op $t $n: ncu failed"; tail -5 "$rep.log"; continue; }
      ncu --import "$rep.ncu-rep" --page source --csv --print-source sass >"$rep-sass.csv" 2>"$rep-sass.err" ||
        { echo "$op $t $n: source page failed"; tail -5 "$rep-sass.err"; continue; }
      python3 - "$rep-sass.csv" "$op $t n=$n" <<'PY' | tee "$rep-summary.txt"
import csv, sys, collections
path, title = sys.argv[1], sys.argv[2]
rows = list(csv.reader(open(path)))
# The header is the first row that names a source column.
h = next(i for i, r in enumerate(rows) if any(c.strip() == "Source" for c in r))
head, body = rows[h], [r for r in rows[h + 1:] if len(r) == len(rows[h])]
col = {c: i for i, c in enumerate(head)}
src = col["Source"]
samp = next((i for c, i in col.items() if "Sampling (All" in c), None)
nois = next((i for c, i in col.items() if "Sampling (Not" in c), None)
inst = next((i for c, i in col.items() if c.startswith("Instructions Executed")), None)
num = lambda r, i: float(r[i].replace(",", "") or 0) if i is not None else 0.0
total = sum(num(r, samp) for r in body) or 1.0
print(f"== {title}: {len(body)} SASS instructions, {total:.0f} stall samples; columns: {head}")
by_op = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
for r in body:
    s = r[src].strip()
    tok = s.split()
    opc = next((t for t in tok if not t.startswith("@")), "?").split(".")[0] if tok else "?"
    by_op[opc][0] += num(r, samp); by_op[opc][1] += num(r, nois); by_op[opc][2] += num(r, inst)
print("opcode     samples  share  not-issued  warp-inst")
for k, v in sorted(by_op.items(), key=lambda kv: -kv[1][0])[:20]:
    print(f"{k:10} {v[0]:8.0f} {v[0] / total:6.3f} {v[1]:10.0f} {v[2]:10.0f}")
print("top instructions (address, samples, share, source):")
addr = col.get("Address", 0)
for r in sorted(body, key=lambda r: -num(r, samp))[:40]:
    # Every stall-reason column with a share of this instruction's samples.
    reasons = sorted(((num(r, i), c) for c, i in col.items() if c.startswith("stall_") or "Stall" in c and "Sampling" not in c),
                     reverse=True)[:3]
    rs = ", ".join(f"{c}={v:.0f}" for v, c in reasons if v > 0)
    print(f"{r[addr]:>8} {num(r, samp):7.0f} {num(r, samp) / total:6.3f}  {r[src].strip()[:70]}  {rs}")
PY
    done
  done
done
