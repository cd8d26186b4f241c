"""The box program (`grass-box`): the only code of the project that runs as root.

It owns a host's bot sandboxes ("boxes"), as ioi/isolate does: a box id maps to one uid, one
code folder and one cgroup; the caller (a Celery worker, `grass match`), which needs no root,
asks it to make a box (`init`), run a command in it with limits (`run`), kill what runs in it
(`kill`) and remove it (`cleanup`), and gets plain `key:value` lines back. It takes box ids,
numbers and byte streams, never a host path, and it never opens a file under a box's folders:
the caller writes a bot's files itself (into a folder the box sees read-only), and a build's
output leaves the box through a pipe, read by a program running inside it.

The contract and the threat model: `bots/sandbox/README.md`. This package imports nothing but
the standard library (and Debian's python3-seccomp, in `seccomp_filter`), so that Debian's
/usr/bin/python3 runs it from a root-owned copy (`deploy/install-box.sh`), never the project's
virtual environment, which the unprivileged worker may write.
"""
