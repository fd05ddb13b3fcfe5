#!/usr/bin/env bash
# Builds Open MPI 5.0.7 from the verified Debian tarball and installs it.
#   ci/build-ompi.sh patched   -> build/openmpi-patched, installed in build/ompi
#   ci/build-ompi.sh stock     -> build/openmpi-stock,   installed in build/ompi-stock
#   ci/build-ompi.sh install   -> build/openmpi-install, installed in $BTL_FT_PREFIX
#     (the patched source configured for a prefix outside the build tree, so
#     nothing it runs reads the build tree: `make install`, ci/install.sh).
#     BTL_FT_INSTALL_TREE moves that tree elsewhere: the install test keeps
#     it in the cache, so a fresh clone rebuilds only what changed.
# Each stage is skipped when its inputs are unchanged: the tree is unpacked
# anew only when the patch series (or the overlay's file list) changes;
# overlay files are copied only when their content differs, so make rebuilds
# only what depends on them; configure reruns only when its arguments change.
source "$(dirname "$0")/common.sh"

variant=${1:-patched}
case "$variant" in
  patched) prefix=$BTL_FT_BUILD/ompi ;;
  stock)   prefix=$BTL_FT_BUILD/ompi-stock ;;
  install) prefix=${BTL_FT_PREFIX:?BTL_FT_PREFIX must name the installation prefix} ;;
  *) die "unknown variant '$variant' (expected patched, stock or install)" ;;
esac
tree=$BTL_FT_BUILD/openmpi-$variant
[ "$variant" = install ] && tree=${BTL_FT_INSTALL_TREE:-$tree}
# The core's headers and archive, as the configure arguments name them. The
# install tree reads copies kept beside it, so that its arguments never name
# the clone and a tree outside it (BTL_FT_INSTALL_TREE) survives new clones.
core_include=$BTL_FT_ROOT/btl_ft/include
core_la=$BTL_FT_BUILD/core/libbtl_ft_core.la
if [ "$variant" = install ]; then
  core_include=$tree-core/include
  core_la=$tree-core/libbtl_ft_core.la
fi
state=$tree/.btl_ft
logs=$BTL_FT_BUILD/logs
mkdir -p "$logs"
jobs=${BTL_FT_JOBS:-$(nproc)}

tarball=$("$BTL_FT_ROOT/ci/fetch-source.sh")

series_files() {
  [ -f "$BTL_FT_ROOT/patches/series" ] || return 0
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$BTL_FT_ROOT/patches/series"
}
overlay_files() {
  (cd "$BTL_FT_ROOT/ompi-overlay" && find . -type f ! -path './*.md' | sort)
}

tree_fingerprint() {
  if [ "$variant" = stock ]; then echo "stock $OMPI_SHA256"; return; fi
  {
    echo "$OMPI_SHA256"
    series_files | while read -r p; do echo "$p"; cat "$BTL_FT_ROOT/patches/$p"; done
    overlay_files
  } | sha256sum | cut -d' ' -f1
}

apply_patches() {
  local p
  while read -r p; do
    [ -f "$BTL_FT_ROOT/patches/$p" ] || die "patches/series names $p, which does not exist"
    echo "   patch $p"
    if ! patch -p1 --batch --forward --no-backup-if-mismatch -d "$tree" \
        -i "$BTL_FT_ROOT/patches/$p" > "$logs/patch.log" 2>&1; then
      cat "$logs/patch.log" >&2
      die "patch $p does not apply to openmpi-$OMPI_VERSION"
    fi
  done < <(series_files)
}

# Patches that touch Makefile.am need automake for the Makefile that
# includes them; patches to configure.ac or m4 need a full autogen.
regenerate() {
  local touched am dir
  touched=$(series_files | while read -r p; do
      sed -n 's|^+++ [^/]*/\([^[:space:]]*\).*|\1|p' "$BTL_FT_ROOT/patches/$p"; done | sort -u)
  if echo "$touched" | grep -qE '(^|/)(configure\.ac|[^/]*\.m4)$'; then
    step "autogen (patches touch configure.ac or m4)"
    (cd "$tree" && ./autogen.pl) > "$logs/autogen-$variant.log" 2>&1 || die "autogen failed, see $logs/autogen-$variant.log"
    return
  fi
  for am in $(echo "$touched" | grep -E 'Makefile\.am$' || true); do
    dir=$(dirname "$am")
    while [ "$dir" != . ] && [ ! -f "$tree/$dir/Makefile.in" ]; do dir=$(dirname "$dir"); done
    step "automake $dir/Makefile (patched $am)"
    # configure.ac asks config/opal_get_version.sh (not shipped in the
    # tarball) for version strings; automake does not need them, so its
    # complaints about the missing script are filtered out.
    if ! (cd "$tree" && automake --foreign "$dir/Makefile" 2>&1) \
        | { grep -v 'opal_get_version.sh: not found' || true; }; then
      die "automake failed for $dir/Makefile"
    fi
  done
}

