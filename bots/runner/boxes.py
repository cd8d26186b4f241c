"""Starting one bot, and undoing it: what the referee does for each seat, and what the host's
proof, the benchmarks and the training opponents do with a single bot.

It sits above the box (`bots.runner.sandbox`) and the boxes made ahead (`bots.runner.pool`,
which is built on the box: hence a module of its own, not a part of sandbox.py): a bot gets
a ready box, a new one, or, without the sandbox, a plain process on this machine's
interpreters, and whatever fails on the way is told as the bot's fault (`BadBot`) or the
host's (`InfrastructureFault`), with nothing of the start left behind.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from bots.runner import pool, sandbox
from bots.runner.botfiles import BadBot, BotSource, check_tree
from bots.runner.home import plain_runtime_dir
from bots.runner.languages import Language, detect
from bots.runner.process import BotProcess
from bots.runner.results import InfrastructureFault
from bots.runner.sandbox import Box, Limits, SandboxUnavailable


def start_bot(
    source: BotSource, sandboxed: bool, resources: Limits | None = None
) -> tuple[BotProcess, Box | None, Path | None]:
    """Start one bot: in its own sandbox box, or (sandboxed=False) as a plain subprocess with
    this machine's interpreters. Returns the process, the box, and the plain folder to remove
    afterwards. A compiled language's source must hold its build's artifact (`build.Build`).

    All or nothing: whatever fails on the way (the box, staging the files, the start)
    releases everything made before it. Raises BadBot for files that cannot be staged or run
    (the bot's fault: it did not start) and InfrastructureFault when the host cannot run it.
    """
    lang = detect(source.files)
    if lang.artifact is not None and lang.artifact not in source.files:
        raise BadBot(f"a {lang.name} bot runs from its build's {lang.artifact}, and it has none")
    if sandboxed:
        limits = box_limits(lang, resources)
        ready = pool.POOL.take(limits)
        if ready is not None:
            try:
                return ready.launch(source.files, lang.name), ready.box, None
            except BaseException as exc:
                ready.discard()
                if not isinstance(exc, OSError):
                    raise
                # The host could not stage the files, or the waiter is gone: a box made
                # now says which (and raises the same faults as ever).
        box = None
        try:
            box = Box.open(limits)
            box.stage(source.files)
            return box.start(lang), box, None
        except BaseException as exc:
            if box is not None:
                box.destroy()
            if isinstance(exc, SandboxUnavailable):
                raise InfrastructureFault(f"sandbox unavailable: {exc}") from None
            if isinstance(exc, OSError):
                raise InfrastructureFault(f"cannot stage the bot's files: {exc}") from None
            raise
    check_tree(source.name, source.files)
    folder = Path(tempfile.mkdtemp(prefix="grass-plain-"))
    try:
        for rel, data in source.files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        if (folder / "bot").is_file():
            (folder / "bot").chmod(0o755)
        command, env = plain_command(lang, folder)
        return BotProcess(command, env=env), None, folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def box_limits(lang: Language, resources: Limits | None = None) -> Limits:
    """The limits of a box for a bot in `lang`: `resources` (the defaults if None), with room
    for what the language's runtime needs (a JVM's threads and address space)."""
    limits = resources or Limits()
    return replace(
        limits,
        pids=max(limits.pids, lang.pids),
        address_space_mb=max(limits.address_space_mb, lang.address_space_mb),
    )


def plain_command(lang: Language, folder: Path) -> tuple[list[str], dict[str, str]]:
    """A bot's command and environment without the sandbox: the box's command with this
    machine's interpreters, and the bot's files and the runtime where they are here."""
    runtime = plain_runtime_dir()
    env = {"PATH": "/usr/bin:/bin"}
    for name, value in lang.env:
        env[name] = value.replace("/sandbox/lib", str(runtime / "lib"))
    if lang.name == "python":
        python = sandbox.PYTHON if Path(sandbox.PYTHON).exists() else sys.executable
        launch = [str(runtime / "launch.py"), str(folder), str(runtime / "lib")]
        return [python, "-I", "-S", "-B", *launch], env
    command = [arg.replace("/bot/", f"{folder}/") for arg in lang.command]
    tool = shutil.which(Path(command[0]).name) if not command[0].startswith(str(folder)) else "."
    if tool is None:
        raise BadBot(
            f"{Path(command[0]).name} is not installed here; without the sandbox, bots run on "
            "this machine's own interpreters (the ladder's image has it: run with the sandbox)"
        )
    return command, env


def stop_bot(proc: BotProcess | None, box: Box | None, folder: Path | None) -> None:
    """Undo `start_bot`: kill the process and all it started, remove its box and files."""
    if box is not None:
        box.destroy()
    if proc is not None:
        proc.close()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
