"""Run one untrusted program per call: a fresh process group in its own sandbox, with limits.

The runner side: it prepares a per-call directory, starts the launcher (`_launcher.py`) without
blocking the event loop, feeds stdin, caps output, enforces the wall-clock limit by killing the
whole process group, and cleans up whatever happens (including cancellation).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentic_tool_runner.sandbox import _paths, _seccomp
from agentic_tool_runner.sandbox._config import SandboxConfig

logger = logging.getLogger(__name__)

LAUNCHER = Path(__file__).with_name("_launcher.py")
INTERPRETER_SOURCE = Path(__file__).with_name("_interpreter.py").read_text()
SETUP_FAILED = 125
CONTROL_CAP = 1024 * 1024
PLAN_CAP = 60 * 1024
KILL_GRACE_SECONDS = 2.0


class SandboxError(Exception):
    """The sandbox could not be set up, so the program did not run (not the program's fault)."""

    def __init__(self, message: str, *, before_start: bool = False) -> None:
        super().__init__(message)
        self.before_start = before_start


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """What a program did. `stopped` says which runner-enforced limit ended it, if any."""

    exit_code: int | None  # None when a signal ended it
    signal: int | None
    stdout: str
    stderr: str
    result: str | None  # repr of a trailing expression (Python runs only)
    stopped: str | None  # "wall_time" | "output" | "cpu_time" | None
    output_truncated: bool
    layers: tuple[str, ...]
    duration_seconds: float


# CAP_CHOWN and CAP_FOWNER (the runner gives a sandbox its directory and removes what it left there),
# CAP_SETGID and CAP_SETUID (the launcher switches to the slot's uid).
_UID_CAPABILITIES = (1 << 0) | (1 << 3) | (1 << 6) | (1 << 7)
_EXEC_CAPABILITIES = (1 << 6) | (1 << 7)


def can_switch_uids() -> bool:
    """Whether a sandbox can run as its slot's own uid: the runner holds CAP_CHOWN, CAP_FOWNER,
    CAP_SETUID and CAP_SETGID, and the launcher it execs keeps the last two (root does; anyone else
    only through ambient capabilities)."""
    capabilities: dict[str, int] = {}
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("CapEff", "CapAmb"):
                capabilities[name] = int(value.strip(), 16)
    effective, ambient = capabilities.get("CapEff", 0), capabilities.get("CapAmb", 0)
    kept_across_exec = os.geteuid() == 0 or ambient & _EXEC_CAPABILITIES == _EXEC_CAPABILITIES
    return effective & _UID_CAPABILITIES == _UID_CAPABILITIES and kept_across_exec


class Sandbox:
    """One per runner: holds the concurrency slots (each with its own uid where the runner can switch uids)."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.python = os.path.realpath(config.python) if config.python else _paths.base_python()
        self._launcher_python = _paths.base_python()
        self._visible = _paths.visible_paths(self.python, config.readonly_paths)
        custom = self.python != _paths.base_python()
        self._masked = _paths.masked_paths(self._visible, _paths.interpreter_prefixes(self.python) if custom else ())
        self._seccomp = _seccomp_plan() if config.seccomp else None
        self._seccomp_python = _seccomp.build_filter(no_processes=True) if config.seccomp else None
        self._drop_uid = config.drop_uid and can_switch_uids()
        if config.drop_uid and not self._drop_uid:
            logger.warning(
                "sandbox: every program runs as the runner's uid %d: not root, or without CAP_SETUID, CAP_SETGID, "
                "CAP_CHOWN and CAP_FOWNER (ambient when not root), so concurrent sandboxes share it; signals stay within a sandbox "
                "through its pid namespace where there is one, else seccomp (its own process group only); "
                "RLIMIT_NPROC is not set (docs/sandbox.md)",
                os.geteuid(),
            )
        self._namespaces = config.namespaces
        self._namespaces_verified = False
        self._layers_logged = False
        self._commands: dict[str, str | None] = {}
        self._slots: asyncio.Queue[int] = asyncio.Queue()
        for slot in range(config.max_concurrent):
            self._slots.put_nowait(slot)
        self._work_root: Path | None = None

    @property
    def visible_paths(self) -> tuple[str, ...]:
        return self._visible

    def resolve_command(self, name: str) -> str | None:
        """Where a bare command name lives, if the sandbox can see it (cached: callers pass allowlisted names)."""
        if name not in self._commands:
            self._commands[name] = _paths.resolve_command(name, self._visible)
        return self._commands[name]

    async def probe(self) -> tuple[str, ...]:
        """The isolation layers a program gets on this machine (runs an empty program)."""
        return (await self.run_python("pass")).layers

    async def run_python(self, code: str, *, audit_hook: bool = True, wall_seconds: float | None = None) -> SandboxResult:
        """Run Python source REPL-style: the repr of a trailing expression comes back as `result`."""
        site = ["-S"] if self.python == _paths.base_python() else []
        seccomp = self._seccomp_python.hex() if self._seccomp_python else "-"
        argv = [self.python, "-I", *site, "-B", "-u", "-X", "utf8", "-c", INTERPRETER_SOURCE]
        argv += ["{control_fd}", seccomp, "1" if audit_hook else "0", str(self.config.limits.result_chars)]
        return await self._execute(self.python, argv, code.encode(), [self.python], True, wall_seconds)

    async def run_command(
        self, executable: str, argv: Sequence[str], *, executables: Iterable[str] = (), wall_seconds: float | None = None
    ) -> SandboxResult:
        """Exec one program (already resolved and allowed by the caller); `executables` are the
        other programs it may start (where Landlock is available to enforce that)."""
        return await self._execute(executable, list(argv), None, [executable, *executables], False, wall_seconds)

    async def close(self) -> None:
        """Remove the work root once the last running program ended (code_interpreter and shell share one
        sandbox and close it each; a program still running keeps its call directory)."""
        slots = [await self._slots.get() for _ in range(self.config.max_concurrent)]
        try:
            work_root, self._work_root = self._work_root, None
            if work_root is not None:
                await asyncio.to_thread(shutil.rmtree, work_root, True)
        finally:
            for slot in slots:
                self._slots.put_nowait(slot)

    async def _execute(
        self, executable: str, argv: list[str], stdin: bytes | None, executables: list[str], python: bool, wall: float | None
    ) -> SandboxResult:
        slot = await self._slots.get()
        try:
            try:
                return await self._execute_in_slot(slot, executable, argv, stdin, executables, python, wall)
            except SandboxError as exc:
                if not (exc.before_start and self._namespaces) or self._namespaces_verified:
                    raise
                # Namespaces were granted but the kernel refused a mount: run without them from now on.
                logger.warning("sandbox: namespaces unusable here, falling back to Landlock/seccomp", exc_info=True)
                self._namespaces = False
                return await self._execute_in_slot(slot, executable, argv, stdin, executables, python, wall)
        finally:
            self._slots.put_nowait(slot)

    async def _execute_in_slot(
        self, slot: int, executable: str, argv: list[str], stdin: bytes | None, executables: list[str], python: bool,
        wall: float | None,
    ) -> SandboxResult:  # fmt: skip
        limits = self.config.limits
        uid = self.config.uid_base + slot if self._drop_uid else None
        plan_read, plan_write = os.pipe()
        control_read, control_write = os.pipe()
        process: asyncio.subprocess.Process | None = None
        call_dir: str | None = None
        started = time.monotonic()
        try:
            call_dir = await asyncio.to_thread(self._make_call_dir, uid)
            plan = json.dumps(self._plan(call_dir, uid, executable, argv, executables, python, control_write)).encode()
            if len(plan) > PLAN_CAP:
                raise SandboxError("the sandbox plan is too large (too many read-only paths?)")
            # Through a pipe, not argv: the program could read our argv in /proc. It fits the pipe's buffer.
            os.write(plan_write, plan)
            os.close(plan_write)
            plan_write = -1
            process = await asyncio.create_subprocess_exec(
                self._launcher_python, "-I", "-S", "-B", str(LAUNCHER), str(plan_read),
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env={}, cwd=call_dir, start_new_session=True, pass_fds=(control_write, plan_read),
            )  # fmt: skip
            for fd in (control_write, plan_read):
                os.close(fd)
            control_write = plan_read = -1
            stdout, stderr, truncated, stopped = await self._communicate(process, stdin, wall or limits.wall_seconds)
            events = _read_events(control_read)
        finally:
            for fd in (plan_read, plan_write, control_read, control_write):
                if fd >= 0:
                    os.close(fd)
            if process is not None and process.returncode is None:
                _kill_group(process)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(process.wait(), KILL_GRACE_SECONDS)
            if process is not None:
                # Its pipes may outlive it (a descendant that escaped the group holds them) and it may outlive the
                # grace (a machine busy with its fork bomb): closed here, not by the garbage collector.
                process._transport.close()  # type: ignore[attr-defined]  # Process has no public close
            if call_dir is not None:
                await asyncio.to_thread(_remove_tree, call_dir)
        return self._result(process, events, stdout, stderr, truncated, stopped, time.monotonic() - started)

    def _plan(
        self, call_dir: str, uid: int | None, executable: str, argv: list[str], executables: list[str], python: bool,
        control_fd: int,
    ) -> dict[str, object]:  # fmt: skip
        limits = self.config.limits
        return {
            "control_fd": control_fd,
            "namespaces": self._namespaces,
            "require_isolation": self.config.require_isolation,
            "uid": uid,
            "gid": uid,
            "workdir": os.path.join(call_dir, "work"),
            "new_root": os.path.join(call_dir, "root"),
            "readonly_paths": list(self._visible),
            "masked_paths": list(self._masked),
            "devices": list(_paths.DEVICES),
            "disk_bytes": limits.disk_bytes,
            "limits": limits.rlimits(),
            "landlock": {
                "read": list(self._visible),
                "execute": list(_paths.execute_grants(tuple(executables))),
                "write": list(_paths.DEVICES),
            }
            if self.config.landlock
            else None,
            "seccomp": self._seccomp,
            "env": dict(_paths.SANDBOX_ENV),
            "executable": executable,
            "argv": [str(control_fd) if arg == "{control_fd}" else arg for arg in argv],
            "keep_control_fd": python,
        }

    @property
    def work_root(self) -> Path | None:
        """The folder of this sandbox's call directories (made with the first call, removed at close)."""
        return self._work_root

    def _make_call_dir(self, uid: int | None) -> str:
        if self._work_root is None:
            base = Path(self.config.work_root or tempfile.gettempdir())
            base.mkdir(parents=True, exist_ok=True)
            # One root per sandbox, not per process: a second sandbox of the process closing removes only its own.
            self._work_root = Path(tempfile.mkdtemp(prefix=f"agentic-sandbox-{os.getpid()}-", dir=base))
            os.chmod(self._work_root, 0o711)
        call_dir = tempfile.mkdtemp(prefix="call-", dir=self._work_root)
        os.chmod(call_dir, 0o711)  # the sandbox's uid may pass through to its own directory, not list it
        work = os.path.join(call_dir, "work")
        os.mkdir(work, 0o700)
        os.mkdir(os.path.join(call_dir, "root"), 0o700)
        if uid is not None:
            os.chown(work, uid, uid)
        return call_dir

    async def _communicate(
        self, process: asyncio.subprocess.Process, stdin: bytes | None, wall: float
    ) -> tuple[bytes, bytes, bool, str | None]:
        """Feed stdin, collect output up to the cap, stop the program at the cap or the deadline."""
        budget = self.config.limits.output_bytes
        buffers = (bytearray(), bytearray())
        total = 0
        over_cap = asyncio.Event()

        async def pump(stream: asyncio.StreamReader | None, sink: bytearray) -> None:
            nonlocal total
            while stream is not None and (chunk := await stream.read(65536)):
                room = budget - total
                sink += chunk[: max(room, 0)]
                total += len(chunk)
                if total > budget:
                    over_cap.set()
                    return

        async def feed() -> None:
            if process.stdin is None or stdin is None:
                return
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(stdin)
                await process.stdin.drain()
            process.stdin.close()

        pumps = asyncio.gather(pump(process.stdout, buffers[0]), pump(process.stderr, buffers[1]), feed())
        exited = asyncio.ensure_future(process.wait())
        capped = asyncio.ensure_future(over_cap.wait())
        stopped: str | None = None
        try:
            done, _ = await asyncio.wait({exited, capped}, timeout=wall, return_when=asyncio.FIRST_COMPLETED)
            if exited not in done:
                stopped = "output" if over_cap.is_set() else "wall_time"
                _kill_group(process)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(exited), KILL_GRACE_SECONDS)
            # Output still in flight after exit; a descendant that escaped the group cannot hold us.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(pumps), 1.0)
        finally:
            capped.cancel()
            exited.cancel()  # still waiting when the kill outlasted its grace: the caller waits again
            if not pumps.done():
                pumps.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pumps
        truncated = total > budget
        return bytes(buffers[0]), bytes(buffers[1]), truncated, stopped

    def _result(
        self, process: asyncio.subprocess.Process | None, events: list[dict[str, object]], stdout: bytes, stderr: bytes,
        truncated: bool, stopped: str | None, duration: float,
    ) -> SandboxResult:  # fmt: skip
        returncode = process.returncode if process is not None else None
        # Only what precedes "ready" comes from the launcher alone: the program can write on the pipe too.
        ready: dict[str, object] | None = None
        result: object = None
        signal_number: int | None = -returncode if returncode is not None and returncode < 0 else None
        for event in events:
            kind = event.get("event")
            if ready is None and kind == "setup_error":
                raise SandboxError(str(event.get("message", "sandbox setup failed")), before_start=True)
            if ready is None:
                ready = event if kind == "ready" else None
            elif kind == "setup_error":
                raise SandboxError(f"the program could not be started: {event.get('message')}")
            elif kind == "result":
                result = event.get("repr")
            elif kind == "exit" and isinstance(event.get("signal"), int):
                signal_number = int(event["signal"])  # type: ignore[call-overload]
        layers = ready.get("layers") if ready is not None else None
        if ready is None:
            raise SandboxError(
                f"the sandbox launcher exited before starting the program (status {returncode})", before_start=True
            )
        if not self._layers_logged:
            self._layers_logged = True
            logger.info(
                "sandbox: isolation layers in use: %s", ", ".join(map(str, layers)) if isinstance(layers, list) else "none"
            )
        if self._namespaces:
            self._namespaces_verified = True
        if stopped is None and signal_number == signal.SIGXCPU:
            stopped = "cpu_time"
        return SandboxResult(
            exit_code=None if signal_number is not None else returncode,
            signal=signal_number,
            stdout=stdout.decode("utf-8", "replace"),
            stderr=stderr.decode("utf-8", "replace"),
            result=str(result) if result is not None else None,
            stopped=stopped,
            output_truncated=truncated,
            layers=tuple(str(layer) for layer in layers) if isinstance(layers, list) else (),
            duration_seconds=duration,
        )


