"""The runner as the ladder runs it: as the worker's unprivileged user, reaching root only
through the box program's sudo rule. The rest of tests/bots runs as root (which calls the box
program directly), where a box's processes can be signalled and every folder written; these
paths differ for an unprivileged caller, and a red-team pass found three of them broken:

- a build that overran its limits was an infrastructure fault (the caller may not signal a
  box's process), retried for ever, never judged;
- a bot with files in subfolders could not read them (a chmod by the caller, who is not in the
  box's group, cleared the folders' set-group-id);
- the caller's umask of 077 reached root through sudo and made the runtime unreadable to boxes.
"""

from __future__ import annotations

import json
import textwrap

from tests.bots.boxes import as_worker


def run(code: str) -> dict[str, object]:
    done = as_worker(textwrap.dedent(code))
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_a_build_that_overruns_is_the_bots_fault(sandbox_ready: None) -> None:
    found = run(
        """
        import json
        from bots.runner import build
        build.BUILD_STALL_SECONDS = 3
        made = build.build_in_box({"x": b""}, ("/bin/sh", "-c", "sleep 600"), "bot")
        build.BUILD_STALL_SECONDS = 600  # the spin below is stopped by its CPU, however busy
        spin = build.build_in_box({"x": b""}, ("/bin/sh", "-c", "while :; do :; done"), "bot",
                                  cpu_seconds=1)
        print(json.dumps({"stall": [made.ok, made.log[-200:]], "spin": [spin.ok, spin.log[-200:]]}))
        """
    )
    stall, spin = found["stall"], found["spin"]
    assert stall[0] is False and "stalled" in stall[1]  # type: ignore[index,operator]
    assert spin[0] is False and "more than 1 s of CPU" in spin[1]  # type: ignore[index,operator]


def test_a_bot_reads_its_files_in_subfolders(sandbox_ready: None) -> None:
    found = run(
        """
        import json
        from bots.runner.botfiles import BotSource, load_bot
        from bots.runner.build import build
        from bots.runner.match import play_match
        main = open("bots/starters/rust/main.rs", "rb").read()
        toml = b'[package]\\nname = "bot"\\nversion = "0.1.0"\\nedition = "2021"\\n'
        cargo = build(BotSource("cargo", {"Cargo.toml": toml, "src/main.rs": main}))
        package = BotSource("pkg", {
            "bot.py": b"from helpers.pick import first\\nfrom bots.sdk import Bot, run\\n"
                      b"class B(Bot):\\n    def choose(self, obs):\\n        return first(obs)\\n"
                      b"run(B())\\n",
            "helpers/__init__.py": b"",
            "helpers/pick.py": b"def first(obs):\\n    return obs.legal[0]\\n",
        })
        match = play_match([package, load_bot("random")], limits={"max_hands": 1}, seed=2)
        print(json.dumps({"cargo": [cargo.ok, cargo.log[-300:]],
                          "package": [s.forfeit_reason for s in match.seats]}))
        """
    )
    assert found["cargo"][0] is True, found["cargo"]  # type: ignore[index]
    assert found["package"] == ["", ""]


def test_the_callers_umask_does_not_reach_the_box_program(sandbox_ready: None) -> None:
    found = run(
        """
        import json, os, time
        from pathlib import Path
        from bots.runner import boxctl, home
        os.umask(0o077)
        files = {**home.runtime_files(), "lib/marker.txt": str(time.time_ns()).encode()}
        name = boxctl.facts("runtime", stdin=home.runtime_stream(files))["runtime"]
        folder = Path(home.layout()["home"]) / "runtimes" / name
        print(json.dumps({"modes": sorted({oct(p.stat().st_mode & 0o777)
                                           for p in [folder, *folder.rglob("*")]})}))
        """
    )
    assert found["modes"] == ["0o644", "0o755"]
