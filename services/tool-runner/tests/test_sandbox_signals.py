"""Sandboxed code cannot signal or inspect the runner or another sandbox's program, in every mode the
runner has: with its own pid namespace, and on the host's pids sharing the runner's uid (the chart's
default), with Landlock and without it (a kernel whose Landlock cannot scope signals), where seccomp
is the boundary. A program may still signal itself, its process group and so its own children."""

from __future__ import annotations

import asyncio
import errno
import os
import platform
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agentic_core.tools.protocol import ToolCall, render_for_model
from agentic_tool_runner.sandbox import Sandbox, SandboxConfig, SandboxError, SandboxLimits, _seccomp
from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.code_interpreter import CodeInterpreterTool

LIMITS = SandboxLimits(wall_seconds=8.0, cpu_seconds=4, output_bytes=16384, processes=16)
# Without namespaces and separate uids the program runs as the test's own user, on the host's pids:
# it stands in for a non-root runner in a container, which is the chart's default.
HOST = {"namespaces": False, "drop_uid": False}
MODES = {
    "pid-namespace": {},
    "host-pids": HOST,
    "host-pids-seccomp-only": {**HOST, "landlock": False, "require_isolation": False},
}
# A siginfo_t that says sigqueue() (si_code SI_QUEUE), which a process may send to another one.
SIGINFO_QUEUE = "ctypes.create_string_buffer(struct.pack('iii', 0, 0, -1), 128)"
ATTACK = "import os, signal\nsignal.pidfd_send_signal(os.pidfd_open(os.getppid()), 15)"


@pytest.fixture(scope="module")
async def available() -> tuple[str, ...]:
    sandbox = Sandbox(SandboxConfig(limits=LIMITS))
    try:
        return await sandbox.probe()
    except SandboxError:
        return ()
    finally:
        await sandbox.close()


@pytest.fixture(params=list(MODES))
async def sandbox(request: pytest.FixtureRequest, available: tuple[str, ...]) -> AsyncIterator[Sandbox]:
    mode: str = request.param
    if mode == "pid-namespace" and "pid" not in available:
        pytest.skip("this machine offers no pid namespace")
    if not _seccomp.supported():
        pytest.skip(f"no seccomp syscall table for {platform.machine()}")
    sandbox = Sandbox(SandboxConfig(limits=LIMITS, max_concurrent=2, **MODES[mode]))  # type: ignore[arg-type]
    layers = (await sandbox.probe()) if mode != "pid-namespace" else available
    assert "seccomp" in layers and ("pid" in layers) == (mode == "pid-namespace"), layers
    yield sandbox
    await sandbox.close()


@pytest.fixture
def sigterms() -> Iterator[list[int]]:
    """SIGTERMs this process (the runner, to the sandbox) receives while a test runs: its handler is
    replaced, so a program that gets through is counted rather than ending the test run."""
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: received.append(number))
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def in_pid_namespace(sandbox: Sandbox) -> bool:
    return sandbox.config.namespaces


async def assert_serving(sandbox: Sandbox) -> None:
    result = await sandbox.run_python("6 * 7")
    assert (result.exit_code, result.result) == (0, "42")


async def test_a_pidfd_signal_to_the_runner_is_refused_and_the_runner_keeps_serving(
    sandbox: Sandbox, sigterms: list[int]
) -> None:
    # The kernel's answer, without the Python guard: no pidfd is made, so none can be used.
    attack = "import os, signal\npidfd = os.pidfd_open(os.getppid())\nsignal.pidfd_send_signal(pidfd, 15)"
    result = await sandbox.run_python(attack, audit_hook=False)
    await asyncio.sleep(0.2)
    assert sigterms == []
    assert result.exit_code == 1 and result.stopped is None, result
    assert 'File "<code>", line 2, in <module>' in result.stderr, result.stderr
    assert result.stderr.rstrip().endswith("PermissionError: [Errno 1] Operation not permitted"), result.stderr
    await assert_serving(sandbox)


async def test_the_python_guard_refuses_pidfds_before_the_kernel_does(sandbox: Sandbox, sigterms: list[int]) -> None:
    result = await sandbox.run_python(ATTACK)
    await asyncio.sleep(0.2)
    assert sigterms == [] and result.exit_code == 1
    assert result.stderr.rstrip().endswith("PermissionError: sandbox: os.pidfd_open is not allowed (it reaches other processes)")


