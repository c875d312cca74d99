"""Stage two of a code_interpreter run: execute the model's Python code inside the sandbox, REPL-style.

Run as `python -I [-S] -B -u -c <this source> <control fd> <seccomp hex or -> <audit 1|0> <max repr>`
(its file is not visible inside the sandbox). Reads the code from stdin, forbids new processes with
a seccomp filter, installs an audit hook as a second, in-process layer, runs the code, and reports
the repr of a trailing expression on the control pipe.
"""

import ast
import json
import linecache
import os
import sys
import traceback
import types

# Annotations here are quoted: this runs on the operator's interpreter, and a `from __future__`
# import would also change how the model's code compiles (compile() inherits the flags).
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

CODE_FILENAME = "<code>"

DENIED_EVENTS = frozenset({
    "subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.exec", "os.spawn", "os.posix_spawn",
    "os.startfile", "marshal.load", "code.__new__", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "resource.setrlimit", "resource.prlimit", "cpython.PyInterpreterState_New",
    "urllib.Request", "webbrowser.open",
})  # fmt: skip
DENIED_PREFIXES = ("socket.", "ctypes.", "http.client.", "ftplib.", "smtplib.", "poplib.", "imaplib.", "nntplib.", "telnetlib.")
DENIED_IMPORTS = frozenset({"ctypes", "_ctypes", "_xxsubinterpreters", "_xxinterpchannels", "_testcapi", "_testinternalcapi"})
PATH_WRITE_EVENTS = frozenset({
    "os.mkdir", "os.remove", "os.rmdir", "os.chmod", "os.chown", "os.utime", "os.truncate", "os.setxattr",
    "os.removexattr", "os.mkfifo", "os.mknod", "shutil.chown", "os.rename", "os.link", "os.symlink",
})  # fmt: skip
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


def install_seccomp(program: bytes) -> None:
    """No exec, no fork from here on: the kernel refuses them, whatever the code does."""
    import ctypes
    import struct

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("=HxxxxxxQ", len(program) // 8, ctypes.addressof(filters)), 16)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.addressof(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")
    for name in [name for name in sys.modules if name == "_ctypes" or name.split(".")[0] == "ctypes"]:
        del sys.modules[name]


def install_audit_hook(workdir: str) -> None:
    """Refuse, inside Python, what the kernel layers also refuse: a second line, not the only one.

    Everything the hook needs is bound here, immutable, and reachable only from the hook."""
    read_roots = tuple(
        sorted({os.path.realpath(path) for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path) if path})
    ) + ("/usr/share/zoneinfo", "/etc/localtime", workdir, *DEVICES)
    write_roots = (workdir,) + DEVICES
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    own_pid, own_group = os.getpid(), os.getpgid(0)
    # 0 is itself (or its group); outside a pid namespace its group's id is its pid (a new session each run).
    own_kill_targets = frozenset({0, own_pid, -own_group})
    own_groups = frozenset({0, own_group})

    def inside(path: str, roots: "tuple[str, ...]") -> bool:
        return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)

    def check_path(event: str, path: object, roots: "tuple[str, ...]", dir_fd: object = None) -> None:
        if path is None or isinstance(path, int):
            return  # an open descriptor (or the cwd): its own open was checked
        name = os.fsdecode(path)  # type: ignore[arg-type]
        if dir_fd is not None and not os.path.isabs(name) and ".." not in name.split("/"):
            return  # relative to a directory descriptor that was itself opened through this hook
        real = os.path.realpath(name)
        if not inside(real, roots):
            where = "outside the working directory" if roots is write_roots else "not readable in the sandbox"
            raise PermissionError(f"sandbox: {event} {name!r} refused: {where}")

    def hook(event: str, args: "tuple[Any, ...]") -> None:
        if event == "open":
            path, _mode, flags = args
            check_path("open", path, write_roots if flags and flags & write_flags else read_roots)
        elif event in ("os.listdir", "os.scandir"):
            check_path(event, args[0], read_roots)
        elif event in PATH_WRITE_EVENTS:
            if event in ("os.rename", "os.link"):
                check_path(event, args[0], write_roots, args[2])
                check_path(event, args[1], write_roots, args[3])
            elif event == "os.symlink":
                check_path(event, args[1], write_roots, args[2])
            else:
                check_path(event, args[0], write_roots, args[-1] if len(args) > 2 else None)
        elif event == "marshal.loads":
            # Crafted marshal data can corrupt the interpreter; only the import system may load it.
            if sys._getframe(1).f_code.co_filename != "<frozen importlib._bootstrap_external>":
                raise PermissionError("sandbox: marshal.loads is not allowed")
        elif event == "import":
            if args[0] in DENIED_IMPORTS:
                raise PermissionError(f"sandbox: importing {args[0]} is not allowed")
        elif event in ("os.kill", "os.killpg"):
            if args[0] not in (own_kill_targets if event == "os.kill" else own_groups):
                raise PermissionError("sandbox: signalling other processes is not allowed")
        elif event in DENIED_EVENTS or event.startswith(DENIED_PREFIXES):
            if event.startswith(("socket.", "urllib.", "http.", "ftplib.", "smtplib.", "poplib.", "imaplib.", "nntp", "telnet")):
                raise PermissionError(f"sandbox: network access is disabled ({event})")
            raise PermissionError(f"sandbox: {event} is not allowed")

    sys.addaudithook(hook)
    withdraw_process_handles()


