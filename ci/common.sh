# Shared settings for the ci/ scripts: where things live, and how to fail.
# Sourced, never run.
set -euo pipefail

BTL_FT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BTL_FT_BUILD=${BTL_FT_BUILD:-$BTL_FT_ROOT/build}
BTL_FT_CACHE=${BTL_FT_CACHE:-$HOME/.cache}
OMPI_VERSION=5.0.7
OMPI_DEB_VERSION=5.0.7-1
OMPI_TARBALL=openmpi_${OMPI_VERSION}.orig.tar.xz
OMPI_SHA256=97f10c04e9b9a1771db3fd005009e4c07afa3ce739f940e41eb0fc7397cb9473

# ccache lives outside the clone so fresh clones (CI) reuse it. BASEDIR makes
# absolute paths under the clone relative, so the clone's location does not
# change the cache key.
export CCACHE_DIR=${CCACHE_DIR:-$BTL_FT_CACHE/btl_ft-ccache}
export CCACHE_BASEDIR=$BTL_FT_ROOT
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

die() { echo "error: $*" >&2; exit 1; }
step() { echo "== $*"; }
