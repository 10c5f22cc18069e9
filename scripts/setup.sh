#!/usr/bin/env bash
# One-time machine setup for pmdt, safe to run again (idempotent):
#  - installs DPDK 22.11 and the build tools from Debian/Ubuntu packages if missing;
#  - reserves 2 MiB hugepages and mounts hugetlbfs if it can (else DPDK runs fall back
#    to --no-huge and say so).
set -euo pipefail

PKGS=(dpdk dpdk-dev libdpdk-dev pkg-config clang libclang-dev iproute2 build-essential
      libfontconfig1-dev fonts-dejavu-core curl ca-certificates iputils-ping tcpdump iperf3 sockperf
      ethtool util-linux)
HUGEPAGES=${PMDT_HUGEPAGES:-1024}

is_root() { [ "$(id -u)" = 0 ]; }

need_install=0
pkg-config --exists libdpdk 2>/dev/null || need_install=1
command -v dpdk-testpmd >/dev/null 2>&1 || need_install=1
[ -n "$(ls /usr/lib/llvm-*/lib/libclang*.so* 2>/dev/null)" ] || need_install=1
command -v ip >/dev/null 2>&1 || need_install=1
pkg-config --exists fontconfig 2>/dev/null || need_install=1
command -v iperf3 >/dev/null 2>&1 && command -v sockperf >/dev/null 2>&1 || need_install=1
command -v ethtool >/dev/null 2>&1 || need_install=1

if [ "$need_install" = 1 ]; then
  if ! is_root; then
    echo "setup: DPDK or build tools are missing; run as root (sudo make setup) or install:" >&2
    echo "  apt-get install -y ${PKGS[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${PKGS[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${PKGS[@]}" >/dev/null
fi
echo "setup: DPDK $(pkg-config --modversion libdpdk) found"

# Rust: the distribution's rustc is too old (bookworm has 1.63); use rustup.
if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  echo "setup: installing a Rust toolchain with rustup (stable, minimal + rustfmt, clippy)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
    sh -s -- -y -q --profile minimal --component rustfmt,clippy
fi

if is_root; then
  total=$(awk '/^HugePages_Total/ {print $2}' /proc/meminfo)
  if [ "${total:-0}" -lt "$HUGEPAGES" ]; then
    echo "$HUGEPAGES" > /proc/sys/vm/nr_hugepages 2>/dev/null || true
  fi
  if ! grep -q hugetlbfs /proc/mounts; then
    mkdir -p /dev/hugepages
    mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
  fi
fi
free_pages=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${free_pages:-0}" -gt 0 ] && grep -q hugetlbfs /proc/mounts; then
  echo "setup: $free_pages free 2 MiB hugepages"
else
  echo "setup: no hugepages available: DPDK runs will use --no-huge (slower)"
fi
