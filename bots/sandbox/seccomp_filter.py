"""The boxes' seccomp filter, compiled by Debian's python3-seccomp (`program()`: the BPF
program for `bwrap --seccomp FD`). Everything is allowed except what a bot has no use for and an
attacker would want, by class:

- other processes: tracing, reading or writing their memory, stealing their descriptors;
- new namespaces and mounts, by every way in: `unshare`, `setns`, `clone` with any
  `CLONE_NEW*` flag, `clone3` (answered ENOSYS: its flags sit in memory a filter cannot read,
  and glibc then falls back to `clone`, which is checked), `mount`, `pivot_root`, `chroot`, and
  the new mount API (`fsopen`, `fsconfig`, `fsmount`, `fspick`, `move_mount`, `open_tree`,
  `open_tree_attr`, `mount_setattr`, `statmount`, `listmount`);
- the kernel itself: keyrings, BPF, perf, io_uring, userfaultfd, modules, kexec, reboot, swap,
  accounting, quotas, the kernel log, file handles;
- channels between boxes through what the boxes share read-only (`/usr`, the runtime): file
  locks (`flock`, answered ENOSYS, which cargo takes for a filesystem without locks; `fcntl`
  lock and lease commands), change notification (`inotify`, `fanotify`, `fcntl(F_NOTIFY)`),
  and the page cache: probes (`mincore`, `cachestat`, `preadv2`/`pwritev2` with RWF_NOWAIT)
  and evictions (`posix_fadvise`, `readahead`, `madvise` with MADV_COLD or MADV_PAGEOUT,
  `process_madvise`): one box evicting pages of a shared file that another box then times
  was a channel of 31 bits in 32 between two turns (tests/bots/test_hostile_channels.py);
  and the host-wide counters of `sysinfo` (processes, free memory, load);
- sockets other than Unix ones (the network namespace is empty anyway);
- every system call newer than the ones this list was written against (ENOSYS, which is what
  a program sees on an older kernel, so libraries fall back): a new kernel adds no hole.

The libseccomp bindings exist only for Debian's Python, which runs the box program; this
module is imported there only.
"""

from __future__ import annotations

import errno

DENY = [
    # other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    # namespaces and mounts
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    # the kernel
    "bpf",
    "perf_event_open",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "syslog",
    "lookup_dcookie",
    "ustat",
    "open_by_handle_at",
    "name_to_handle_at",
    "process_madvise",
    # channels through shared files and host-wide counters
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "fanotify_init",
    "fanotify_mark",
    "sysinfo",
]
NOT_THERE = [
    "clone3",
    "cachestat",
    "flock",
    "fadvise64",
    "readahead",
    "mincore",
    # Kernel AIO reads with RWF_NOWAIT: another way to ask whether a page is cached.
    "io_setup",
    "io_destroy",
    "io_submit",
    "io_cancel",
    "io_getevents",
    "io_pgetevents",
]
"""Answered ENOSYS: callers treat the call as missing and fall back (glibc: clone3 to clone;
cargo: no locking; `cp`: no read-ahead hints; libaio users: synchronous I/O)."""
MADV_COLD, MADV_PAGEOUT = 20, 21
"""madvise advice that reclaims a mapping's pages (shared file pages included): answered
EINVAL, what a kernel before 5.4 says of advice it does not know."""
STATMOUNT, LISTMOUNT, OPEN_TREE_ATTR = 457, 458, 467
"""x86-64 numbers of calls newer than Debian 12's libseccomp knows by name."""
NEWEST_ALLOWED = 462
"""x86-64's mseal (Linux 6.10). Calls numbered above it (and below 600) get ENOSYS, except the
few this filter has reviewed; see FUTURE."""
FUTURE = [nr for nr in range(NEWEST_ALLOWED + 1, 600) if nr != OPEN_TREE_ATTR]
CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
LOCK_COMMANDS = {
    "F_GETLK": 5,
    "F_SETLK": 6,
    "F_SETLKW": 7,
    "F_OFD_GETLK": 36,
    "F_OFD_SETLK": 37,
    "F_OFD_SETLKW": 38,
    "F_SETLEASE": 1024,
    "F_GETLEASE": 1025,
    "F_NOTIFY": 1026,
}
RWF_NOWAIT = 0x00000008
DEBIAN_PACKAGES = "/usr/lib/python3/dist-packages"


def program() -> bytes:
    """The compiled filter."""
    import socket
    import sys
    import tempfile

    if DEBIAN_PACKAGES not in sys.path:  # run with -S, which leaves Debian's packages out
        sys.path.append(DEBIAN_PACKAGES)
    import seccomp  # type: ignore[import-not-found, unused-ignore]  # Debian python3-seccomp

    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    eperm = seccomp.ERRNO(errno.EPERM)
    enosys = seccomp.ERRNO(errno.ENOSYS)
    for name in DENY:
        rules.add_rule(eperm, name)
    for name in NOT_THERE:
        rules.add_rule(enosys, name)
    for number in (STATMOUNT, LISTMOUNT, OPEN_TREE_ATTR):
        rules.add_rule(eperm, number)
    for number in FUTURE:
        rules.add_rule(enosys, number)
    for flag in CLONE_NEW.values():
        rules.add_rule(eperm, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    for command in LOCK_COMMANDS.values():
        rules.add_rule(eperm, "fcntl", seccomp.Arg(1, seccomp.EQ, command))
    for advice in (MADV_COLD, MADV_PAGEOUT):
        rules.add_rule(seccomp.ERRNO(errno.EINVAL), "madvise", seccomp.Arg(2, seccomp.EQ, advice))
    for call in ("preadv2", "pwritev2"):
        rules.add_rule(eperm, call, seccomp.Arg(5, seccomp.MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT))
    rules.add_rule(
        seccomp.ERRNO(errno.EACCES), "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX)
    )
    # A binary tree of system call numbers rather than a list: the filter runs on every call.
    rules.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        data: bytes = out.read()
    return data
