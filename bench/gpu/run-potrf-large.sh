#!/usr/bin/env bash
# One device call for the blocked and variable-size Cholesky, from the repository root on the
# GPU machine:   source .device-deps/env.sh; TB_COMMIT=<id> bench/gpu/run-potrf-large.sh
# Builds the Cholesky GPU tests and bench_potrf_large, runs the tests (full grid), then
# memcheck and racecheck on the small grid, then the benchmark (TB_POTRF_ARGS, default: the
# full run with the shape sweep). Writes tests.log, sanitize.log, bench.log and
# bench_potrf_large.csv under $OUT. TB_SKIP_TESTS=1 / TB_SKIP_BENCH=1 skip a part;
# TB_TEST_FILTER (a Catch2 filter, e.g. "[vbatch][gemm]": tags, since the template test cases'
# names end in " - float" / " - double" and Catch2 v2 reads a comma as "or") narrows test_cuda_cholesky_large
# and the sanitizer runs to those test cases (test_cuda_cholesky is then left out).
set -uo pipefail
out=${OUT:-$(pwd)/device-logs}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
[ -f build-device/build.ninja ] ||
  meson setup build-device -Dcuda=enabled -Dtests=true -Dbenchmarks=true -Dexamples=false >"$out/setup.log" 2>&1
ninja -C build-device tests/cuda/test_cuda_cholesky tests/cuda/test_cuda_cholesky_large bench/gpu/bench_potrf_large \
  >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
if [ "${TB_SKIP_TESTS:-0}" != 1 ]; then
  filter=${TB_TEST_FILTER:-}
  for t in test_cuda_cholesky test_cuda_cholesky_large; do
    [ -n "$filter" ] && [ $t = test_cuda_cholesky ] && continue
    echo "== $t $filter" | tee -a "$out/tests.log"
    build-device/tests/cuda/$t ${filter:+"$filter"} 2>&1 | tail -25 | tee -a "$out/tests.log"
  done
  if [ "${TINYBATCH_SANITIZE:-1}" != 0 ]; then
    for tool in memcheck racecheck; do
      echo "== $tool" | tee -a "$out/sanitize.log"
      TINYBATCH_CUDA_TESTS=small compute-sanitizer --tool $tool --error-exitcode 9 \
        build-device/tests/cuda/test_cuda_cholesky_large ${filter:+"$filter"} 2>&1 | tail -8 | tee -a "$out/sanitize.log"
      echo "exit $?" | tee -a "$out/sanitize.log"
    done
  fi
fi
if [ "${TB_SKIP_BENCH:-0}" != 1 ]; then
  build-device/bench/gpu/bench_potrf_large ${TB_POTRF_ARGS:---sweep} --csv "$out/bench_potrf_large.csv" \
    2>&1 | tee "$out/bench.log" | tail -40
fi
