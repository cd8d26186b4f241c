"""Which failures are the host's (`bots.runner.faults`, issue 36): by type, never by message."""

from __future__ import annotations

import pytest

from bots.protocol import ProtocolError
from bots.runner.botfiles import BadBot
from bots.runner.boxctl import BoxProgramError
from bots.runner.build import BuildUnavailable
from bots.runner.faults import describe, is_host_fault
from bots.runner.results import InfrastructureFault
from bots.runner.runtime import RuntimeMissing
from bots.runner.sandbox import SandboxUnavailable


@pytest.mark.parametrize(
    "fault",
    [
        InfrastructureFault("every seat failed the same way"),
        SandboxUnavailable("cannot make a box"),
        RuntimeMissing("the bots' runtime image is not built on this host"),
        BuildUnavailable("no build box"),
        BoxProgramError("refused: not allowed"),
        FileNotFoundError(2, "No such file or directory", "/srv/media/bots/a.py"),
        PermissionError(13, "Permission denied", "/srv/media/bots"),
        OSError(28, "No space left on device"),
        OSError(5, "Input/output error"),
        OSError(30, "Read-only file system"),
    ],
    ids=lambda fault: type(fault).__name__,
)
def test_the_hosts_failures_are_host_faults(fault: BaseException) -> None:
    assert is_host_fault(fault)


@pytest.mark.parametrize(
    "error",
    [
        BadBot("a bot's own files"),
        ProtocolError("not protocol"),
        RuntimeError("host fault: a message that says so is not enough"),
        ValueError("InfrastructureFault: sandbox unavailable"),
        # A bot's closed pipes, in whatever wrote to it or read from it: charged as the bot's
        # (a losing bot must not get its rated match given back by closing them).
        BrokenPipeError(32, "Broken pipe"),
        ConnectionResetError(104, "Connection reset by peer"),
        OSError(32, "Broken pipe"),
        OSError(9, "Bad file descriptor"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_other_failures_are_not_whatever_their_message_says(error: BaseException) -> None:
    """The message is free text (a bot's stderr may be quoted in it): only the type counts."""
    assert not is_host_fault(error)


def test_a_fault_is_described_by_its_type_and_message() -> None:
    assert describe(FileNotFoundError("gone")) == "FileNotFoundError: gone"
