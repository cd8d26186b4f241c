#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for development and CI: system packages (only those that are
# missing), a virtual environment in .venv, and the project with its dev dependencies.
# Safe to run again: every step checks before it acts.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages: Debian's python3 runs the bots inside the sandbox (bubblewrap + setpriv from
# util-linux), and python3-seccomp compiles the sandbox's seccomp filter.
need_apt=()
[ -x /usr/bin/python3 ] || need_apt+=(python3 python3-venv)
command -v bwrap >/dev/null || need_apt+=(bubblewrap)
command -v setpriv >/dev/null || need_apt+=(util-linux)
/usr/bin/python3 -c "import seccomp" 2>/dev/null || need_apt+=(python3-seccomp)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then echo "setup: need root to install: ${need_apt[*]}" >&2; exit 1; fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'
echo "setup: done (.venv ready)"
