#!/usr/bin/env bash
# Installs a configured build into a scratch prefix and builds tests/install/consumer.cpp
# against it twice: with the pkg-config file and with the CMake package; in builds with CUDA
# also consumer.cu with nvcc, both ways (run only where there is a GPU); in builds with the
# kernel library consumer_kernels.cpp with pkg-config tinybatch-kernels.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
meson install -C "$build" --destdir "$prefix" >/dev/null
root="$prefix$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')"
pc_dir=$(dirname "$(find "$root" -name tinybatch.pc | head -n1)")
# pkg-config, with the install root (DESTDIR) as the sysroot of its paths
flags=$(PKG_CONFIG_PATH="$pc_dir" PKG_CONFIG_SYSROOT_DIR="$prefix" pkg-config --cflags --libs tinybatch)
g++ $flags "$here/consumer.cpp" -o "$prefix/consumer-pc"
"$prefix/consumer-pc"
# The compiled kernel library (builds with -Dkernel_library=true): a run-time order through it.
if [ -f "$pc_dir/tinybatch-kernels.pc" ]; then
  flags=$(PKG_CONFIG_PATH="$pc_dir" PKG_CONFIG_SYSROOT_DIR="$prefix" pkg-config --cflags --libs tinybatch-kernels)
  # the library after the source: the toolchain links with --as-needed
  g++ "$here/consumer_kernels.cpp" $flags -o "$prefix/consumer-kernels-pc"
  LD_LIBRARY_PATH="$(dirname "$(find "$root" -name 'libtinybatch_kernels.so' | head -n1)")" "$prefix/consumer-kernels-pc"
fi
# CUDA users (builds with CUDA only): tinybatch-cuda.pc gives nvcc-ready flags and brings
# cuBLAS to the link line. consumer.cu is a real CUDA program (every operation on the GPU),
# compiled and linked by nvcc with the .pc file's flags only, run where there is a GPU.
gpu=false
nvidia-smi -L >/dev/null 2>&1 && gpu=true
if [ -f "$pc_dir/tinybatch-cuda.pc" ]; then
  flags=$(PKG_CONFIG_PATH="$pc_dir" PKG_CONFIG_SYSROOT_DIR="$prefix" pkg-config --cflags --libs tinybatch-cuda)
  # the toolkit's own paths lie outside the DESTDIR: also take them as the .pc file names them
  cuda_flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags-only-I --libs-only-L tinybatch-cuda)
  case " $flags " in *" -lcublas "*) ;; *) echo "tinybatch-cuda.pc: no -lcublas in: $flags"; exit 1 ;; esac
  nvcc -std=c++20 -arch=sm_90 "$here/consumer.cu" $flags $cuda_flags -o "$prefix/consumer-cuda-pc"
  echo "consumer.cu (nvcc, pkg-config tinybatch-cuda): linked"
  if $gpu; then "$prefix/consumer-cuda-pc"; fi
fi
# CMake (with tinybatch::cuda and the CUDA language where CMake finds the toolkit and nvcc)
cmake -S "$here" -B "$prefix/cmake-build" -DCMAKE_PREFIX_PATH="$root" >/dev/null
cmake --build "$prefix/cmake-build" >/dev/null
"$prefix/cmake-build/consumer"
if [ -f "$pc_dir/tinybatch-cuda.pc" ]; then
  for t in consumer_cuda_cxx consumer_cuda; do
    [ -f "$prefix/cmake-build/$t" ] || { echo "CMake: $t (tinybatch::cuda) not built"; exit 1; }
  done
  echo "consumer_cuda.cpp, consumer.cu (CMake tinybatch::cuda): linked"
  if $gpu; then "$prefix/cmake-build/consumer_cuda"; fi
fi
# the version file: another major version must not be found
if cmake -S "$here" -B "$prefix/cmake-v1" -DCMAKE_PREFIX_PATH="$root" -DTB_VERSION=1.0 >/dev/null 2>&1; then
  echo "CMake: find_package(tinybatch 1.0) accepted version $(meson introspect "$build" --projectinfo |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')"
  exit 1
fi
echo "CMake: find_package(tinybatch 1.0) refused (SameMajorVersion)"