unpack() {
  step "unpacking pristine openmpi-$OMPI_VERSION into $tree"
  rm -rf "$tree" "$tree.tmp"
  mkdir -p "$tree.tmp"
  tar -xf "$tarball" -C "$tree.tmp"
  mv "$tree.tmp/openmpi-$OMPI_VERSION" "$tree"
  rmdir "$tree.tmp"
  if [ "$variant" != stock ]; then
    apply_patches
    regenerate
  fi
  mkdir -p "$state"
}

copy_overlay() {
  local f changed=0
  while read -r f; do
    if ! cmp -s "$BTL_FT_ROOT/ompi-overlay/$f" "$tree/$f"; then
      install -D -m 644 "$BTL_FT_ROOT/ompi-overlay/$f" "$tree/$f"
      changed=$((changed + 1))
    fi
  done < <(overlay_files)
  echo "   overlay: $changed file(s) updated"
}

configure_args() {
  printf '%s\n' --prefix="$prefix" \
    --with-ft=ulfm --with-ucx --with-ofi \
    --with-hwloc=external --with-libevent=external \
    --with-pmix=internal --with-prrte=internal \
    --disable-mpi-fortran --disable-oshmem --disable-io-romio \
    --enable-mca-no-build=pml-ucx,osc-ucx,coll-ucc,coll-hcoll \
    "CC=ccache gcc" "CXX=ccache g++"
  # (ULFM runs over ob1; UCX stays reachable through btl/uct.)
  if [ "$variant" != stock ]; then
    # The core enters libmpi through its libtool file (see ci/core-la.sh),
    # which also brings the C++ runtime in the right place on the link line.
    printf '%s\n' "CPPFLAGS=-I$core_include" "OMPI_LIBMPI_EXTRA_LIBS=$core_la"
  fi
}

# Copies only what differs, so make rebuilds only what depends on it.
stage_core() {
  local f archive=$BTL_FT_BUILD/core/libbtl_ft_core.a
  (cd "$BTL_FT_ROOT/btl_ft/include" && find . -type f) | while read -r f; do
    cmp -s "$BTL_FT_ROOT/btl_ft/include/$f" "$core_include/$f" \
      || install -D -m 644 "$BTL_FT_ROOT/btl_ft/include/$f" "$core_include/$f"
  done
  if ! cmp -s "$archive" "${core_la%.la}.a"; then
    install -D -m 644 "$archive" "${core_la%.la}.a"
    "$BTL_FT_ROOT/ci/core-la.sh" "${core_la%.la}.a"
  fi
}

run_configure() {
  local args
  mapfile -t args < <(configure_args)
  step "configure ($variant), log: $logs/configure-$variant.log"
  (cd "$tree" && ./configure "${args[@]}") > "$logs/configure-$variant.log" 2>&1 \
    || { tail -30 "$logs/configure-$variant.log" >&2; die "configure failed, see $logs/configure-$variant.log"; }
  configure_args | sha256sum > "$state/configured"
}

# make's own output goes to a log; a progress line every 30 s keeps long
# builds visibly alive without flooding the terminal.
run_make() {
  local log=$logs/make-$variant.log start=$SECONDS pid
  step "make install -j$jobs ($variant), log: $log"
  (cd "$tree" && make -j"$jobs" install) > "$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    if [ $(( (SECONDS - start) % 30 )) -lt 5 ]; then
      echo "   ... $((SECONDS - start)) s: $(grep -c -E '^ +(CC|CXX|CCLD|CXXLD) ' "$log" || true) compile/link steps, in $(grep -E '^Making (all|install) in' "$log" | tail -1 | cut -d' ' -f4)"
    fi
  done
  if ! wait "$pid"; then
    grep -E -B5 -A5 'error|Error' "$log" | tail -40 >&2
    die "make failed ($variant), see $log"
  fi
  echo "   built and installed in $((SECONDS - start)) s"
}

want=$(tree_fingerprint)
if [ ! -f "$state/tree" ] || [ "$(cat "$state/tree")" != "$want" ]; then
  unpack
  echo "$want" > "$state/tree"
fi
[ "$variant" != stock ] && copy_overlay
[ "$variant" = install ] && stage_core
if [ ! -f "$tree/config.status" ] || ! cmp -s <(configure_args | sha256sum) "$state/configured"; then
  # libtool keeps the old prefix in every .la file it linked: a tree
  # configured anew (for a new PREFIX, say) is rebuilt from clean objects,
  # even when the first make after the configure failed.
  [ -f "$tree/config.status" ] && touch "$state/clean-first"
  run_configure
fi
if [ -f "$state/clean-first" ]; then
  step "make clean (configure arguments changed)"
  (cd "$tree" && make clean) > "$logs/clean-$variant.log" 2>&1 || die "make clean failed, see $logs/clean-$variant.log"
  rm "$state/clean-first"
fi
run_make
"$prefix/bin/ompi_info" --version > /dev/null || die "installed ompi_info does not run"
echo "installed $variant Open MPI in $prefix"
