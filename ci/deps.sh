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
  # make install: module files, and the test that loads them (tests/install)
  lmod tcl8.6 strace
  # a Slurm cluster on the emulated nodes (tests/slurm); Slurm's PMIx plugin
  # dlopens libpmix.so, which only the -dev package provides
  slurmctld slurmd slurm-client munge libpmix-dev
  # benchmarks: results and plots
  python3 python3-matplotlib
  # benchmarks: instructions per MPI call (callgrind, valgrind/callgrind.h)
  valgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Debian's environment-modules conflicts with lmod as a package: the install
# test runs its modulecmd.tcl from the package unpacked here, beside Lmod.
envmodules=$BTL_FT_CACHE/btl_ft-tools/environment-modules

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
elif [ "$(id -u)" -ne 0 ]; then
  die "missing packages: ${missing[*]}. Run 'make deps' as root (or: sudo apt-get install ${missing[*]})."
else
  step "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -f "$envmodules/usr/lib/x86_64-linux-gnu/modulecmd.tcl" ]; then
  step "unpacking Debian's environment-modules into $envmodules"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -q environment-modules > "$tmp/download.log" 2>&1) \
    || { cat "$tmp/download.log" >&2; die "apt-get download environment-modules failed (run apt-get update?)"; }
  rm -rf "$envmodules"
  mkdir -p "$envmodules"
  dpkg -x "$tmp"/environment-modules_*.deb "$envmodules"
  rm -rf "$tmp"
fi
