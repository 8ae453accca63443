#!/usr/bin/env bash
# Installs what is missing (Debian packages), configures and builds headroom into build/.
# Idempotent: a second run only rebuilds what changed.
# Usage: scripts/bootstrap.sh [BUILD_DIR [TARGET...]]   (no target: everything)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
shift || true
targets=("$@")

# clang-14 and its libFuzzer runtime build fuzz/ (the ctest fuzz.smoke; it skips without them);
# clang-format-14 checks the house format (ctest style.format); pybind11 and pytest build and test
# the Python module (python/; built only when found).
packages=(cmake g++ make ninja-build nlohmann-json3-dev librapidcheck-dev libbenchmark-dev googletest
          libgtest-dev libgmock-dev clang-14 libfuzzer-14-dev libclang-rt-14-dev clang-format-14
          python3-dev pybind11-dev python3-pybind11 python3-pytest)
# Open MPI builds headroom_mpi (fuzz campaigns over MPI ranks, docs/campaigns.md) and runs the ctest
# cli.mpi_campaign. Optional: where it cannot be installed (no network), headroom builds without it.
optional=(libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}" "${optional[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq || true
  if ! DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2; then
    required=()
    for p in "${missing[@]}"; do
      [[ " ${optional[*]} " == *" $p "* ]] || required+=("$p")
    done
    if ((${#required[@]})); then
      DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${required[@]}" >&2
    fi
    echo "bootstrap: ${optional[*]} not installed: headroom_mpi will not be built" >&2
  fi
fi

# nvcc is optional: the CUDA toolkit's usual place is added when it is not on PATH already.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi

# Ninja when it is there (ninja-build): it schedules the whole tree's units on every core at once.
# Without a device the CUDA code is compiled to PTX only (sm_90a's virtual architecture: the front
# end and NVVM run, ptxas does not; a device would compile the PTX at load), with NVVM at -O1 (the
# top CMakeLists.txt: HEADROOM_CUDA_COMPILE_CHECK): about a fifth of the CUDA compile time of an
# sm_90a build, on a build machine with no GPU such as CI. With one (nvidia-smi lists a GPU) sm_90a
# SASS is built: 90a, not 90, because the prefill tile pass uses Hopper's warpgroup products
# (wgmma), which only the arch-specific target has. HEADROOM_CUDA_ARCHITECTURES overrides both
# (e.g. 90a for binaries built here and carried to a device).
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  archs="${HEADROOM_CUDA_ARCHITECTURES:-}"
  if [[ -z "$archs" ]]; then
    archs=90a-virtual
    nvidia-smi -L 2>/dev/null | grep -q '^GPU' && archs=90a
  fi
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" >&2
fi
if ((${#targets[@]})); then
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >&2
else
  cmake --build "$build" -j"$(nproc)" >&2
fi
