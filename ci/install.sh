#!/usr/bin/env bash
# `make install PREFIX=...`: the patched Open MPI configured for PREFIX (so
# nothing it runs reads the build tree), the advisor fttune and the
# simulator ftsim, the docs, and module files for Lmod and Environment
# Modules in PREFIX/share/modulefiles/btl_ft/.
source "$(dirname "$0")/common.sh"

prefix=${BTL_FT_PREFIX:-}
[ -n "$prefix" ] || die "usage: make install PREFIX=/opt/btl_ft (an absolute directory)"
case "$prefix" in
  /*) ;;
  *) die "PREFIX must be an absolute path, not '$prefix'" ;;
esac
prefix=$(realpath -m "$prefix")
case "$prefix/" in
  "$BTL_FT_ROOT"/*) die "PREFIX $prefix is inside the source tree $BTL_FT_ROOT: install elsewhere" ;;
esac
mkdir -p "$prefix" 2>/dev/null || die "cannot create PREFIX $prefix"
[ -w "$prefix" ] || die "PREFIX $prefix is not writable"

BTL_FT_PREFIX=$prefix "$BTL_FT_ROOT/ci/build-ompi.sh" install

step "fttune, ftsim and the docs"
install -m 755 "$BTL_FT_BUILD/core/sim/fttune" "$BTL_FT_BUILD/core/sim/ftsim" "$prefix/bin/"
install -d "$prefix/share/doc/btl_ft"
install -m 644 "$BTL_FT_ROOT/README.md" "$BTL_FT_ROOT"/docs/*.md "$prefix/share/doc/btl_ft/"

version=$OMPI_VERSION
revision=$(git -C "$BTL_FT_ROOT" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
moduledir=$prefix/share/modulefiles/btl_ft
step "module files in $moduledir ($version, btl_ft $revision)"
install -d "$moduledir"
for kind in lua tcl; do
  case $kind in lua) out=$moduledir/$version.lua ;; tcl) out=$moduledir/$version ;; esac
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@REVISION@|$revision|g" \
    "$BTL_FT_ROOT/ci/modulefiles/btl_ft.$kind.in" > "$out"
  chmod 644 "$out"
done

cat <<MSG
installed btl_ft (Open MPI $version, btl_ft $revision) in $prefix
  with Lmod or Environment Modules:  module use $prefix/share/modulefiles && module load btl_ft
  without modules:                   export PATH=$prefix/bin:\$PATH
MSG
