#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for development and CI: system packages (only those that are
# missing), a virtual environment in .venv, and the project with its dev dependencies.
# Safe to run again: every step checks before it acts.
set -euo pipefail
cd "$(dirname "$0")/.."

# .venv on Debian's /usr/bin/python3: the worker runs as an unprivileged user (deploy/systemd,
# make run, the end-to-end tests), which must be able to run the environment's interpreter; one
# under root's home (pyenv's, say) it cannot reach. A .venv on another interpreter is made anew.
venv() {
    if [ -x .venv/bin/python ] && ! grep -qx 'home = /usr/bin' .venv/pyvenv.cfg 2>/dev/null; then
        echo "setup: .venv is on $(sed -n 's/^home = //p' .venv/pyvenv.cfg); making it again on /usr/bin/python3"
        rm -rf .venv
    fi
    [ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
}

# GRASS_SETUP=production: a web, beat or worker host of the production layout (deploy/README.md).
# Only what the site runs on: the sandbox's packages, .venv and the project without its dev
# dependencies. PostgreSQL and Redis live on hosts of their own there, so none is installed,
# started or opened to local trust auth, and neither are the development tools below.
if [ "${GRASS_SETUP:-}" = production ]; then
    need_apt=()
    [ -x /usr/bin/python3 ] || need_apt+=(python3)
    /usr/bin/python3 -c "import ensurepip" 2>/dev/null || need_apt+=(python3-venv)
    command -v bwrap >/dev/null || need_apt+=(bubblewrap)
    command -v setpriv >/dev/null || need_apt+=(util-linux)
    /usr/bin/python3 -c "import seccomp" 2>/dev/null || need_apt+=(python3-seccomp)
    command -v mmdebstrap >/dev/null || need_apt+=(mmdebstrap)
    command -v mke2fs >/dev/null || need_apt+=(e2fsprogs)
    command -v sudo >/dev/null || need_apt+=(sudo)
    if [ ${#need_apt[@]} -gt 0 ]; then
        if [ "$(id -u)" -ne 0 ]; then echo "setup: need root to install: ${need_apt[*]}" >&2; exit 1; fi
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
    fi
    # The bots' runtime image and the box program: only worker hosts run bots
    # (GRASS_RUNTIME_IMAGE_BUILD=false skips both on a web or beat host).
    if [ "${GRASS_RUNTIME_IMAGE_BUILD:-true}" != false ]; then
        bash deploy/runtime-image.sh
        bash deploy/install-box.sh
    fi
    venv
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e .
    echo "setup: done (production host: .venv ready)"
    exit 0
fi

# System packages: Debian's python3 runs the bots inside the sandbox (bubblewrap + setpriv from
# util-linux), and python3-seccomp compiles the sandbox's seccomp filter.
need_apt=()
[ -x /usr/bin/python3 ] || need_apt+=(python3)
# A python3 that is there may still lack venv: Debian ships ensurepip in python3-venv.
/usr/bin/python3 -c "import ensurepip" 2>/dev/null || need_apt+=(python3-venv)
command -v bwrap >/dev/null || need_apt+=(bubblewrap)
command -v setpriv >/dev/null || need_apt+=(util-linux)
/usr/bin/python3 -c "import seccomp" 2>/dev/null || need_apt+=(python3-seccomp)
# mmdebstrap builds the bots' runtime image (deploy/runtime-image.sh), below, and e2fsprogs'
# mke2fs packs it into the one read-only file system that boxes mount.
command -v mmdebstrap >/dev/null || need_apt+=(mmdebstrap)
command -v mke2fs >/dev/null || need_apt+=(e2fsprogs)
# sudo: the unprivileged worker reaches the box program (the sandbox's root part) through one
# sudo rule (deploy/install-box.sh).
command -v sudo >/dev/null || need_apt+=(sudo)
# The ladder site: PostgreSQL (its tests run on it) and Redis (Celery's broker).
command -v pg_ctlcluster >/dev/null || need_apt+=(postgresql)
command -v redis-server >/dev/null || need_apt+=(redis-server)
command -v make >/dev/null || need_apt+=(make)  # make run, make test
# wrk: the load tool of the leaderboard latency benchmark (loopback HTTP).
command -v wrk >/dev/null || need_apt+=(wrk)
# nginx (with openssl for a throwaway certificate): the tests check deploy/nginx with `nginx -t`;
# systemd-analyze (systemd) checks the units. Installing nginx does not start it in a container.
command -v nginx >/dev/null || need_apt+=(nginx-light)
command -v openssl >/dev/null || need_apt+=(openssl)
command -v systemd-analyze >/dev/null || need_apt+=(systemd)
# qemu-system-x86 (and e2fsprogs' mke2fs): tests/vm boots a Debian 13 guest to test the sandbox
# on cgroup v2.
command -v qemu-system-x86_64 >/dev/null || need_apt+=(qemu-system-x86)
command -v mke2fs >/dev/null || need_apt+=(e2fsprogs)
# chromium: the browser tests drive Debian's headless Chromium through Playwright.
command -v chromium >/dev/null || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then echo "setup: need root to install: ${need_apt[*]}" >&2; exit 1; fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

# Start the services when they do not answer (containers have no systemd to do it). The tests
# connect as user postgres over TCP without a password: trust auth for local connections.
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
    for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
# A fresh Debian cluster asks for a password over TCP; on a development or CI machine the tests
# connect as postgres from 127.0.0.1 without one.
if ! psql -h 127.0.0.1 -U postgres -w -qtAc 'select 1' >/dev/null 2>&1; then
    hba="$(ls -d /etc/postgresql/*/main | sort -V | tail -n 1)/pg_hba.conf"
    sed -i '1i host all postgres 127.0.0.1/32 trust' "$hba"
    pg_ctlcluster --skip-systemctl-redirect "$(basename "$(dirname "$(dirname "$hba")")")" main reload
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
fi

# The bots' runtime image (Python with NumPy, Node.js, g++, Rust, Java): about a minute and
# 1.2 GB the first time, nothing when this checkout's image is already built.
bash deploy/runtime-image.sh
# The box program, the worker's user and its sudo rule (a root-owned copy of bots/sandbox).
bash deploy/install-box.sh

venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev,rl]'
echo "setup: done (.venv ready)"
