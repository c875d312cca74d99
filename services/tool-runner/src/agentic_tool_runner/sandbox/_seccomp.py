"""Seccomp-BPF programs for the sandbox, built here and installed by the launcher (stage one) and the interpreter (stage two).

A program is plain bytes (an array of `struct sock_filter`); the sandboxed process installs it
with `prctl(PR_SET_SECCOMP)` after `PR_SET_NO_NEW_PRIVS`, which needs no privilege. Allow by
default, refuse with EPERM the calls a sandboxed program has no use for and that widen what it
can reach: sockets, other processes (signals, pidfds, memory, limits), namespaces and mounts,
kernel keyrings, BPF, io_uring.
"""

from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6] (little-endian: low half of args[i] at 16 + 8 i)
_NR, _ARCH = 0, 4
_LD_W_ABS, _LD_IMM, _ST, _LDX_MEM = 0x20, 0x00, 0x02, 0x61
_JEQ, _JGE, _JSET, _JEQ_X = 0x15, 0x35, 0x45, 0x1D
_RET = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_DENY = _RET_ERRNO | errno.EPERM

CLONE_THREAD, CLONE_PARENT = 0x00010000, 0x00008000
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
F_SETOWN, F_SETOWN_EX = 8, 15
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902
PRIO_PROCESS, PRIO_PGRP = 0, 1
IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP = 1, 2

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
            "ioctl": 16, "kill": 62, "fcntl": 72, "rt_sigqueueinfo": 129, "setpriority": 141, "sched_setparam": 142,
            "sched_setscheduler": 144, "tkill": 200, "sched_setaffinity": 203, "tgkill": 234, "ioprio_set": 251,
            "migrate_pages": 256, "get_robust_list": 274, "move_pages": 279, "rt_tgsigqueueinfo": 297,
            "prlimit64": 302, "kcmp": 312, "sched_setattr": 314, "pidfd_send_signal": 424, "pidfd_open": 434,
            "pidfd_getfd": 438, "process_madvise": 440, "process_mrelease": 448,
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
            "fcntl": 25, "ioctl": 29, "ioprio_set": 30, "get_robust_list": 100, "sched_setparam": 118,
            "sched_setscheduler": 119, "sched_setaffinity": 122, "kill": 129, "tkill": 130, "tgkill": 131,
            "rt_sigqueueinfo": 138, "setpriority": 140, "migrate_pages": 238, "move_pages": 239,
            "rt_tgsigqueueinfo": 240, "prlimit64": 261, "kcmp": 272, "sched_setattr": 274, "pidfd_send_signal": 424,
            "pidfd_open": 434, "pidfd_getfd": 438, "process_madvise": 440, "process_mrelease": 448,
        },
    ),
}  # fmt: skip

# Refused for every sandboxed program (the launcher installs this just before it execs the program).
BASE_DENIED = (
    "socket", "syslog", "chroot", "acct", "mount", "umount2",
    "pivot_root", "swapon", "swapoff", "reboot", "init_module", "finit_module", "delete_module", "quotactl",
    "kexec_load", "kexec_file_load", "add_key", "request_key", "keyctl", "unshare", "setns", "perf_event_open",
    "fanotify_init", "name_to_handle_at", "open_by_handle_at", "bpf", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr",
    # Other processes: their memory, their descriptors, handles that outlive a pid, signals through those handles.
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
    "process_madvise", "process_mrelease", "move_pages", "migrate_pages", "get_robust_list",
)  # fmt: skip
# Also refused once the Python interpreter has started: it needs no new programs and no child processes.
NO_PROCESSES_DENIED = ("execve", "execveat", "fork", "vfork")

# Calls that name a process by pid (argument 0), its own pid or 0 meaning itself. Outside a pid namespace
# they may name only the program itself or its own process group (`own_group_only`).
_SIGNALS = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
_PID_FIRST = ("prlimit64", "sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr")
# Where an own-group filter takes the program's pid and the negated id of its process group: the `k` of
# its first and third instructions, which load them into scratch memory. The launcher writes them.
OWN_PID_OFFSETS = (4, 20)
_OWN, _MINUS_GROUP = "own", "-group"  # scratch memory M[0], M[1]


class _Assembler:
    """Classic BPF with named forward jumps (jump offsets are counted from the next instruction)."""

    def __init__(self) -> None:
        self._code: list[tuple[int, int, str | None, str | None]] = []
        self._labels: dict[str, int] = {}
        self._names = 0

    def op(self, code: int, k: int = 0, jt: str | None = None, jf: str | None = None) -> None:
        self._code.append((code, k, jt, jf))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def fresh(self, stem: str) -> str:
        self._names += 1
        return f"{stem}-{self._names}"

    def assemble(self) -> bytes:
        def offset(index: int, target: str | None) -> int:
            if target is None:
                return 0
            distance = self._labels[target] - index - 1
            if not 0 <= distance < 256:
                raise ValueError(f"seccomp jump to {target} out of range")
            return distance

        return b"".join(
            struct.pack("=HBBI", code, offset(index, jt), offset(index, jf), k)
            for index, (code, k, jt, jf) in enumerate(self._code)
        )


def _load_arg(asm: _Assembler, index: int) -> None:
    # The kernel reads a pid (and a fcntl or ioctl command) as a 32-bit int: the low half is what counts.
    asm.op(_LD_W_ABS, 16 + 8 * index)


