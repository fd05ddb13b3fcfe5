#!/usr/bin/env bash
# Edits the patch series with git: the build applies patches/ with patch -p1,
# this turns it into a repository and back.
#   ci/patch-queue.sh import   build/patch-queue: pristine openmpi-5.0.7
#                              (tag 'pristine'), then one commit per patch of
#                              patches/series, in order, with git am
#   ci/patch-queue.sh export   rewrites patches/*.patch from the commits after
#                              'pristine' with git format-patch; the n-th
#                              commit becomes the n-th file named in the series
# Edit, reorder or split commits in between with git rebase -i; when the
# number of commits changes, edit patches/series (names and headings) first.
source "$(dirname "$0")/common.sh"

queue=$BTL_FT_BUILD/patch-queue
series=$BTL_FT_ROOT/patches/series

series_files() {
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$series"
}

in_queue() {
  git -C "$queue" -c user.name=btl_ft -c user.email=btl_ft@localhost "$@"
}

import() {
  local tarball p
  tarball=$("$BTL_FT_ROOT/ci/fetch-source.sh")
  step "unpacking pristine openmpi-$OMPI_VERSION into $queue"
  rm -rf "$queue" "$queue.tmp"
  mkdir -p "$queue.tmp"
  tar --no-same-owner -xf "$tarball" -C "$queue.tmp"
  mv "$queue.tmp/openmpi-$OMPI_VERSION" "$queue"
  rmdir "$queue.tmp"
  in_queue init -q
  in_queue add -A -f
  in_queue commit -q -m "openmpi $OMPI_VERSION, pristine (Debian $OMPI_DEB_VERSION)"
  in_queue tag pristine
  while read -r p; do
    in_queue am -q --keep-cr "$BTL_FT_ROOT/patches/$p" || die "git am $p failed (see $queue)"
  done < <(series_files)
  echo "$(in_queue rev-list --count pristine..HEAD) commits on top of 'pristine' in $queue"
}

export_series() {
  local names commits i
  [ -d "$queue/.git" ] || die "no patch queue in $queue (run: $0 import)"
  mapfile -t names < <(series_files)
  mapfile -t commits < <(in_queue rev-list --reverse pristine..HEAD)
  [ "${#names[@]}" -eq "${#commits[@]}" ] \
    || die "patches/series names ${#names[@]} patches, the queue has ${#commits[@]} commits: edit patches/series first"
  for i in "${!commits[@]}"; do
    in_queue format-patch -1 --stdout --zero-commit --no-signature --no-numbered \
      "${commits[$i]}" > "$BTL_FT_ROOT/patches/${names[$i]}"
  done
  echo "wrote ${#names[@]} patches from $queue"
}

case "${1:-}" in
  import) import ;;
  export) export_series ;;
  *) die "usage: $0 import|export" ;;
esac
