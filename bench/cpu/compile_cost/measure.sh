#!/usr/bin/env bash
# The compile cost of a user's program (docs/api.md, Run-time sizes): each program of this
# folder built as a user builds it, g++ -O2, one process at a time, under /usr/bin/time -v
# (CPU seconds = user + system, peak resident memory), then run once.
#   bash bench/cpu/compile_cost/measure.sh BUILD [programs...]
# BUILD: a build folder configured with -Dkernel_library=true (its src/ holds
# libtinybatch_kernels); programs: runtime, runtime_library, dispatch, fixed_posv6,
# eigen_llt6 (default: all but dispatch, which takes minutes and several GB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(cd "$1" && pwd)
shift
progs=("$@")
((${#progs[@]})) || progs=(runtime runtime_library fixed_posv6 eigen_llt6)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c++20 -O2 -fopenmp -I"$root/include")
printf '%-16s %8s %9s  %s\n' program "CPU s" "peak MiB" "run"
for p in "${progs[@]}"; do
  case $p in
    runtime) cmd=(g++ "${flags[@]}" "$here/runtime_gesv.cpp") ;;
    runtime_library) cmd=(g++ "${flags[@]}" -DTINYBATCH_KERNEL_LIBRARY "$here/runtime_gesv.cpp" -L"$build/src" -ltinybatch_kernels) ;;
    dispatch) cmd=(g++ "${flags[@]}" "$here/dispatch_gesv.cpp") ;;
    fixed_posv6) cmd=(g++ "${flags[@]}" "$here/fixed_posv6.cpp") ;;
    eigen_llt6) cmd=(g++ "${flags[@]}" -I/usr/include/eigen3 "$here/eigen_llt6.cpp") ;;
    *) echo "unknown program $p"; exit 2 ;;
  esac
  /usr/bin/time -v -o "$out/$p.time" "${cmd[@]}" -o "$out/$p"
  cpu=$(awk -F': ' '/User time/{u=$2} /System time/{s=$2} END{printf "%.1f", u+s}' "$out/$p.time")
  mb=$(awk -F': ' '/Maximum resident/{printf "%.0f", $2/1024}' "$out/$p.time")
  ran=$(LD_LIBRARY_PATH="$build/src" "$out/$p" | tail -n1)
  printf '%-16s %8s %9s  %s\n' "$p" "$cpu" "$mb" "$ran"
done