def _require(asm: _Assembler, index: int, allowed: tuple[int | str, ...]) -> None:
    """Argument `index` must be one of `allowed` (constants, or the program's own ids), else EPERM."""
    passed = asm.fresh("passed")
    _load_arg(asm, index)
    for value in allowed:
        if isinstance(value, int):
            asm.op(_JEQ, value & 0xFFFFFFFF, jt=passed)
        else:
            asm.op(_LDX_MEM, 0 if value == _OWN else 1)
            asm.op(_JEQ_X, jt=passed)
    asm.op(_RET, _DENY)
    asm.label(passed)


def _rule(asm: _Assembler, number: int) -> str:
    """Start the rule of one syscall; what follows must return on every path. Returns the label after it."""
    after = asm.fresh("after")
    asm.op(_JEQ, number, jf=after)
    return after


def _own_group_rules(asm: _Assembler, numbers: dict[str, int]) -> None:
    """Without a pid namespace pids are the host's: a program may name only itself (or 0, itself)
    and its own process group (0 or minus its id), never the runner or another sandbox."""
    its_own: tuple[int | str, ...] = (0, _OWN, _MINUS_GROUP)
    for name in _SIGNALS + _PID_FIRST:
        after = _rule(asm, numbers[name])
        _require(asm, 0, its_own)
        asm.op(_RET, _RET_ALLOW)
        asm.label(after)
    # setpriority(which, who) and ioprio_set(which, who): a process or a group, never "every process of a uid".
    for name, which in (("setpriority", (PRIO_PROCESS, PRIO_PGRP)), ("ioprio_set", (IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP))):
        after = _rule(asm, numbers[name])
        _require(asm, 0, which)
        _require(asm, 1, its_own)
        asm.op(_RET, _RET_ALLOW)
        asm.label(after)
    # SIGIO (any signal, with F_SETSIG) goes to a file's owner: only the program or its group may own one.
    after, set_owner, other_command = _rule(asm, numbers["fcntl"]), asm.fresh("set-owner"), asm.fresh("other")
    _load_arg(asm, 1)
    asm.op(_JEQ, F_SETOWN, jt=set_owner)
    asm.op(_JEQ, F_SETOWN_EX, jf=other_command)  # its owner is in memory, which a filter cannot read
    asm.op(_RET, _DENY)
    asm.label(set_owner)
    _require(asm, 2, its_own)
    asm.label(other_command)
    asm.op(_RET, _RET_ALLOW)
    asm.label(after)
    after, refuse = _rule(asm, numbers["ioctl"]), asm.fresh("refuse")
    _load_arg(asm, 1)
    asm.op(_JEQ, FIOSETOWN, jt=refuse)  # the owner is a pointer here too
    asm.op(_JEQ, SIOCSPGRP, jt=refuse)
    asm.op(_RET, _RET_ALLOW)
    asm.label(refuse)
    asm.op(_RET, _DENY)
    asm.label(after)


def supported() -> bool:
    return platform.machine() in _ARCHES


def build_filter(*, no_processes: bool = False, own_group_only: bool = False) -> bytes | None:
    """The filter for this machine's architecture, or None where we have no syscall table.

    `no_processes` also refuses exec and any clone that is not a thread, so a program cannot
    start another program or fork (a fork bomb gets EPERM from its first fork).
    `own_group_only` (for a program outside a pid namespace) lets signals and the other calls that
    name a process by pid reach only the program itself and its own process group; the program's
    pid and group id are written in when it starts (`for_process`, at `OWN_PID_OFFSETS`).
    """
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    asm = _Assembler()
    if own_group_only:
        asm.op(_LD_IMM, 0)  # the program's pid
        asm.op(_ST, 0)
        asm.op(_LD_IMM, 0)  # minus the id of its process group
        asm.op(_ST, 1)
    asm.op(_LD_W_ABS, _ARCH)
    asm.op(_JEQ, audit_arch, jt="native")
    asm.op(_RET, _RET_KILL_PROCESS)  # a foreign ABI (e.g. 32-bit calls on x86_64) would bypass the table
    asm.label("native")
    asm.op(_LD_W_ABS, _NR)
    if audit_arch == 0xC000003E:
        asm.op(_JGE, 0x40000000, jt="deny")  # the x32 ABI
    denied = list(BASE_DENIED) + (list(NO_PROCESSES_DENIED) if no_processes else [])
    for name in denied:
        if name in numbers:
            asm.op(_JEQ, numbers[name], jt="deny")
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc fall back to clone.
    asm.op(_JEQ, numbers["clone3"], jt="enosys", jf="checked")
    asm.label("deny")
    asm.op(_RET, _DENY)
    asm.label("enosys")
    asm.op(_RET, _RET_ERRNO | errno.ENOSYS)
    asm.label("checked")
    if own_group_only:
        _own_group_rules(asm, numbers)
    # clone: refuse new namespaces and children of its parent (outside a pid namespace, the runner's),
    # and (no_processes) anything that is not a thread.
    after, refuse = _rule(asm, numbers["clone"]), asm.fresh("refuse")
    _load_arg(asm, 0)
    asm.op(_JSET, CLONE_NAMESPACES | CLONE_PARENT, jt=refuse)
    if no_processes:
        asm.op(_JSET, CLONE_THREAD, jf=refuse)
    asm.op(_RET, _RET_ALLOW)
    asm.label(refuse)
    asm.op(_RET, _DENY)
    asm.label(after)
    asm.op(_RET, _RET_ALLOW)
    return asm.assemble()


def for_process(program: bytes, pid: int, group: int) -> bytes:
    """An own-group filter for the process `pid` in process group `group` (what the launcher does)."""
    patched = bytearray(program)
    struct.pack_into("=I", patched, OWN_PID_OFFSETS[0], pid & 0xFFFFFFFF)
    struct.pack_into("=I", patched, OWN_PID_OFFSETS[1], -group & 0xFFFFFFFF)
    return bytes(patched)