def syscalls(*calls: tuple[str, str]) -> str:
    """A ctypes program that makes each raw call and prints `<name> <result> <errno>`."""
    lines = ["import ctypes, fcntl, os, socket, struct", "libc = ctypes.CDLL(None, use_errno=True)", "libc.syscall.restype = ctypes.c_long"]
    numbers = _seccomp._ARCHES[platform.machine()][1]
    for name, args in calls:
        call = f"libc.syscall({numbers[name.split(':')[0]]}, {args})"
        lines += [f"ctypes.set_errno(0)\nresult = {call}", f"print({name!r}, result, ctypes.get_errno())"]
    return "\n".join(lines)


async def test_no_call_that_reaches_another_process_by_handle_or_memory_is_allowed(sandbox: Sandbox) -> None:
    runner = os.getpid()
    program = syscalls(
        ("pidfd_open", f"{runner}, 0"),
        ("pidfd_send_signal", "0, 15, None, 0"),
        ("pidfd_getfd", "0, 0, 0"),
        ("process_madvise", "0, None, 0, 0, 0"),
        ("process_mrelease", "0, 0"),
        ("kcmp", f"{runner}, os.getpid(), 0, 0, 0"),
        ("ptrace", f"16, {runner}, None, None"),  # PTRACE_ATTACH
        ("process_vm_readv", f"{runner}, None, 0, None, 0, 0"),
        ("move_pages", f"{runner}, 0, None, None, None, 0"),
        ("migrate_pages", f"{runner}, 0, None, None"),
        ("get_robust_list", f"{runner}, None, None"),
    )
    result = await sandbox.run_python(program, audit_hook=False)
    lines = result.stdout.splitlines()
    assert len(lines) == 11 and all(line.endswith(f" -1 {errno.EPERM}") for line in lines), result.stdout + result.stderr


async def test_signals_limits_and_priorities_cannot_name_the_runner(sandbox: Sandbox, sigterms: list[int]) -> None:
    runner = os.getpid()
    # Harmless if they got through: signal 0 only checks, NULL limits only read, the priority is the runner's own.
    calls = [
        ("kill", f"{runner}, 0"),
        ("tkill", f"{runner}, 0"),
        ("tgkill", f"{runner}, {runner}, 0"),
        ("rt_sigqueueinfo", f"{runner}, 0, {SIGINFO_QUEUE}"),
        ("rt_tgsigqueueinfo", f"{runner}, {runner}, 0, {SIGINFO_QUEUE}"),
        ("prlimit64", f"{runner}, 0, None, None"),
        ("sched_setaffinity", f"{runner}, 0, None"),
        ("setpriority", f"0, {runner}, {os.getpriority(os.PRIO_PROCESS, runner)}"),
        ("fcntl:F_SETOWN", f"os.pipe()[0], 8, {runner}"),
        ("ioctl:FIOSETOWN", f"(pair := socket.socketpair())[0].fileno(), 0x8901, ctypes.byref(ctypes.c_int({runner}))"),
    ]
    if not in_pid_namespace(sandbox):
        calls.append(("kill:-1", "-1, 0"))  # every process it may signal; in a pid namespace, that is its own
    result = await sandbox.run_python(syscalls(*calls), audit_hook=False)
    lines = result.stdout.splitlines()
    assert len(lines) == len(calls), result.stdout + result.stderr
    # In its own pid namespace the runner has no pid the program could name: no such process.
    refusals = {f" -1 {errno.EPERM}", f" -1 {errno.ESRCH}"} if in_pid_namespace(sandbox) else {f" -1 {errno.EPERM}"}
    assert all(any(line.endswith(refusal) for refusal in refusals) for line in lines), result.stdout
    assert sigterms == []


async def test_a_program_cannot_kill_another_sandboxs_running_program(sandbox: Sandbox) -> None:
    victim = asyncio.create_task(sandbox.run_python("import time\ntime.sleep(3)\nprint('still running')"))
    victim_pid = await _program_pid()
    with_guard = await sandbox.run_python(f"import os\nos.kill({victim_pid}, 9)")
    kernel = await sandbox.run_python(
        f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.kill({victim_pid}, 9), ctypes.get_errno())",
        audit_hook=False,
    )
    assert "PermissionError: sandbox: signalling other processes is not allowed" in with_guard.stderr
    # In a pid namespace the other program has no pid here at all (ESRCH); on the host's pids, seccomp says EPERM.
    assert kernel.stdout.split() == ["-1", str(errno.ESRCH if in_pid_namespace(sandbox) else errno.EPERM)], kernel
    result = await victim
    assert (result.exit_code, result.stdout, result.signal) == (0, "still running\n", None)


