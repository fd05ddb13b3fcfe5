#!/usr/bin/env bash
# Obtains the pristine Open MPI 5.0.7 tarball from Debian's source package
# `openmpi` 5.0.7-1 and verifies its sha256. Prints the tarball's path.
# Debian 12 ships Open MPI 4.1; 5.0.7-1 is in the next suite (trixie), so a
# deb-src entry for it goes into a file of its own, touching nothing else.
source "$(dirname "$0")/common.sh"

src_dir=$BTL_FT_CACHE/btl_ft-src
tarball=$src_dir/$OMPI_TARBALL
list=/etc/apt/sources.list.d/btl_ft-openmpi-src.sources

verify() {
  echo "$OMPI_SHA256  $1" | sha256sum --check --status
}

if [ -f "$tarball" ] && verify "$tarball"; then
  echo "$tarball"
  exit 0
fi

mkdir -p "$src_dir"
if ! apt-cache showsrc openmpi 2>/dev/null | grep -qx "Version: $OMPI_DEB_VERSION"; then
  [ "$(id -u)" -eq 0 ] || die "need root to add the deb-src entry $list (run 'make deps' as root first)"
  step "adding deb-src entry $list" >&2
  cat > "$list" <<LIST
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
LIST
  apt-get update -q >&2
fi

step "downloading Debian source package openmpi $OMPI_DEB_VERSION" >&2
(cd "$src_dir" && rm -f "$OMPI_TARBALL" && apt-get source --download-only -q "openmpi=$OMPI_DEB_VERSION" >&2) \
  || die "apt-get source openmpi=$OMPI_DEB_VERSION failed"

if ! verify "$tarball"; then
  actual=$(sha256sum "$tarball" | cut -d' ' -f1)
  mv "$tarball" "$tarball.rejected"
  die "sha256 mismatch for $OMPI_TARBALL: expected $OMPI_SHA256, got $actual; refusing to continue"
fi
echo "$tarball"
