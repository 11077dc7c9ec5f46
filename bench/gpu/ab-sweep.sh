#!/usr/bin/env bash
# Same-run A/B of the tuning sweep on the GPU machine: a baseline's kernels against the
# working tree's, built side by side and run in alternation (base, new, base, new, ...), so
# that the comparison does not straddle two device sessions (run-to-run spread up to .1).
#
# Stage the baseline's headers on this machine first (git-ignored, passed by `carry`):
#   rm -rf .ab-base && mkdir .ab-base && git archive <rev> include | tar -x -C .ab-base
# then on the device (carry: [".device-deps", ".ab-base"]):
#   source .device-deps/env.sh; bench/gpu/ab-sweep.sh --ops potrf,getrf --n 16,32
# Arguments go to sweep_gpu (--gib, --reps, --ops, --n). Knobs: TB_AB_ROUNDS (default 2),
# TB_SWEEP_BUILD (meson's sweep_build mask, default 7: getrf, inverse, potrf), TB_SWEEP_SIZES
# (meson's sweep_sizes, for example 16,32: build only those n; default all).
# Prints, per (op, type, n, shape), the median roofline fraction of each side and their
# difference (also in $OUT/ab-table.txt); the rounds' CSVs and logs go to $OUT/ab-runs.tar
# (the device tool brings back only a few files per call).
set -uo pipefail
root=$(pwd)
out=${OUT:-$root/device-logs}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
[ -d .ab-base/include ] || { echo "ab-sweep: no .ab-base/include (see the header)"; exit 2; }
base=/tmp/tb-ab-base
rm -rf "$base" && mkdir -p "$base"
tar --exclude='./build*' --exclude=./.ab-base --exclude=./.git -cf - . | tar -xf - -C "$base"
rm -rf "$base/include" && cp -r .ab-base/include "$base/include"
build() {  # tree, log
  (cd "$1" && meson setup build-ab -Dcuda=enabled -Dtests=false -Dbenchmarks=true -Dexamples=false \
     -Dsweep_build="${TB_SWEEP_BUILD:-7}" \
     -Dsweep_sizes="${TB_SWEEP_SIZES:-}" && ninja -C build-ab -j8 bench/gpu/sweep_gpu) >"$2" 2>&1
}
build "$base" "$out/ab-build-base.log" &
bpid=$!
build "$root" "$out/ab-build-new.log"
nrc=$?
wait $bpid
brc=$?
echo "ab-sweep build: base rc=$brc new rc=$nrc"
[ $brc -ne 0 ] && tail -n 20 "$out/ab-build-base.log"
[ $nrc -ne 0 ] && tail -n 20 "$out/ab-build-new.log"
[ $brc -ne 0 ] || [ $nrc -ne 0 ] && exit 1
for r in $(seq 1 "${TB_AB_ROUNDS:-2}"); do
  "$base/build-ab/bench/gpu/sweep_gpu" --csv "$out/ab-base-$r.csv" --commit base "$@" >"$out/ab-base-$r.log" 2>&1
  "$root/build-ab/bench/gpu/sweep_gpu" --csv "$out/ab-new-$r.csv" --commit new "$@" >"$out/ab-new-$r.log" 2>&1
done
python3 - "$out" <<'PY' | tee "$out/ab-table.txt"
import csv, glob, statistics, sys
out = sys.argv[1]
fr = {}
for side in ("base", "new"):
    for f in sorted(glob.glob(f"{out}/ab-{side}-*.csv")):
        for row in csv.DictReader(l for l in open(f) if not l.startswith("#")):
            key = (row["op"], row["prec"], int(row["n"]), row["impl"])
            fr.setdefault(key, {}).setdefault(side, []).append(float(row["roofline_fraction"]))
print(f"{'op':8} {'p':1} {'n':>2} {'shape':28} {'base':>6} {'new':>6} {'diff':>6}")
for key in sorted(fr):
    b, n = fr[key].get("base"), fr[key].get("new")
    if not n:
        continue
    mn = statistics.median(n)
    if not b:  # a shape only the new tree sweeps
        print(f"{key[0]:8} {key[1]:1} {key[2]:2d} {key[3]:28} {'-':>6} {mn:6.3f}")
        continue
    mb = statistics.median(b)
    print(f"{key[0]:8} {key[1]:1} {key[2]:2d} {key[3]:28} {mb:6.3f} {mn:6.3f} {mn - mb:+6.3f}")
PY
(cd "$out" && tar -cf ab-runs.tar ab-base-*.csv ab-new-*.csv ab-base-*.log ab-new-*.log &&
  rm -f ab-base-*.csv ab-new-*.csv ab-base-*.log ab-new-*.log)
