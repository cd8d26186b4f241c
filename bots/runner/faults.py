"""Which failures are the host's: the one place that says so (issue 36).

A failure is the host's when the machine, not a bot, could not do its part: the sandbox would
not start, the bots' runtime image or a build box is missing, the box program refused, a file
could not be read or written (a bot's upload on a media mount that is gone, a folder made
unreadable). Such a failure is never charged to a bot, never uses up a match's attempts, and
counts toward stopping the worker that saw it (`ladder.matches.breaker`).

Classified by the exception's type, never by its message: a message is free text that a new
wording, or a bot's own stderr quoted in it, would change. Every error of this kind the runner
raises is one of HOST_FAULTS; to add one, add its type here.
"""

from __future__ import annotations

import errno

from bots.runner.boxctl import BoxProgramError
from bots.runner.build import BuildUnavailable
from bots.runner.results import InfrastructureFault
from bots.runner.runtime import RuntimeMissing
from bots.runner.sandbox import SandboxUnavailable

HOST_FAULTS: tuple[type[BaseException], ...] = (
    InfrastructureFault,  # the referee's verdict: no seat started, every seat failed alike...
    SandboxUnavailable,  # the sandbox would not start (cgroups, namespaces, the image)
    RuntimeMissing,  # the bots' runtime image is not on this host
    BuildUnavailable,  # no build box can run here
    BoxProgramError,  # the box program refused or failed (an OSError of its own)
)
"""The exception types that are host faults whatever they say."""

HOST_ERRNOS = frozenset(
    {
        errno.ENOENT,  # a file or the media mount gone
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EACCES,  # a folder's permissions
        errno.EPERM,
        errno.ENOSPC,  # a full disk
        errno.EDQUOT,
        errno.EROFS,  # a mount gone read-only
        errno.EIO,  # the disk or the network file system failing
        errno.ESTALE,
        errno.ENODEV,
        errno.ENXIO,
    }
)
"""The errors of files and mounts (an OSError's `errno`, structured, not its message) that are
the host's: the ladder's worker reads and writes only its own host's files around a match (a
bot's files reach it as bytes already checked at upload). Not every OSError: a bot closing its
pipes raises BrokenPipeError or ConnectionResetError (EPIPE, ECONNRESET) in whatever writes to
it, and were those the host's, a losing bot could have its rated match given back unrated by
closing them (the sore loser of tests/ladder/matches/test_hostile_ladder.py)."""


def is_host_fault(exc: BaseException) -> bool:
    """Whether `exc` is a host fault: one of HOST_FAULTS, or an OSError of a file or a mount
    (HOST_ERRNOS), never one of a connection or a pipe."""
    if isinstance(exc, HOST_FAULTS):
        return True
    return (
        isinstance(exc, OSError)
        and not isinstance(exc, ConnectionError)
        and exc.errno in HOST_ERRNOS
    )


def describe(exc: BaseException) -> str:
    """How a host fault reads in a log line or a match's failure reason: its type and message."""
    return f"{type(exc).__name__}: {exc}"
