# How the bots' runtime image is made from its packages (sourced by deploy/runtime-image.sh).
# The image's identity hashes this file with packages.lock: change either, and it is a new
# image, built again on every host.
#
# build_image TARGET PACKAGES MIRROR: a Debian 12 root filesystem at TARGET with PACKAGES
# (comma-separated, name or name=version) and what they depend on, and nothing a program does
# not need to run: no documentation, manuals or translations (licences kept). OpenJDK's
# scripts need the manual folder to exist. /bot, /build and /sandbox are the mount points the
# sandbox binds the bot's files, a build's folder and the runtime library on.
build_image() {
    mmdebstrap --variant=essential --mode=root --quiet \
        --include="$2" \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --setup-hook='mkdir -p "$1"/usr/share/man/man1' \
        --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/*' \
        --customize-hook='mkdir -p "$1"/bot "$1"/build "$1"/sandbox/lib && touch "$1"/sandbox/launch.py' \
        bookworm "$1" "$3"
}
