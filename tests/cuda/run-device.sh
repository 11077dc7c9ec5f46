#!/usr/bin/env bash
# GPU test run, on a machine with a CUDA GPU, from the repository root:
#
#   tests/cuda/run-device.sh
#
# Configures (nvcc from /usr/local/cuda/bin), builds the GPU test programs, runs them on the
# full grid through `meson test --suite cuda`, then runs every GPU test program under
# compute-sanitizer (memcheck, then racecheck) on the small grid (TINYBATCH_CUDA_TESTS=small).
# Logs go to $OUT (or ./device-logs): build.log, tests.log, memcheck.log, racecheck.log,
# summary.txt. The summary is printed last. Exit status: 0 only if every step passed.
#
# Knobs: TINYBATCH_BUILD (build folder, default build-device), TINYBATCH_SEED (test data),
# TINYBATCH_SANITIZE=0 (skip the sanitizer runs), TINYBATCH_FULL_GRID=0 (skip the full grid:
# a second device call that only sanitizes what the first one built and ran),
# TINYBATCH_STEP_TIMEOUT (seconds per step).
set -uo pipefail

root=$(pwd)
out=${OUT:-$root/device-logs}
build=${TINYBATCH_BUILD:-build-device}
step_timeout=${TINYBATCH_STEP_TIMEOUT:-420}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
programs=(test_cuda_blas test_cuda_cholesky test_cuda_lu test_cuda_misc test_cuda_fast_getrf
          test_cuda_fast_inverse test_cuda_fast_potrf test_cuda_fast_gemm test_cuda_fast_getrs
          test_cuda_fast_gesv test_cuda_fast_potrs test_cuda_fast_posv)
# TINYBATCH_PROGRAMS="test_cuda_fast_getrs ..." narrows every step to those programs.
[ -n "${TINYBATCH_PROGRAMS:-}" ] && read -r -a programs <<<"$TINYBATCH_PROGRAMS"
# The fast solves are split into test_cuda_fast_<op>_0..3 on full-grid builds (meson.build):
# each name stands for whichever of its programs the build defines.
expand_programs() {
  local p all=() found
  for p in "${programs[@]}"; do
    found=$(ninja -C "$build" -t targets all 2>/dev/null | grep -oE "^tests/cuda/${p}(_[0-3])?:" | tr -d : | sed 's|tests/cuda/||')
    if [ -n "$found" ]; then all+=($found); else all+=("$p"); fi
  done
  programs=("${all[@]}")
}
summary=()
failed=0
note() { summary+=("$1"); }
fail() { summary+=("$1"); failed=1; }

# ---- configure and build -----------------------------------------------------------------
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  nvcc --version | tail -2
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" -Dcuda=enabled -Dtests=true -Dbenchmarks=false -Dexamples=false
  fi
  expand_programs
  # Only the GPU test programs: the rest of the tree has its own runs.
  ninja -C "$build" $(printf 'tests/cuda/%s ' "${programs[@]}")
} >"$out/build.log" 2>&1
if [ $? -ne 0 ]; then
  fail "build: FAILED (see build.log)"
  tail -n 40 "$out/build.log"
  printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
  exit 1
fi
note "build: ok ($(head -n 1 "$out/build.log"))"

# ---- the full grid -------------------------------------------------------------------------
if [ "${TINYBATCH_FULL_GRID:-1}" != 0 ]; then
start=$(date +%s)
names=()
[ -n "${TINYBATCH_PROGRAMS:-}" ] && names=("${programs[@]#test_}")
timeout "$step_timeout" meson test -C "$build" --no-rebuild --suite cuda --print-errorlogs "${names[@]}" \
  >"$out/tests.log" 2>&1
rc=$?
cat "$build/meson-logs/testlog.txt" >>"$out/tests.log" 2>/dev/null
secs=$(($(date +%s) - start))
results=$(grep -E '^ *[0-9]+/[0-9]+ .*cuda' "$out/tests.log" | sed 's/^ *//' | head -n 40)
counts=$(grep -E '^(All tests passed|test cases:)' "$out/tests.log" | sed 's/^/    /')
agree=$(grep -E '^GPU vs host:' "$out/tests.log" | sed 's/^/    /')
if [ $rc -eq 0 ]; then note "GPU tests (full grid, ${secs}s): ok"; else fail "GPU tests (full grid, ${secs}s): FAILED rc=$rc (see tests.log)"; fi
note "$(printf '%s\n' "$results" | sed 's/^/    /')"
note "$counts"
note "$agree"
else
  note "GPU tests (full grid): skipped (TINYBATCH_FULL_GRID=0)"
fi

# ---- compute-sanitizer on the small grid --------------------------------------------------
sanitize() {  # tool, extra args...
  local tool=$1 log="$out/$1.log" errors=0 prog rc
  shift
  : >"$log"
  for prog in "${programs[@]}"; do
    echo "=== $prog" >>"$log"
    # The [errors] test provokes failing CUDA calls on purpose: run it apart, with the
    # sanitizer's API error reports off, so only real memory errors count.
    TINYBATCH_CUDA_TESTS=small timeout "$step_timeout" compute-sanitizer --tool "$tool" \
      --error-exitcode 99 "$@" "$build/tests/cuda/$prog" '~[errors]' >>"$log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && errors=$((errors + 1)) && echo "=== $prog: rc $rc" >>"$log"
    if [ "$prog" = test_cuda_misc ]; then
      TINYBATCH_CUDA_TESTS=small timeout "$step_timeout" compute-sanitizer --tool "$tool" \
        --error-exitcode 99 --report-api-errors no "$@" "$build/tests/cuda/$prog" '[errors]' >>"$log" 2>&1
      rc=$?
      [ $rc -ne 0 ] && errors=$((errors + 1)) && echo "=== $prog [errors]: rc $rc" >>"$log"
    fi
  done
  local sums
  sums=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | sort | uniq -c | sed 's/^ */    /')
  if [ $errors -eq 0 ]; then note "$tool (small grid): ok"; else fail "$tool (small grid): FAILED in $errors run(s) (see $tool.log)"; fi
  note "$sums"
}
if [ "${TINYBATCH_SANITIZE:-1}" != 0 ]; then
  start=$(date +%s)
  sanitize memcheck --leak-check full
  note "    memcheck took $(($(date +%s) - start))s"
  start=$(date +%s)
  # racecheck looks at shared memory only: cheap while no kernel uses any, essential once
  # the fast kernels of issue #4 do.
  sanitize racecheck
  note "    racecheck took $(($(date +%s) - start))s"
else
  note "sanitizers: skipped (TINYBATCH_SANITIZE=0)"
fi

printf '%s\n' "${summary[@]}" | sed '/^$/d' | tee "$out/summary.txt"
exit $failed