def _seccomp_plan() -> dict[str, object] | None:
    """The launcher's two filters: one for a program in its own pid namespace, one that confines a
    program on the host's pids to its own process group (its ids are written in by the launcher)."""
    in_namespace, own_group = _seccomp.build_filter(), _seccomp.build_filter(own_group_only=True)
    if in_namespace is None or own_group is None:
        return None
    return {"pid_namespace": in_namespace.hex(), "own_group": own_group.hex(), "own_pid_offsets": list(_seccomp.OWN_PID_OFFSETS)}


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the group; and the launcher itself, in case the program left the group (setsid).
    With a pid namespace, its pid 1 dying takes every descendant with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(process.pid, signal.SIGKILL)


def _read_events(fd: int) -> list[dict[str, object]]:
    """The launcher's and interpreter's JSON lines; read after exit, so this never blocks long."""
    os.set_blocking(fd, False)
    data = bytearray()
    with contextlib.suppress(BlockingIOError):
        while len(data) < CONTROL_CAP and (chunk := os.read(fd, 65536)):
            data += chunk
    events = []
    for line in bytes(data[:CONTROL_CAP]).splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    return events


def _remove_tree(path: str) -> None:
    def make_writable(function: object, failed: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(failed), 0o700)
            os.chmod(failed, 0o700)
            if os.path.isdir(failed):
                shutil.rmtree(failed, ignore_errors=True)
            else:
                os.unlink(failed)

    shutil.rmtree(path, onerror=make_writable)
