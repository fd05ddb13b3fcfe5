#!/usr/bin/env bash
# Installs every build and test dependency from Debian's archive. Idempotent:
# packages already present are not touched, and apt is not called at all when
# nothing is missing, so a non-root user with everything installed passes.
source "$(dirname "$0")/common.sh"

packages=(
  # Open MPI build
  gcc g++ make autoconf automake libtool flex perl xz-utils patch ccache pkg-config
  libucx-dev libfabric-dev libhwloc-dev libevent-dev zlib1g-dev
  # core, tests, fuzzing
  cmake libgtest-dev libgmock-dev clang libclang-rt-14-dev
  # fault injection and emulated nodes
  iproute2 util-linux procps psmisc time
  # where a stuck survivor waits (tests/netns: nodes.user_stacks)
  gdb
  # benchmarks: results and plots
  python3 python3-matplotlib
  # benchmarks: instructions per MPI call (callgrind, valgrind/callgrind.h)
  valgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  die "missing packages: ${missing[*]}. Run 'make deps' as root (or: sudo apt-get install ${missing[*]})."
fi
step "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
