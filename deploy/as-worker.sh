#!/bin/sh
# Runs a command as the worker's unprivileged user (GRASS_WORKER_USER, `grass`) when called as
# root: `make run` runs the whole site that way, as the servers do (deploy/systemd), so its
# workers reach root only through the box program's sudo rule. Called as another user, the
# command runs as that user (whose sandboxed bots then need the same sudo rule: see
# deploy/install-box.sh, or GRASS_SANDBOXED=false).
set -eu
user="${GRASS_WORKER_USER:-grass}"
if [ "$(id -u)" -ne 0 ]; then
    exec "$@"
fi
if ! id -u "$user" >/dev/null 2>&1; then
    echo "as-worker: no user $user: run deploy/setup.sh" >&2
    exit 1
fi
exec setpriv --reuid="$user" --regid="$user" --init-groups -- env HOME=/nonexistent "$@"