def withdraw_process_handles() -> None:
    """pidfds reach any process by pid and raise no audit event: replace the functions that make and
    use them (in the C modules too, so a reload brings them back refused). Seccomp refuses the calls."""
    import importlib
    import posix
    import signal

    c_signal = importlib.import_module("_signal")  # signal's C module (no stub)

    def refused(name: str) -> "Any":
        def refuse(*args: object, **kwargs: object) -> None:
            raise PermissionError(f"sandbox: {name} is not allowed (it reaches other processes)")

        return refuse

    for module, name in ((os, "pidfd_open"), (posix, "pidfd_open"), (signal, "pidfd_send_signal"), (c_signal, "pidfd_send_signal")):
        if hasattr(module, name):
            setattr(module, name, refused(f"{module.__name__}.{name}"))


def emit(control_fd: int, event: "dict[str, object]") -> None:
    try:
        os.write(control_fd, json.dumps(event).encode() + b"\n")
    except OSError:
        pass


def print_exception(exc: BaseException) -> None:
    """The traceback as the model wrote it: without this file's frames."""
    report = traceback.TracebackException.from_exception(exc)
    report.stack = traceback.StackSummary.from_list([frame for frame in report.stack if frame.filename != "<string>"])
    sys.stderr.write("".join(report.format()))


def run(source: str, control_fd: int, max_repr: int) -> int:
    linecache.cache[CODE_FILENAME] = (len(source), None, source.splitlines(True), CODE_FILENAME)
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = module
    try:
        tree = ast.parse(source, CODE_FILENAME, "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, CODE_FILENAME, "exec"), module.__dict__)
        if isinstance(last, ast.Expr):
            value = eval(compile(ast.Expression(last.value), CODE_FILENAME, "eval"), module.__dict__)
            if value is not None:
                text = repr(value)
                if len(text) > max_repr:
                    text = text[:max_repr] + f"... [repr truncated: {len(text)} characters]"
                emit(control_fd, {"event": "result", "repr": text})
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: B036 - the model's code may raise anything; report it as Python would
        print_exception(exc)
        return 1
    return 0


def main() -> None:
    control_fd, seccomp_hex, audit, max_repr = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
    source = sys.stdin.buffer.read().decode("utf-8", "replace")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    if seccomp_hex != "-":
        install_seccomp(bytes.fromhex(seccomp_hex))
    if audit:
        install_audit_hook(os.getcwd())
    status = run(source, control_fd, max_repr)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(status)


if __name__ == "__main__":
    main()
