"""Seccomp-BPF programs for the sandbox, built here and installed by the launcher (stage one) and the interpreter (stage two).

A program is plain bytes (an array of `struct sock_filter`); the sandboxed process installs it
with `prctl(PR_SET_SECCOMP)` after `PR_SET_NO_NEW_PRIVS`, which needs no privilege. Allow by
default, refuse with EPERM the calls a sandboxed program has no use for and that widen what it
can reach: sockets, other processes' memory, namespaces and mounts, kernel keyrings, BPF, io_uring.
"""

from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6] (little-endian: low half of args[0] at 16)
_NR, _ARCH, _ARG0_LOW = 0, 4, 16
_LD_W_ABS = 0x20
_JEQ, _JGE, _JSET = 0x15, 0x35, 0x45
_RET = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000

CLONE_THREAD = 0x00010000
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "socket": 41, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "ptrace": 101, "syslog": 103,
            "chroot": 161, "acct": 163, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
            "init_module": 175, "delete_module": 176, "quotactl": 179, "kexec_load": 246, "add_key": 248,
            "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298, "fanotify_init": 300,
            "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308, "process_vm_readv": 310,
            "process_vm_writev": 311, "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "execveat": 322,
            "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
            "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
            "clone3": 435, "mount_setattr": 442, "pivot_root": 155,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "socket": 198, "clone": 220, "execve": 221, "ptrace": 117, "syslog": 116, "chroot": 51, "acct": 89,
            "mount": 40, "umount2": 39, "swapon": 224, "swapoff": 225, "reboot": 142, "init_module": 105,
            "delete_module": 106, "quotactl": 60, "kexec_load": 104, "add_key": 217, "request_key": 218,
            "keyctl": 219, "unshare": 97, "perf_event_open": 241, "fanotify_init": 262, "name_to_handle_at": 264,
            "open_by_handle_at": 265, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271,
            "finit_module": 273, "kexec_file_load": 294, "bpf": 280, "execveat": 281, "userfaultfd": 282,
            "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
            "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435,
            "mount_setattr": 442, "pivot_root": 41,
        },
    ),
}  # fmt: skip

# Refused for every sandboxed program (the launcher installs this just before it execs the program).
BASE_DENIED = (
    "socket", "ptrace", "process_vm_readv", "process_vm_writev", "syslog", "chroot", "acct", "mount", "umount2",
    "pivot_root", "swapon", "swapoff", "reboot", "init_module", "finit_module", "delete_module", "quotactl",
    "kexec_load", "kexec_file_load", "add_key", "request_key", "keyctl", "unshare", "setns", "perf_event_open",
    "fanotify_init", "name_to_handle_at", "open_by_handle_at", "bpf", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr",
)  # fmt: skip
# Also refused once the Python interpreter has started: it needs no new programs and no child processes.
NO_PROCESSES_DENIED = ("execve", "execveat", "fork", "vfork")


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def supported() -> bool:
    return platform.machine() in _ARCHES


def build_filter(*, no_processes: bool = False) -> bytes | None:
    """The filter for this machine's architecture, or None where we have no syscall table.

    `no_processes` also refuses exec and any clone that is not a thread, so a program cannot
    start another program or fork (a fork bomb gets EPERM from its first fork).
    """
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    deny_eperm = _RET_ERRNO | errno.EPERM
    program = [
        _insn(_LD_W_ABS, _ARCH),
        _insn(_JEQ, audit_arch, jt=1),
        _insn(_RET, _RET_KILL_PROCESS),  # a foreign ABI (e.g. 32-bit calls on x86_64) would bypass the table
        _insn(_LD_W_ABS, _NR),
    ]
    if audit_arch == 0xC000003E:
        program += [_insn(_JGE, 0x40000000, jf=1), _insn(_RET, deny_eperm)]  # the x32 ABI
    denied = list(BASE_DENIED) + (list(NO_PROCESSES_DENIED) if no_processes else [])
    for name in denied:
        if name in numbers:
            program += [_insn(_JEQ, numbers[name], jf=1), _insn(_RET, deny_eperm)]
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc fall back to clone.
    program += [_insn(_JEQ, numbers["clone3"], jf=1), _insn(_RET, _RET_ERRNO | errno.ENOSYS)]
    # clone: refuse new namespaces, and (no_processes) anything that is not a thread.
    if no_processes:
        program += [
            _insn(_JEQ, numbers["clone"], jf=4),  # not clone: allow
            _insn(_LD_W_ABS, _ARG0_LOW),
            _insn(_JSET, CLONE_NAMESPACES, jt=1),  # new namespaces: deny
            _insn(_JSET, CLONE_THREAD, jt=1),  # a thread: allow
            _insn(_RET, deny_eperm),
            _insn(_RET, _RET_ALLOW),
        ]
    else:
        program += [
            _insn(_JEQ, numbers["clone"], jf=3),  # not clone: allow
            _insn(_LD_W_ABS, _ARG0_LOW),
            _insn(_JSET, CLONE_NAMESPACES, jf=1),  # no new namespaces: allow
            _insn(_RET, deny_eperm),
            _insn(_RET, _RET_ALLOW),
        ]
    return b"".join(program)
