#!/usr/bin/env bash
# Installs what hpclaunch needs on Debian 12. Idempotent: packages already present are skipped.
#
#   scripts/install-deps.sh demo   what scripts/demo.sh needs: build hpclaunch and hpclaunch-train (LibTorch with
#                                  gloo, OpenBLAS), the dataset, and PLplot for the curves (a few minutes)
#   scripts/install-deps.sh        all of that and what the tests need (scripts/test.sh), the peers' venv from PyPI
#                                  included (scripts/peers-venv.sh: torch 2.15, submitit, Lightning)
set -euo pipefail
mode=${1:-test}
case $mode in demo | test) ;; *) echo "install-deps.sh: unknown mode '$mode': give demo, or nothing for the tests" >&2; exit 2 ;; esac
demo_packages=(
  build-essential cmake pkg-config git ca-certificates ccache
  ninja-build                     # the builds' generator (scripts/lib-build.sh): on 2 cores, a quarter off make's time
  libboost-dev libboost-filesystem-dev libfmt-dev libyaml-cpp-dev libcli11-dev
  libkainjow-mustache-dev nlohmann-json3-dev
  libssl-dev                      # the agents' HMAC-SHA256 (OpenSSL libcrypto)
  libhwloc-dev                    # --numa-binding's topology
  libtorch-dev libgloo-dev zlib1g-dev
  libopenblas0-pthread            # LibTorch's BLAS (libblas.so.3 alternative): ~10x the reference BLAS's GEMM
  dataset-fashion-mnist
  libplplot-dev plplot-driver-cairo fonts-dejavu-core
)
test_packages=(
  doctest-dev python3-torch
  openmpi-bin libopenmpi-dev
  slurm-wlm
  slurmdbd mariadb-server-core mariadb-client-core  # t0642: a cluster with accounting (scripts/lib-test-cluster-accounting.sh); the servers alone, no service of the machine's
  debootstrap                     # the Debian 13 root of Slurm 24.11, the test cluster's second version (scripts/slurm-root.sh)
  file procps iproute2 psmisc
  openssh-client openssh-server   # t0660: --remote over real ssh to an sshd the test runs in a network namespace
  elfutils                        # t0442: eu-stack, a hung hpclaunch-train's stacks (the agent's --hang-timeout; py-spy is in the peers' venv)
  universal-ctags                 # t0067: scripts/unity-names.py reads the names of each unity batch's files
  groff-base zsh fish             # t0700: man pages read by groff, zsh and fish completion run
  chromium                        # t0640: `hpclaunch report`'s page opened headless, offline (DOM and screenshot)
  clang libclang-rt-14-dev llvm-14  # fuzz/ (t0065): clang, its libFuzzer and sanitizer runtimes, llvm-symbolizer
  g++-aarch64-linux-gnu qemu-user-static  # t0725: the static launcher cross-built for aarch64, run under qemu-user
  python3-venv python3-pip python3-setuptools python3-wheel python3-pytest python3-cloudpickle python3-tqdm  # python/ (docs/python.md): its wheel, tests, Executor, wait's bar
  python3-nbclient python3-nbformat python3-ipykernel  # t0802: examples/executor.ipynb run headless (a python3 kernel)
)
packages=("${demo_packages[@]}")
[ "$mode" = demo ] || packages+=("${test_packages[@]}")
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# t0725's arm64 libraries are unpacked, not installed (scripts/aarch64-sysroot.sh says why); apt needs the arm64
# package lists to download them.
if [ "$mode" = test ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
  $sudo apt-get update -qq
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "$mode" = demo ] || $sudo "$(dirname "$0")/aarch64-sysroot.sh" "${HPCLAUNCH_ROOTS:-/opt/hpclaunch}/aarch64-sysroot"
# The peers of 2026 from PyPI (torch 2.15 and its torchrun, submitit, Lightning): python/requirements-peers.txt.
[ "$mode" = demo ] || $sudo "$(dirname "$0")/peers-venv.sh"
# Slurm 24.11 in a Debian 13 root, for the *-slurm2411-* tests and the 24.11 lane (tests/CMakeLists.txt): once.
[ "$mode" = demo ] || $sudo "$(dirname "$0")/slurm-root.sh" "${HPCLAUNCH_ROOTS:-/opt/hpclaunch}/roots/slurm-24.11"
