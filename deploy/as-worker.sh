#!/bin/sh
# Runs a command as the worker's unprivileged user (GRASS_WORKER_USER, `grass`) when called as
# root: `make run` runs the whole site that way, as the servers do (deploy/systemd), so its
# workers reach root only through the box program's sudo rule. Called as another user, the
# command runs as that user (whose sandboxed bots then need the same sudo rule: see
# deploy/install-box.sh, or GRASS_SANDBOXED=false).
#
# The command never shares root's terminal. A process whose controlling terminal is root's can
# push keystrokes into root's shell (the TIOCSTI ioctl, which Linux still allows where
# dev.tty.legacy_tiocsti is 1) or read what root types next; and anything else running as the
# worker's user (a process a bot escaped to) could make it do so. So:
# - with a controlling terminal (a recipe of `make run` or `make admin`, a command typed by
#   hand), it runs on a terminal of its own (runuser --pty): what root types is relayed to it,
#   Ctrl-C included, and nothing it does reaches root's terminal;
# - without one (honcho gives each of `make run`'s processes a session of its own; systemd,
#   cron), there is no terminal to take over, and it runs as it is, so that honcho's signals
#   to its process group still reach it (Ctrl-C stops them all).
set -eu
user="${GRASS_WORKER_USER:-grass}"
if [ "$(id -u)" -ne 0 ]; then
    exec "$@"
fi
if ! id -u "$user" >/dev/null 2>&1; then
    echo "as-worker: no user $user: run deploy/setup.sh" >&2
    exit 1
fi
if (exec </dev/tty) 2>/dev/null; then
    # -m keeps the environment (make run's settings), as setpriv does below.
    exec runuser -u "$user" -m --pty -- env HOME=/nonexistent "$@"
fi
exec setpriv --reuid="$user" --regid="$user" --init-groups -- env HOME=/nonexistent "$@"
