"""Stage one of a sandboxed run: isolate this process, drop privileges, then exec the program.

Started by `Sandbox` as `python -I -S -B _launcher.py <plan fd>` with an empty environment, so
it uses the standard library only and never imports the service. It applies each layer the plan
asks for and reports what it applied, as JSON lines, on the control pipe (`control_fd`).
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import resource
import signal
import struct
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 1, 22, 38
SECCOMP_MODE_FILTER = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SYS_LANDLOCK_CREATE, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT = 444, 445, 446

# Landlock filesystem rights, by the ABI version that introduced them.
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
LL_DIR_CHANGES = sum(1 << bit for bit in range(4, 13))  # remove/make dir, file, sock, fifo, dev, symlink
LL_REFER, LL_TRUNCATE, LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
LL_NET_BIND_TCP, LL_NET_CONNECT_TCP = 1 << 0, 1 << 1
LL_SCOPE_ABSTRACT_UNIX, LL_SCOPE_SIGNAL = 1 << 0, 1 << 1
LL_FILE_RIGHTS = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV

# Inside a user namespace we keep our uid, or take 1000 if we are a root without capabilities:
# never 0, so that exec drops every capability the namespace gave us.
OUTER_UID, OUTER_GID = os.geteuid(), os.getegid()
INNER_UID = OUTER_UID or 1000

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.unshare.argtypes = [ctypes.c_int]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
libc.syscall.restype = ctypes.c_long


class SetupError(Exception):
    """A layer the plan asked for could not be applied: the program must not run."""


def check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(code)}")
    return result


def fs(path: str | None) -> bytes | None:
    return None if path is None else os.fsencode(path)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    check(libc.mount(fs(source), fs(target), fs(fstype), flags, fs(data)), f"mount {target}")


def emit(control_fd: int, event: dict[str, object]) -> None:
    try:
        os.write(control_fd, json.dumps(event).encode() + b"\n")
    except OSError:
        pass


def enter_namespaces(plan: dict[str, Any]) -> str | None:
    """Unshare network, mount, pid, ipc and uts namespaces: directly as a privileged user,
    otherwise inside a new user namespace where the kernel allows one. Returns the mode or None."""
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    if libc.unshare(flags) == 0:
        return "privileged"
    if libc.unshare(flags | CLONE_NEWUSER) != 0:
        return None
    with open("/proc/self/setgroups", "w") as handle:
        handle.write("deny")
    with open("/proc/self/uid_map", "w") as handle:
        handle.write(f"{INNER_UID} {OUTER_UID} 1")
    with open("/proc/self/gid_map", "w") as handle:
        handle.write(f"{INNER_UID} {OUTER_GID} 1")
    return "user"


def bind_readonly(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    # A remount must keep the flags the source mount has locked (user namespaces check this).
    current = os.statvfs(target).f_flag
    keep = (MS_NOEXEC if current & os.ST_NOEXEC else 0) | (MS_NOATIME if current & os.ST_NOATIME else 0)
    keep |= (MS_NODIRATIME if current & os.ST_NODIRATIME else 0) | (MS_RELATIME if current & 4096 else 0)
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | keep)


def make_mount_point(path: str, like: str) -> None:
    if os.path.isdir(like):
        os.makedirs(path, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


def build_root(plan: dict[str, Any], owner: int, layers: list[str]) -> None:
    """Pivot into a fresh root that holds only what the program needs: read-only system and
    interpreter directories, a few devices, a private size-limited tmpfs at /work, its own /proc."""
    new_root = plan["new_root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for path in plan["readonly_paths"]:
        target = new_root + path
        if os.path.islink(path):
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            os.symlink(os.readlink(path), target)
            continue
        make_mount_point(target, path)
        bind_readonly(path, target)
    for path in plan["masked_paths"]:
        if os.path.isdir(new_root + path):
            mount("tmpfs", new_root + path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0755")
    for device in plan["devices"]:
        make_mount_point(new_root + device, device)
        mount(device, new_root + device, None, MS_BIND)
    work = new_root + "/work"
    os.makedirs(work, mode=0o755)
    mount(
        "tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={plan['disk_bytes']},mode=0700,uid={owner},gid={owner}"
    )
    os.makedirs(new_root + "/proc", mode=0o555)
    for options in ("subset=pid", None):  # subset=pid (Linux 5.8+): processes only, no /proc/sys or kernel tables
        try:
            mount("proc", new_root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, options)
            layers.append("proc")
            break
        except SetupError:
            pass  # refused under some container runtimes; nothing the program needs
    os.chdir(new_root)
    check(libc.syscall(SYS_PIVOT_ROOT[platform.machine()], b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "detach old root")
    os.chdir("/")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def landlock_abi() -> int:
    abi: int = libc.syscall(SYS_LANDLOCK_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(0, abi)


def apply_landlock(rules: dict[str, list[str]], abi: int, layers: list[str]) -> None:
    """Restrict this process (and what it execs) to the plan's paths: read, execute, write;
    with ABI 4+ no TCP bind or connect; with ABI 6+ no signals or abstract sockets outside."""
    handled_fs = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_READ_DIR | LL_DIR_CHANGES
    handled_fs |= (LL_REFER if abi >= 2 else 0) | (LL_TRUNCATE if abi >= 3 else 0) | (LL_IOCTL_DEV if abi >= 5 else 0)
    handled_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP if abi >= 4 else 0
    scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)[: 24 if abi >= 6 else 16 if abi >= 4 else 8]
    ruleset = check(libc.syscall(SYS_LANDLOCK_CREATE, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0)), "landlock ruleset")
    read = LL_READ_FILE | LL_READ_DIR
    grants = [(path, read) for path in rules["read"]]
    grants += [(path, read | LL_EXECUTE) for path in rules["execute"]]
    grants += [(path, handled_fs & ~LL_EXECUTE) for path in rules["write"]]
    for path, access in grants:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # absent in this root: nothing to grant
        try:
            if not os.path.isdir(path):
                access &= LL_FILE_RIGHTS
            access &= handled_fs
            rule = struct.pack("=Qi", access, fd)
            check(
                libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, ctypes.c_int(1), rule, ctypes.c_uint32(0)), f"landlock rule {path}"
            )
        finally:
            os.close(fd)
    check(libc.syscall(SYS_LANDLOCK_RESTRICT, ruleset, ctypes.c_uint32(0)), "landlock restrict")
    os.close(ruleset)
    layers.append(f"landlock-v{abi}")
    if handled_net:
        layers.append("landlock-net")


def seccomp_program(seccomp: dict[str, Any], pid_namespace: bool) -> bytes:
    """In its own pid namespace a program can name only processes of its sandbox; on the host's pids
    the filter lets it signal only itself and its process group: this process's pid (the program
    keeps it across exec) and group, written where the plan says."""
    if pid_namespace:
        return bytes.fromhex(seccomp["pid_namespace"])
    program = bytearray.fromhex(seccomp["own_group"])
    own_at, minus_group_at = seccomp["own_pid_offsets"]
    struct.pack_into("=I", program, own_at, os.getpid() & 0xFFFFFFFF)
    struct.pack_into("=I", program, minus_group_at, -os.getpgid(0) & 0xFFFFFFFF)
    return bytes(program)


def install_seccomp(program: bytes) -> None:
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("=HxxxxxxQ", len(program) // 8, ctypes.addressof(filters)), 16)
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "seccomp")


def set_limits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value if name != "RLIMIT_CPU" else value + 1))


def exit_like(status: int, control_fd: int) -> None:
    if os.WIFSIGNALED(status):
        emit(control_fd, {"event": "exit", "signal": os.WTERMSIG(status)})
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


def supervise(child: int, control_fd: int) -> None:
    """The parent outside the new pid namespace: wait for its pid 1 and exit as it did."""
    _, status = os.waitpid(child, 0)
    exit_like(status, control_fd)


def init(program: int, control_fd: int) -> None:
    """Pid 1 of the sandbox: reap every orphan until the program exits, then exit as it did,
    which makes the kernel kill whatever is left in the namespace. (The program is not pid 1
    itself because pid 1 ignores signals it has no handler for, SIGXCPU included.)"""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == program:
            exit_like(status, control_fd)


def require_isolation(layers: list[str]) -> None:
    """Refuse to run unless the kernel both cuts the network and confines the filesystem."""
    network_cut = "net" in layers or "seccomp" in layers
    files_confined = "mount" in layers or any(layer.startswith("landlock-v") for layer in layers)
    if not (network_cut and files_confined):
        missing = [what for what, ok in (("network", network_cut), ("filesystem", files_confined)) if not ok]
        raise SetupError(f"no kernel isolation of the {' and '.join(missing)} is available here")


def main() -> None:
    plan_fd = int(sys.argv[1])
    with os.fdopen(plan_fd, "rb") as handle:  # a pipe, not argv: the program could read our argv in /proc
        plan = json.loads(handle.read())
    control_fd = plan["control_fd"]
    layers: list[str] = []
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        mode = enter_namespaces(plan) if plan["namespaces"] else None
        if mode is not None:
            layers += [f"namespaces-{mode}", "net", "mount", "pid", "ipc", "uts"]
            child = os.fork()
            if child:
                supervise(child, control_fd)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            libc.sethostname(b"sandbox", 7)
            drop_uid = mode == "privileged" and plan["uid"] is not None
            build_root(plan, plan["uid"] if drop_uid else INNER_UID if mode == "user" else OUTER_UID, layers)
            program = os.fork()
            if program:
                init(program, control_fd)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            # Its own process group, so that kill(0) reaches the program and its descendants, not this
            # launcher (in a user namespace it would have the program's uid). The runner's kill still
            # ends it all: pid 1 dies with the launcher, and the namespace with pid 1.
            os.setpgid(0, 0)
            workdir = "/work"
        else:
            drop_uid = plan["uid"] is not None
            workdir = plan["workdir"]
        os.chdir(workdir)
        limits = dict(plan["limits"])
        if drop_uid:
            os.setgroups([])
            os.setresgid(plan["gid"], plan["gid"], plan["gid"])
            os.setresuid(plan["uid"], plan["uid"], plan["uid"])
            layers.append("uid")
        else:
            limits.pop("RLIMIT_NPROC", None)  # counted per uid: it would count the runner's own threads
        set_limits(limits)
        check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # a credential change clears it
        landlock = plan["landlock"]
        if landlock is not None:
            abi = landlock_abi()
            if abi >= 1:
                # In our own root everything visible was chosen to be; on the host only the plan's paths.
                read = ["/"] if mode is not None else landlock["read"]
                apply_landlock(dict(landlock, read=read, write=[workdir, *landlock["write"]]), abi, layers)
        if plan["seccomp"]:
            layers.append("seccomp")
        if plan["require_isolation"]:
            require_isolation(layers)
        env = dict(plan["env"], HOME=workdir, TMPDIR=workdir)
        if not plan["keep_control_fd"]:
            os.set_inheritable(control_fd, False)
        if plan["seccomp"]:
            install_seccomp(seccomp_program(plan["seccomp"], pid_namespace=mode is not None))
        emit(control_fd, {"event": "ready", "layers": layers, "workdir": workdir})
        os.execve(plan["executable"], plan["argv"], env)
    except SetupError as exc:
        emit(control_fd, {"event": "setup_error", "message": str(exc)})
        os._exit(125)
    except OSError as exc:
        emit(control_fd, {"event": "setup_error", "message": f"{exc.strerror}: {exc.filename or ''}".rstrip(": ")})
        os._exit(125)


if __name__ == "__main__":
    main()
