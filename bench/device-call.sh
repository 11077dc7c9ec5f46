#!/usr/bin/env bash
# One device call with binaries built on this machine (no build on the GPU machine, whose
# minutes are scarce): the GPU tests and benchmarks of what is not yet measured, in priority
# order, each step bounded by what is left of a deadline, every log and CSV under $OUT.
#
# Here (about 3 minutes on 2 cores):   bench/device-call.sh --stage
#   configures build-dev for sm_90, builds test_cuda_cholesky_large, bench_potrf_large,
#   bench_calu_gpu, test_calu, test_cuda_calu, bench_calu_leaf_rate and bench_mem_bw, and copies them and this
#   script into build-bin/ (git-ignored, ~18 MiB).
# There, through the device tool, with carry [".device-deps", "build-bin"]:
#   source .device-deps/env.sh; TB_COMMIT=$(git rev-parse --short HEAD) bash build-bin/device-call.sh
# TB_DEADLINE (seconds, default 570) keeps the call inside the tool's 600-second limit;
# TB_ONLY="name name ..." runs only the steps named. Without it, the steps whose results are
# committed already (MEASURED below) are left out: they stay here to be rerun by name.
set -u
if [ "${1:-}" = --stage ]; then
  set -e
  cd "$(dirname "$0")/.."
  export PATH=/usr/local/cuda/bin:$PATH
  [ -f build-dev/build.ninja ] ||
    meson setup build-dev --buildtype=release -Dcuda=enabled -Dtests=true -Dbenchmarks=true -Dexamples=false -Dgpu_arch=sm_90
  # nvcc's objects do not track the headers: rebuild them.
  rm -f build-dev/tests/cuda/test_cuda_cholesky_large.p/*.o build-dev/bench/gpu/bench_potrf_large.p/*.cu.o \
    build-dev/bench/bench_calu_gpu.p/*.cu.o build-dev/tests/cuda/test_cuda_calu.p/*.o
  ninja -C build-dev tests/cuda/test_cuda_cholesky_large bench/gpu/bench_potrf_large bench/bench_calu_gpu tests/test_calu \
    bench/bench_calu_leaf_rate bench/bench_mem_bw tests/cuda/test_cuda_calu
  mkdir -p build-bin
  cp build-dev/tests/cuda/test_cuda_cholesky_large build-dev/bench/gpu/bench_potrf_large build-dev/bench/bench_calu_gpu \
    build-dev/tests/test_calu build-dev/bench/bench_calu_leaf_rate build-dev/bench/bench_mem_bw \
    build-dev/tests/cuda/test_cuda_calu bench/device-call.sh build-bin/
  exit 0
fi
B=$(dirname "$0")
OUT=${OUT:-$(pwd)/device-logs}
mkdir -p "$OUT"
dl=$(($(date +%s) + ${TB_DEADLINE:-570}))
# Measured and committed (bench/results/h100/calu-rec-2fe6bcf-*, calu-b-2fe6bcf-*, calu-rep4-2fe6bcf-*,
# calu-tp-30f2453-*). Open: the GPU tests, memcheck and racecheck of the last kernels and
# the default on very tall matrices, tp_default, then the Cholesky steps.
MEASURED=" calu_tall calu_sq calu_mkl calu_b64 calu_b64_all calu_b32 calu_sq64 calu_trace_b64 calu_leafrate mem_bw calu_trace
  calu_rep4 calu_rep4_sq calu_rep4_mkl tp_base tp_132 tp_264 tp_ncu "
step() {  # name seconds command...: runs it with the smaller of its limit and what is left
  local n=$1 t=$2
  shift 2
  local l=$((dl - $(date +%s)))
  if [[ -n "${TB_ONLY:-}" && ! " $TB_ONLY " =~ " $n " ]]; then echo "== $n not asked"; return; fi
  if [[ -z "${TB_ONLY:-}" && "$MEASURED" =~ " $n " ]]; then echo "== $n measured already (name it in TB_ONLY)"; return; fi
  if [ $l -lt 25 ]; then echo "== $n skipped ($l s left)"; return; fi
  [ $t -gt $l ] && t=$l
  echo "== $n $(date +%T) limit $t"
  timeout $t "$@" >"$OUT/$n.log" 2>&1
  echo "rc $?" >>"$OUT/$n.log"
  grep -E "All tests passed|test cases|assertions|FAILED|ERROR SUMMARY|rc " "$OUT/$n.log" | tail -6
}
nvidia-smi -L
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
# 1. The whole Cholesky test file (small grid) on the tuning table (fused step in double above
#    a largest order of 352), then the variable-size bench (split, fused, padded, cuSOLVER).
step t_small 120 env TINYBATCH_CUDA_TESTS=small $B/test_cuda_cholesky_large
# 0. The hybrid's one-launch GPU tournament (tournament_panel): its tests, memcheck and
#    racecheck; then the hybrid with it (leaves 132 / 264, b 32 / 64) against cuSOLVER dgetrf
#    and the per-panel getrf (b 64 / 128 / 256) on the tall shapes and 16384^2, and the
#    library's defaults.
step t_gpu_calu 120 $B/test_cuda_calu "[gpu_panel]"
# A second build of the same tests (another version of the kernels), when staged.
step t_gpu_calu_alt 120 $B/test_cuda_calu_alt "[gpu_panel]"
step mc_gpu_calu 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_cuda_calu "[gpu_panel]"
step rc_gpu_calu 150 compute-sanitizer --tool racecheck --kernel-name kns=tinybatch --error-exitcode 9 \
  $B/test_cuda_calu "[gpu_panel]"
G="$B/bench_calu_gpu --reps=2 --tall=100000x1024,200000x1024,100000x2048,400000x512 --square=16384"
# The chunked one-barrier node LU and the panel's LU from the root's elimination, against the
# binary before them (build-bin/bench_calu_gpu_591caaa, or TB_OLD, when staged) in the same call.
step tc_default 90 $G --methods=cusolver,hybrid_gpu --csv=$OUT/tc_default.csv
grep -E "^cusolver|^hybrid" $OUT/tc_default.log
step tc_132 90 $G --methods=hybrid_gpu --row-blocks=132 --b=32,64 --csv=$OUT/tc_132.csv
grep -E "^hybrid" $OUT/tc_132.log
step tc_old 60 ${G/bench_calu_gpu/${TB_OLD:-bench_calu_gpu_591caaa}} --methods=hybrid_gpu --row-blocks=132 --b=64 --csv=$OUT/tc_old.csv
grep -E "^hybrid" $OUT/tc_old.log
# Fewer leaves than SMs, so that the look-ahead update's GEMMs find SMs beside the tournament.
step tc_rb 150 bash -c "for r in 66 100 116; do $G --methods=hybrid_gpu --row-blocks=\$r --b=64 --csv=$OUT/tc_rb\$r.csv; done"
grep -E "^hybrid" $OUT/tc_rb.log
# The two queues over time (timing events around each panel's tournament and LU, the look-ahead
# column and the rest of the update), one untimed run after the timed ones.
step tc_trace 60 bash -c "for s in 100000x1024 400000x512; do $B/bench_calu_gpu --reps=1 --tall=\$s \
  --methods=hybrid_gpu --no-check --trace=$OUT/trace-\$s.csv; done; $B/bench_calu_gpu --reps=1 --square=16384 --b=512 \
  --methods=hybrid_gpu --no-check --trace=$OUT/trace-16384x16384.csv"
step tc_ncu 90 ncu --cache-control none --clock-control none --kernel-name-base demangled \
  --kernel-name 'regex:tournament_panel|panel_lower|permute_rows' --launch-skip 12 --launch-count 24 --csv --page raw \
  --metrics gpu__time_duration.sum $B/bench_calu_gpu --reps=1 --tall=100000x1024 --methods=hybrid_gpu \
  --row-blocks=132 --b=64 --no-check
# Why a column step costs what it does: one tournament launch's stall reasons and issue rate.
step tc_stall 60 ncu --cache-control none --clock-control none --kernel-name-base demangled \
  --kernel-name 'regex:tournament_panel' --launch-skip 4 --launch-count 1 \
  --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
  $B/bench_calu_gpu --reps=1 --tall=100000x1024 --methods=hybrid_gpu --row-blocks=132 --b=64 --no-check
step tp_base 120 $G --methods=cusolver,hybrid_gpu --row-blocks=1 --b=64,128,256 --csv=$OUT/tp_base.csv
grep -E "^cusolver|^hybrid" $OUT/tp_base.log
step tp_default 60 $G --methods=cusolver,hybrid_gpu --csv=$OUT/tp_default.csv
grep -E "^cusolver|^hybrid" $OUT/tp_default.log
step tp_132 90 $G --methods=hybrid_gpu --row-blocks=132 --b=32,64 --csv=$OUT/tp_132.csv
grep -E "^hybrid" $OUT/tp_132.log
step tp_264 90 $G --methods=hybrid_gpu --row-blocks=264 --b=32,64 --csv=$OUT/tp_264.csv
grep -E "^hybrid" $OUT/tp_264.log
# The panel's kernels one by one (durations; ncu serialises them): the tournament, cuSOLVER's
# diagonal-block getrf, the TRSM below, the interchanges.
step tp_ncu 90 ncu --cache-control none --clock-control none --kernel-name-base demangled \
  --kernel-name 'regex:tournament_panel|trsm|getrf|laswp|permute_rows|panel_|gemm' --launch-skip 40 --launch-count 60 --csv --page raw \
  --metrics gpu__time_duration.sum $B/bench_calu_gpu --reps=1 --tall=100000x1024 --methods=hybrid_gpu \
  --row-blocks=132 --b=64 --no-check
# 1b. CPU CALU on the 16 Xeon cores: the blocked graph against the recursive halving (leaf
#     widths), OpenBLAS and MKL (torch) side by side; the tests on 16 threads.
export OMP_MAX_TASK_PRIORITY=2  # libgomp honours the panels' task priorities only with this
C="env OMP_NUM_THREADS=16 $B/bench_calu_gpu --reps=2"
step t_calu 90 env OMP_NUM_THREADS=16 $B/test_calu
step calu_tall 150 $C --tall=100000x1024,200000x1024,100000x2048,400000x512 --methods=calu_blocked,calu_rec,lapacke \
  --b=128 --leaf-width=128,256,512 --csv=$OUT/calu_tall.csv
grep -E "^calu|^lapacke" $OUT/calu_tall.log
step calu_sq 90 $C --square=4096,8192 --methods=calu_blocked,calu_rec,lapacke --b=128 --leaf-width=256,512,1024 \
  --csv=$OUT/calu_sq.csv
grep -E "^calu|^lapacke" $OUT/calu_sq.log
step calu_mkl 90 python3 bench/calu/mkl_getrf.py --square=4096,8192 --tall=100000x1024,200000x1024,100000x2048,400000x512 \
  --reps=2 --threads=16 --commit=${TB_COMMIT:-unknown} --csv=$OUT/calu_mkl.csv
step calu_b64 60 $C --tall=100000x1024,400000x512 --methods=calu_blocked,calu_rec --b=64 --leaf-width=64,128,256 \
  --csv=$OUT/calu_b64.csv
grep -E "^calu" $OUT/calu_b64.log
step calu_b64_all 120 $C --tall=100000x1024,200000x1024,100000x2048,400000x512 --methods=calu_blocked,calu_rec --b=64 \
  --leaf-width=256,512 --csv=$OUT/calu_b64_all.csv
grep -E "^calu" $OUT/calu_b64_all.log
step calu_b32 60 $C --tall=100000x1024,400000x512 --methods=calu_blocked,calu_rec --b=32 --leaf-width=128,256 \
  --csv=$OUT/calu_b32.csv
grep -E "^calu" $OUT/calu_b32.log
step calu_sq64 60 $C --square=4096,8192 --methods=calu_blocked,lapacke --b=64,128,256 --csv=$OUT/calu_sq64.csv
grep -E "^calu|^lapacke" $OUT/calu_sq64.log
step calu_trace_b64 30 $C --tall=100000x1024 --methods=calu_blocked --b=64 --reps=1 \
  --trace=$OUT/calu_b64_trace.csv --csv=$OUT/calu_trace_b64.csv
# The open CPU CALU defaults with more repeats: the blocked graph at b 64 (the default) against
# b 32 and the halving (b 32 / 64, leaves of 256) on the tall shapes, b 64 against 128 at 8192^2.
step calu_rep4 200 $C --reps=4 --tall=100000x1024,200000x1024,100000x2048,400000x512 --methods=calu_blocked,calu_rec \
  --b=32,64 --leaf-width=256 --csv=$OUT/calu_rep4.csv
grep -E "^calu" $OUT/calu_rep4.log
step calu_rep4_sq 80 $C --reps=4 --square=4096,8192 --methods=calu_blocked --b=64,128 --csv=$OUT/calu_rep4_sq.csv
grep -E "^calu" $OUT/calu_rep4_sq.log
step calu_rep4_mkl 80 python3 bench/calu/mkl_getrf.py --square=4096,8192 \
  --tall=100000x1024,200000x1024,100000x2048,400000x512 --reps=4 --threads=16 --csv=$OUT/calu_rep4_mkl.csv
step calu_leafrate 40 bash -c "$B/bench_calu_leaf_rate 1; $B/bench_calu_leaf_rate 16"
step mem_bw 30 env OMP_NUM_THREADS=16 OMP_PROC_BIND=spread $B/bench_mem_bw
step calu_trace 30 $C --tall=100000x1024 --methods=calu_rec --b=128 --leaf-width=256 --reps=1 \
  --trace=$OUT/calu_rec_trace.csv --csv=$OUT/calu_trace.csv
step b_var 200 $B/bench_potrf_large --no-fixed --maxes 256,384,512 --types ds --csv $OUT/var.csv
grep -E "default|padded|lists|fused" $OUT/b_var.log | head -80
# 2. Where the fused step's time goes (kernel durations, double, max
#    512: head tiles and the tiles below).
step ncu_times 60 ncu --cache-control none --clock-control none --kernel-name-base demangled \
  --kernel-name 'regex:vfused_kernel<double, \(int\)32, \(bool\)0, \(bool\)1' \
  --launch-count 64 --kill on --csv --page raw \
  --metrics gpu__time_duration.sum $B/bench_potrf_large --no-fixed --maxes 512 --types d
# 3. memcheck of the whole file (small grid), the variable-size cases on the full grid.
step mc_all 150 env TINYBATCH_CUDA_TESTS=small compute-sanitizer --tool memcheck --error-exitcode 9 \
  $B/test_cuda_cholesky_large
step t_full 200 $B/test_cuda_cholesky_large "[vbatch]"
# The device tool brings back only a few files per call: everything goes back as one tarball.
tar -C "$OUT" -czf /tmp/device-out.tgz . && rm -rf "${OUT:?}"/* && mv /tmp/device-out.tgz "$OUT/"
