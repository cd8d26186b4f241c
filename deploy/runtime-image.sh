#!/usr/bin/env bash
# Builds the bots' runtime image: a Debian 12 root filesystem made with mmdebstrap from the
# exact package versions in bots/runtime/packages.lock, mounted read-only as / in every box.
#
#   sudo bash deploy/runtime-image.sh            # build the image of this checkout (if missing)
#   sudo bash deploy/runtime-image.sh --relock   # resolve bots/runtime/packages.txt again and
#                                                # rewrite packages.lock (a new image identity)
#   sudo bash deploy/runtime-image.sh --prune    # also remove images of other identities
#
# The image's identity is VERSION-<first 12 hex digits of sha256(packages.lock + recipe.sh)>
# (bots/runner/runtime.py computes the same): the same lock and recipe give the same
# identity, and the build checks that the image holds exactly the locked packages. Images live in
# GRASS_RUNTIME_ROOT (default /var/lib/grass/runtime), one folder per identity; a build goes to
# a temporary folder first and is renamed into place, so a half-built image is never used.
# Needs root, mmdebstrap and Debian's mirror (deb.debian.org); about a minute and 1.2 GB.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME=bots/runtime
ROOT="${GRASS_RUNTIME_ROOT:-/var/lib/grass/runtime}"
MIRROR="${GRASS_RUNTIME_MIRROR:-http://deb.debian.org/debian}"
relock=false
prune=false
for arg in "$@"; do
    case "$arg" in
        --relock) relock=true ;;
        --prune) prune=true ;;
        *) echo "runtime-image: unknown option $arg (use --relock, --prune)" >&2; exit 2 ;;
    esac
done

if [ "$(id -u)" -ne 0 ]; then echo "runtime-image: run as root (mmdebstrap --mode=root)" >&2; exit 1; fi
command -v mmdebstrap >/dev/null || { echo "runtime-image: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 1; }

identity() { echo "$(cat "$RUNTIME/VERSION")-$(cat "$RUNTIME/packages.lock" "$RUNTIME/recipe.sh" | sha256sum | cut -c1-12)"; }

# shellcheck source=../bots/runtime/recipe.sh
. "$RUNTIME/recipe.sh"
build() { build_image "$1" "$2" "$MIRROR"; }

installed() { chroot "$1" dpkg-query -W -f '${Package}=${Version}\n' | sort; }

mkdir -p "$ROOT"
if $relock; then
    scratch="$(mktemp -d "$ROOT/.relock-XXXXXX")"
    trap 'rm -rf "$scratch"' EXIT
    names="$(grep -v '^#' "$RUNTIME/packages.txt" | grep -v '^$' | paste -sd, -)"
    echo "runtime-image: resolving $names"
    build "$scratch/image" "$names"
    installed "$scratch/image" > "$RUNTIME/packages.lock"
    echo "runtime-image: wrote $RUNTIME/packages.lock ($(wc -l < "$RUNTIME/packages.lock") packages); identity $(identity)"
    rm -rf "$scratch"
    trap - EXIT
fi

id="$(identity)"
image="$ROOT/$id"
if [ -f "$image/etc/grass-runtime" ] && [ "$(cat "$image/etc/grass-runtime")" = "$id" ]; then
    echo "runtime-image: $id is built ($image)"
else
    started=$SECONDS
    partial="$(mktemp -d "$ROOT/.build-XXXXXX")"
    trap 'rm -rf "$partial"' EXIT
    echo "runtime-image: building $id from $(wc -l < "$RUNTIME/packages.lock") locked packages"
    if ! build "$partial/image" "$(paste -sd, "$RUNTIME/packages.lock")"; then
        echo "runtime-image: the build failed. If the mirror no longer offers a locked version" >&2
        echo "  (Debian replaces versions with security updates), run with --relock: a new image." >&2
        exit 1
    fi
    if ! installed "$partial/image" | diff -u "$RUNTIME/packages.lock" - >&2; then
        echo "runtime-image: the image does not hold exactly the locked packages" >&2
        exit 1
    fi
    echo "$id" > "$partial/image/etc/grass-runtime"
    rm -rf "$image"
    mv "$partial/image" "$image"
    rm -rf "$partial"
    trap - EXIT
    echo "runtime-image: built $id in $((SECONDS - started)) s ($(du -sh "$image" | cut -f1)) at $image"
fi

# The pack boxes mount (bots/sandbox/image.py): the image as one read-only ext4 file system in
# a file (a few seconds; reads cost what the folder's do, where EROFS and squashfs mounts made a
# Python bot start three times slower here), with the sha256 of its bytes: the identity of what
# was built, checked when it is mounted. Boxes then see `/` as the image's path in their
# mountinfo, not this host's folder.
pack="$ROOT/$id.ext4"
if [ ! -f "$pack" ] || [ ! -f "$pack.sha256" ]; then
    command -v mke2fs >/dev/null || { echo "runtime-image: mke2fs is missing (apt-get install e2fsprogs)" >&2; exit 1; }
    rm -f "$pack.partial"
    mib=$(du -s --block-size=1M "$image" | cut -f1)
    truncate -s "$((mib * 5 / 4 + 64))M" "$pack.partial"
    mke2fs -q -t ext4 -O ^has_journal -E root_owner=0:0 -d "$image" "$pack.partial"
    sha256sum "$pack.partial" | cut -d' ' -f1 > "$pack.sha256.partial"
    mv "$pack.partial" "$pack"
    mv "$pack.sha256.partial" "$pack.sha256"
    echo "runtime-image: packed $id ($(du -h "$pack" | cut -f1), sha256 $(cut -c1-16 "$pack.sha256"))"
fi

if $prune; then
    for other in "$ROOT"/*; do
        case "$other" in "$image"|"$image.ext4"|"$image.ext4.sha256") continue ;; esac
        echo "runtime-image: removing $(basename "$other")"
        rm -rf "$other"
    done
fi
