"""Compile the bots' seccomp filter; run by Debian's /usr/bin/python3 (python3-seccomp).

Prints the BPF program on stdout for `bwrap --seccomp FD`. Everything is allowed except the
calls a bot has no use for and an attacker would want: tracing or reading other processes,
new namespaces, mounts, kernel keyrings, BPF, perf, io_uring, module and reboot calls, and any
socket other than a Unix one. Kept as a script (not imported) because the libseccomp bindings
exist only for Debian's Python, not for the project's virtual environment.
"""

import errno
import socket
import sys

import seccomp  # type: ignore[import-not-found]  # Debian python3-seccomp

DENY = [
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
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
    "syslog",
    "open_by_handle_at",
    "name_to_handle_at",
]
CLONE_NEWUSER = 0x10000000


def main() -> None:
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENY:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    rules.add_rule(
        seccomp.ERRNO(errno.EPERM),
        "clone",
        seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER),
    )
    rules.add_rule(
        seccomp.ERRNO(errno.EACCES), "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX)
    )
    rules.export_bpf(sys.stdout)


if __name__ == "__main__":
    main()
