#!/usr/bin/env bash
# `make install` as a user runs it: install into an emptied prefix, then in
# fresh shells (env -i, no profile) load the module with Lmod and with
# Environment Modules, compile a ULFM program with mpicc and run it with
# `mpirun --with-ft ulfm`. Every file the compile and the run open is traced
# (strace -f): none may be under the source tree, where build/ lives, nor
# under the tree the install was built in.
# Exits 77 (skipped) when a module system is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${BTL_FT_CACHE:-$HOME/.cache}
envmodules=$cache/btl_ft-tools/environment-modules
lmod_init=/usr/share/lmod/lmod/init/bash
modulecmd=$envmodules/usr/lib/x86_64-linux-gnu/modulecmd.tcl

fail() { echo "install test: FAIL: $*" >&2; exit 1; }
[ -f "$lmod_init" ] || { echo "install test: Lmod is missing ($lmod_init): make deps" >&2; exit 77; }
[ -f "$modulecmd" ] || { echo "install test: Environment Modules is missing ($modulecmd): make deps" >&2; exit 77; }
command -v strace > /dev/null || { echo "install test: strace is missing: make deps" >&2; exit 77; }

# Open MPI's build for a prefix names the prefix in its configure arguments,
# so the prefix and the tree it is built in stay in the cache, shared by
# every clone: a fresh clone (CI) rebuilds only what changed since the last
# run, about a minute, where a first build takes 15 minutes on a slow
# machine. The prefix is emptied before and after, so nothing stale is
# installed. A lock keeps two clones out of each other's tree.
state=$cache/btl_ft-install-test
prefix=$state/prefix
tree=$state/openmpi-install
mkdir -p "$state"
exec 9> "$state/lock"
flock 9
rm -rf "$prefix"
work=$(mktemp -d /tmp/btl_ft-install-test.XXXXXX)
trap 'rm -rf "$work" "$prefix"' EXIT

echo "== make install PREFIX=$prefix (built in $tree)"
start=$SECONDS
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL BTL_FT_INSTALL_TREE="$tree" \
  make -C "$root" --no-print-directory install PREFIX="$prefix" > "$work/install.log" 2>&1 \
  || { tail -30 "$work/install.log"; fail "make install failed"; }
echo "== make install took $((SECONDS - start)) s"
tail -3 "$work/install.log"
cp "$root/tests/install/ulfm_survivors.c" "$work/"

# $1: which module system; the rest of the session is the same for both.
session() {
  local system=$1 load
  case $system in
    lmod) load="source $lmod_init" ;;
    environment-modules)
      load="module() { eval \"\$(tclsh8.6 $modulecmd bash \"\$@\")\"; }" ;;
  esac
  mkdir -p "$work/$system"
  env -i HOME="$work/$system" PATH=/usr/bin:/bin TERM=dumb bash --noprofile --norc -e -c "
    $load
    module use $prefix/share/modulefiles
    module load btl_ft
    cd $work
    echo \"mpicc: \$(command -v mpicc)\"
    ompi_info --param mpi all --level 9 | grep -q 'mpi_ft_detector_timeout' \
      || { echo 'ompi_info: no mpi_ft_detector_timeout: not the btl_ft build' >&2; exit 1; }
    strace -f -qq -o $work/$system/compile.trace -e trace=%file,execve \
      mpicc ulfm_survivors.c -o $system/ulfm_survivors
    timeout 120 strace -f -qq -o $work/$system/run.trace -e trace=%file,execve \
      mpirun --with-ft ulfm --allow-run-as-root --oversubscribe -n 4 \
             --mca mpi_ft_detector_period 0.01 --mca mpi_ft_detector_timeout 0.05 \
             $system/ulfm_survivors
  " > "$work/$system/out.txt" 2>&1 || { cat "$work/$system/out.txt"; fail "$system: the session failed"; }
  cat "$work/$system/out.txt"
  [ "$(grep -c ': 3 survivors agreed' "$work/$system/out.txt")" = 3 ] \
    || fail "$system: not every survivor agreed on 3 survivors"
  grep -q "mpicc: $prefix/bin/mpicc" "$work/$system/out.txt" || fail "$system: mpicc is not the installed one"
  local trace
  for trace in compile run; do
    if grep -F -e "$root" -e "$tree" "$work/$system/$trace.trace" | head -5 | grep .; then
      fail "$system: the $trace opened files under the source tree $root or the build tree $tree"
    fi
    [ "$(grep -c -F "$prefix" "$work/$system/$trace.trace")" -gt 0 ] \
      || fail "$system: the $trace trace shows no file of the prefix (is strace tracing?)"
  done
  if readelf -d "$work/$system/ulfm_survivors" | grep -F -e "$root" -e "$tree"; then
    fail "$system: the program's run path names the source or the build tree"
  fi
  echo "== $system: module loaded, compiled, ran; nothing read under $root"
}

session lmod
session environment-modules
echo "install test: passed"
