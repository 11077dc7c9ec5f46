# Sourced by tests/run.sh and examples/run.sh: installs the Debian packages tinybatch builds
# and tests with, where they are missing, and puts nvcc on PATH where the toolkit is.
tb_packages=(meson ninja-build g++ pkg-config cmake libeigen3-dev libxsimd-dev catch2 liblapack-dev
             libopenblas-dev liblapacke-dev)
tb_missing=()
for p in "${tb_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || tb_missing+=("$p")
done
if ((${#tb_missing[@]})); then
  echo "tinybatch: installing missing Debian packages: ${tb_missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${tb_missing[@]}" >/dev/null
fi
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
# Meson's setup, or its reconfiguration when the folder is already there.
tb_setup() {
  local dir=$1
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}