async def test_a_program_may_signal_itself_and_its_process_group(sandbox: Sandbox) -> None:
    program = (
        "import os, signal\nreceived = []\nsignal.signal(signal.SIGUSR1, lambda number, frame: received.append(number))\n"
        "os.kill(os.getpid(), signal.SIGUSR1)\nsignal.raise_signal(signal.SIGUSR1)\nos.kill(0, signal.SIGUSR1)\n"
        "os.killpg(os.getpgid(0), signal.SIGUSR1)\nlen(received)"
    )
    for audit_hook in (True, False):
        result = await sandbox.run_python(program, audit_hook=audit_hook)
        assert (result.result, result.stderr) == ("4", ""), result


CHILDREN = """
import os, signal, sys, time

def child():
    ready, tell = os.pipe()
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        os.write(tell, b"x")
        time.sleep(30)
        os._exit(0)
    os.read(ready, 1)
    return pid

def ended_by(pid):
    return signal.Signals(os.waitpid(pid, 0)[1] & 0x7F).name

signal.signal(signal.SIGUSR1, signal.SIG_IGN)
first = child()
os.kill(0, signal.SIGUSR1)
print("kill(0)", ended_by(first))
second = child()
os.killpg(os.getpgid(0), signal.SIGUSR1)
print("killpg", ended_by(second))
third = child()
try:
    os.kill(third, signal.SIGTERM)
    print("by pid", ended_by(third))
except PermissionError:
    os.kill(0, signal.SIGUSR1)
    print("by pid refused", ended_by(third))
"""


async def test_a_program_may_signal_its_own_children(sandbox: Sandbox) -> None:
    python = sandbox.python
    result = await sandbox.run_command(python, [python, "-I", "-S", "-c", CHILDREN])
    lines = result.stdout.splitlines()
    assert lines[:2] == ["kill(0) SIGUSR1", "killpg SIGUSR1"], result.stdout + result.stderr
    # By pid only in a pid namespace: on the host's pids a filter cannot tell its children from anyone else.
    assert lines[2] == ("by pid SIGTERM" if in_pid_namespace(sandbox) else "by pid refused SIGUSR1"), result.stdout
    assert result.exit_code == 0


@pytest.mark.parametrize("mode", ["pid-namespace", "host-pids-seccomp-only"])
async def test_the_code_interpreter_answers_a_pidfd_attack_with_a_result_and_keeps_serving(
    mode: str, available: tuple[str, ...], sigterms: list[int]
) -> None:
    if mode == "pid-namespace" and "pid" not in available:
        pytest.skip("this machine offers no pid namespace")
    forced = {"sandbox_namespaces": False, "sandbox_separate_uids": False, "sandbox_landlock": False,
              "sandbox_require_isolation": False} if mode != "pid-namespace" else {}  # fmt: skip
    tool = CodeInterpreterTool(ToolRunnerSettings(sandbox_wall_seconds=5, sandbox_cpu_seconds=2, **forced))  # type: ignore[arg-type]
    try:
        attacked = await tool.run(_call(ATTACK))
        await asyncio.sleep(0.2)
        after = await tool.run(_call("6 * 7"))
    finally:
        await tool.close()
    assert sigterms == []
    # The program raised: an ok result with its traceback, which the model reads (docs/sandbox.md).
    assert attacked.status == "ok" and attacked.details["exit_code"] == 1
    assert "PermissionError: sandbox: os.pidfd_open is not allowed" in render_for_model(attacked)
    assert after.status == "ok" and render_for_model(after).endswith("[result]\n42\n[exit status 0]")


def test_the_launcher_writes_the_programs_own_ids_into_the_own_group_filter() -> None:
    if not _seccomp.supported():
        pytest.skip(f"no seccomp syscall table for {platform.machine()}")
    from agentic_tool_runner.sandbox import _launcher, _sandbox

    plan = _sandbox._seccomp_plan()
    assert plan is not None
    own_group = bytes.fromhex(str(plan["own_group"]))
    written = _launcher.seccomp_program(plan, pid_namespace=False)
    assert written == _seccomp.for_process(own_group, os.getpid(), os.getpgid(0)) != own_group
    assert _launcher.seccomp_program(plan, pid_namespace=True) == _seccomp.build_filter()


def _call(code: str) -> ToolCall:
    return ToolCall("call_1", "code_interpreter", "code_interpreter", {"code": code}, {}, deadline=time.time() + 60)


async def _program_pid() -> int:
    """The host pid of the one sandboxed interpreter this test process runs (waits for it to start)."""
    for _ in range(100):
        found = [pid for pid in _descendants(os.getpid()) if _is_interpreter(pid)]
        if found:
            assert len(found) == 1 and found[0] != os.getpid(), found
            return found[0]
        await asyncio.sleep(0.02)
    raise AssertionError("the sandboxed program did not start")


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        try:
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _is_interpreter(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return "-c" in [arg.decode(errors="replace") for arg in argv] and not any(arg.endswith(b"_launcher.py") for arg in argv)
