#!/usr/bin/env bash
# Installs the box program (bots/sandbox, `grass-box`): the only code of the ladder that runs as
# root, and the one way the unprivileged worker reaches root.
#
#   sudo bash deploy/install-box.sh        # as root; safe to run again (setup.sh runs it)
#
# What it changes on the machine:
# - the worker's user, GRASS_WORKER_USER (default `grass`): a system user with no login shell,
#   made if missing (the web server and beat run as it too: deploy/systemd);
# - /usr/local/lib/grass-box: a root-owned copy of bots/sandbox (never the checkout itself, which
#   the worker's user may be able to write), replaced whole, so a half-copied program never runs;
# - /usr/local/sbin/grass-box: runs that copy with Debian's /usr/bin/python3 (-I -S: nothing from
#   the environment, the user's site or the current folder reaches it);
# - /etc/sudoers.d/grass-box: the worker's user may run exactly that command as root, without a
#   password; sudo clears the environment, opens no PAM session and no pty (so it execs the
#   program in place, and the box's process stays the worker's own child), and does not log each
#   of the thousands of calls a busy worker makes (deploy/sudoers.d/grass-box, checked by visudo).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then echo "install-box: run as root" >&2; exit 1; fi
command -v sudo >/dev/null || { echo "install-box: sudo is missing (apt-get install sudo)" >&2; exit 1; }
WORKER="${GRASS_WORKER_USER:-grass}"
LIB=/usr/local/lib/grass-box
BIN=/usr/local/sbin/grass-box
RULE=/etc/sudoers.d/grass-box

if ! id -u "$WORKER" >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin "$WORKER"
    echo "install-box: made user $WORKER"
fi

staging="$(mktemp -d /usr/local/lib/.grass-box-XXXXXX)"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/bots/sandbox"
: > "$staging/bots/__init__.py"
install -m 0644 bots/sandbox/*.py "$staging/bots/sandbox/"
chown -R root:root "$staging"
chmod 0755 "$staging" "$staging/bots" "$staging/bots/sandbox"
rm -rf "$LIB.old"
if [ -d "$LIB" ]; then mv "$LIB" "$LIB.old"; fi
mv "$staging" "$LIB"
rm -rf "$LIB.old"
trap - EXIT

cat > "$BIN.new" <<SCRIPT
#!/bin/sh
# The bot sandbox's box program (installed by deploy/install-box.sh from bots/sandbox).
exec /usr/bin/python3 -I -S -B $LIB/bots/sandbox/grassbox.py "\$@"
SCRIPT
chown root:root "$BIN.new"
chmod 0755 "$BIN.new"
mv "$BIN.new" "$BIN"

sed "s/@WORKER@/$WORKER/g" deploy/sudoers.d/grass-box > "$RULE.new"
chmod 0440 "$RULE.new"
visudo -cqf "$RULE.new"
mv "$RULE.new" "$RULE"
echo "install-box: $BIN ($("$BIN" version)) for user $WORKER"
