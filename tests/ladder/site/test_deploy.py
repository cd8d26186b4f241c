"""deploy/: Django's deployment checks pass with the production settings, the example
environment file loads, every setting is documented, and the systemd units and the nginx
configuration are valid (checked by systemd-analyze and nginx, which deploy/setup.sh installs)."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
SETTINGS = ROOT / "ladder" / "settings.py"

PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "ladder.settings",
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "ladder.example.org",
    # Never connected to: the checks below need no database.
    "DATABASE_URL": "postgres://grass@127.0.0.1:5432/grass_deploy_check",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15",
    "SITE_HTTPS": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
}
HTTPS_FLAGS = ("SITE_HTTPS", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS")


def check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`manage.py check --deploy` in a process of its own, under exactly these settings."""
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=base | env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deploy_checks_pass_with_production_settings() -> None:
    done = check_deploy(PRODUCTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout


def test_deploy_checks_flag_a_site_without_https() -> None:
    """The test above is not vacuous: without the HTTPS settings, Django warns."""
    done = check_deploy({k: v for k, v in PRODUCTION.items() if k not in HTTPS_FLAGS})
    assert done.returncode != 0
    for warning in ("W004", "W008", "W012", "W016"):
        assert f"security.{warning}" in done.stderr + done.stdout


def test_the_example_environment_file_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """grass.env.example, read the way deploy/manage.sh reads it, gives working settings."""
    import runpy

    shell = subprocess.run(
        ["bash", "-c", 'set -a; . "$1"; set +a; env -0', "_", DEPLOY / "grass.env.example"],
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        check=True,
    )
    values = dict(item.split("=", 1) for item in shell.stdout.decode().split("\0") if "=" in item)
    for name in documented_variables():
        monkeypatch.delenv(name, raising=False)
        if name in values:
            monkeypatch.setenv(name, values[name])
    s = runpy.run_path(str(SETTINGS))
    assert s["DEBUG"] is False and s["SITE_HTTPS"] is True and s["GRASS_SANDBOXED"] is True
    assert s["DATABASES"]["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert str(s["MEDIA_ROOT"]) == "/srv/grass/media"
    assert s["STORAGES"]["default"]["OPTIONS"] == {}
    assert s["CELERY_WORKER_CONCURRENCY"] is None  # empty: the host's cores


def documented_variables() -> list[str]:
    """The variables of the table in ladder/settings.py's docstring."""
    import ast

    doc = ast.get_docstring(ast.parse(SETTINGS.read_text())) or ""
    names = []
    for line in doc.splitlines():
        if line.startswith("| ") and not line.startswith(("| variable", "| ---")):
            names += [n.strip() for n in line.split("|")[1].split(",")]
    return names


def test_every_setting_read_from_the_environment_is_documented() -> None:
    read = set(re.findall(r'env_\w+\(\s*"([A-Z0-9_]+)"', SETTINGS.read_text()))
    documented = set(documented_variables())
    assert read == documented, "the table in ladder/settings.py's docstring is out of date"
    example = (DEPLOY / "grass.env.example").read_text()
    readme = (DEPLOY / "README.md").read_text()
    for name in documented:
        assert re.search(rf"^{name}=", example, re.MULTILINE), f"{name} not in grass.env.example"
        assert f"`{name}`" in readme, f"{name} not in deploy/README.md's table"


UNITS = (
    "grass-web.service",
    "grass-worker.service",
    "grass-worker-quick.service",
    "grass-worker-now.service",
    "grass-beat.service",
    "grass-live.service",
)


def _needs(*tools: str) -> None:
    """deploy/setup.sh installs these; elsewhere a missing one skips, on CI it fails."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if not missing:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{', '.join(missing)} must be installed on CI (deploy/setup.sh)")
    pytest.skip(f"no {', '.join(missing)} here")


def test_systemd_units_verify(tmp_path: Path) -> None:
    _needs("systemd-analyze")
    # The units name /opt/grass; verify checks that ExecStart exists, so point it at this tree.
    for unit in UNITS:
        text = (DEPLOY / "systemd" / unit).read_text().replace("/opt/grass", str(ROOT))
        (tmp_path / unit).write_text(text)
    done = subprocess.run(
        ["systemd-analyze", "verify", *(str(tmp_path / u) for u in UNITS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # An unknown key is only a warning (exit 0), so any output at all fails the test.
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_nginx_configuration_is_valid(tmp_path: Path) -> None:
    _needs("nginx", "openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=ladder.example.org", "-keyout", key, "-out", cert],
        capture_output=True,
        check=True,
        timeout=60,
    )  # fmt: skip
    site = (DEPLOY / "nginx" / "grass.conf").read_text()
    site = site.replace("/etc/letsencrypt/live/ladder.example.org/fullchain.pem", str(cert))
    site = site.replace("/etc/letsencrypt/live/ladder.example.org/privkey.pem", str(key))
    (tmp_path / "grass.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"error_log {tmp_path}/error.log;\npid {tmp_path}/nginx.pid;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  include {tmp_path}/grass.conf;\n}}\n"
    )
    done = subprocess.run(
        ["nginx", "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "test is successful" in done.stderr


def test_nginx_counts_live_sockets_per_ipv6_64_not_per_address(tmp_path: Path) -> None:
    """The attack: 1,000 live sockets from one client, none refused, each from another address
    of its /64. nginx (the configuration's own map and zone) keys a client by its /64, in a
    network namespace of the test's own with three IPv6 addresses, two in one /64."""
    _needs("nginx", "unshare", "ip", "curl")
    if os.geteuid() != 0:
        pytest.skip("needs root: a network namespace with addresses of the test's own")
    site = (DEPLOY / "nginx" / "grass.conf").read_text()
    start = site.index("map $binary_remote_addr $grass_client")
    zone = site.index("\n", site.index("limit_conn_zone $grass_client"))
    (tmp_path / "nginx.conf").write_text(
        f"error_log {tmp_path}/error.log;\npid {tmp_path}/nginx.pid;\nevents {{}}\n"
        f"http {{\n  access_log off;\n{site[start:zone]}\n"
        "  server {\n    listen [::]:8080; listen 127.0.0.1:8080;\n"
        "    location / { limit_conn grass_live 20; return 200 $grass_client; }\n  }\n}\n"
    )
    script = f"""
        set -e
        ip link set lo up
        for a in 2001:db8:7:1::a 2001:db8:7:1::b 2001:db8:7:2::a; do
            ip -6 addr add $a/128 dev lo nodad
        done
        nginx -p {tmp_path} -c {tmp_path}/nginx.conf
        trap 'kill $(cat {tmp_path}/nginx.pid)' EXIT
        for a in 2001:db8:7:1::a 2001:db8:7:1::b 2001:db8:7:2::a; do
            curl -fsS --retry 5 --retry-connrefused --interface $a "http://[$a]:8080/" \\
                | od -An -tx1 | tr -d ' \\n'
            echo
        done
        curl -fsS --interface 127.0.0.1 http://127.0.0.1:8080/ | od -An -tx1 | tr -d ' \\n'
        echo
    """
    done = subprocess.run(
        ["unshare", "--net", "sh", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    keys = done.stdout.split()
    assert keys == [
        "20010db800070001",  # 2001:db8:7:1::a, its /64
        "20010db800070001",  # 2001:db8:7:1::b: the same client
        "20010db800070002",  # another /64: another client
        "7f000001",  # IPv4: the address itself
    ], done.stdout


def test_the_live_tables_unit_allows_a_file_descriptor_per_socket() -> None:
    """daphne holds a descriptor per live socket: systemd's default soft limit (1,024) would
    cap the site's watchers far below what nginx lets through."""
    unit = (DEPLOY / "systemd" / "grass-live.service").read_text()
    found = re.search(r"^LimitNOFILE=(\d+)$", unit, re.MULTILINE)
    assert found and int(found.group(1)) >= 65536


def test_setup_installs_python3_venv_whenever_ensurepip_is_missing() -> None:
    """Debian's python3 cannot make a virtual environment without python3-venv (ensurepip), and
    a machine may have the one without the other: both set-up paths check for ensurepip
    itself, not only for python3."""
    script = (DEPLOY / "setup.sh").read_text()
    production, _, development = script.partition('echo "setup: done (production host')
    assert development, "setup.sh no longer has a production path and a development path"
    check = '/usr/bin/python3 -c "import ensurepip" 2>/dev/null || need_apt+=(python3-venv)'
    for path, text in (("production", production), ("development", development)):
        assert check in text, f"setup.sh's {path} path does not check for ensurepip"
        assert "\n    venv\n" in text or "\nvenv\n" in text, f"{path}: no .venv made"
    # On Debian's python3, which the worker's unprivileged user can run (not pyenv's, say).
    assert "[ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv" in script
    subprocess.run(["bash", "-n", DEPLOY / "setup.sh"], check=True, timeout=30)
