"""The sandbox with every layer this machine offers: each test runs what untrusted code would try,
checks that it was refused, and that the runner still runs programs afterwards (docs/sandbox.md)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import agentic_tool_runner.settings
import pytest
from agentic_tool_runner.sandbox import Sandbox, SandboxConfig, SandboxError, SandboxLimits

MIB = 1024 * 1024
LIMITS = SandboxLimits(
    wall_seconds=5.0, cpu_seconds=1, memory_bytes=256 * MIB, disk_bytes=8 * MIB, output_bytes=4096, processes=16
)
SERVICE_FILE = Path(agentic_tool_runner.settings.__file__).resolve()
SECRET = "s3cr3t-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
async def sandbox() -> AsyncIterator[Sandbox]:
    sandbox = Sandbox(SandboxConfig(limits=LIMITS, max_concurrent=2))
    try:
        await sandbox.probe()
    except SandboxError as exc:
        pytest.skip(f"this machine offers no kernel isolation: {exc}")
    yield sandbox
    await sandbox.close()


@pytest.fixture
async def layers(sandbox: Sandbox) -> tuple[str, ...]:
    return await sandbox.probe()


async def assert_runner_healthy(sandbox: Sandbox) -> None:
    result = await sandbox.run_python("6 * 7")
    assert (result.exit_code, result.result, result.stopped) == (0, "42", None)


def attempts(*snippets: str) -> str:
    """A program that tries each snippet in turn and prints what happened to it."""
    lines = ["import os, sys"]
    for index, snippet in enumerate(snippets):
        lines += ["try:", f"    print({index}, 'ALLOWED', repr({snippet}))", "except BaseException as exc:"]
        lines += [f"    print({index}, 'REFUSED', type(exc).__name__, exc)"]
    return "\n".join(lines)


def refused_all(stdout: str, count: int) -> bool:
    return [line.split()[1] for line in stdout.splitlines()] == ["REFUSED"] * count


async def test_runs_python_and_returns_stdout_stderr_and_the_last_expression(sandbox: Sandbox) -> None:
    result = await sandbox.run_python("import sys\nprint('out')\nprint('err', file=sys.stderr)\n{'answer': 6 * 7}")
    assert (result.stdout, result.stderr, result.result, result.exit_code) == ("out\n", "err\n", "{'answer': 42}", 0)


async def test_a_program_sees_an_empty_environment_and_no_runner_secret(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTIC_TEST_SECRET", SECRET)
    program = attempts(
        "dict(os.environ)",
        "open('/proc/1/environ').read()",
        f"open('/proc/{os.getpid()}/environ').read()",
        "open(f'/proc/{os.getppid()}/environ').read()",
    )
    result = await sandbox.run_python(program)
    assert SECRET not in result.stdout + result.stderr
    environment = result.stdout.splitlines()[0]
    assert "AGENTIC" not in environment and "'PATH': '/usr/local/bin:/usr/bin:/bin'" in environment
    await assert_runner_healthy(sandbox)


async def test_a_program_cannot_read_system_secrets_or_the_service_files(sandbox: Sandbox) -> None:
    program = attempts(
        "open('/etc/shadow').read()",
        f"open({str(SERVICE_FILE)!r}).read()",
        f"os.listdir({str(SERVICE_FILE.parent)!r})",
        "open('/root/.bash_history').read()",
    )
    result = await sandbox.run_python(program)
    assert refused_all(result.stdout, 4), result.stdout
    assert "ToolRunnerSettings" not in result.stdout
    await assert_runner_healthy(sandbox)


async def test_a_program_cannot_write_outside_its_directory(sandbox: Sandbox) -> None:
    targets = [Path("/tmp") / f"escape-{uuid.uuid4().hex}", SERVICE_FILE.parent / f"escape-{uuid.uuid4().hex}"]
    program = attempts(*(f"open({str(target)!r}, 'w').write('x')" for target in targets), "open('mine.txt', 'w').write('ok')")
    result = await sandbox.run_python(program)
    lines = result.stdout.splitlines()
    assert [line.split()[1] for line in lines] == ["REFUSED", "REFUSED", "ALLOWED"], result.stdout
    assert not any(target.exists() for target in targets)
    await assert_runner_healthy(sandbox)


async def test_a_program_cannot_open_a_socket_even_to_localhost(sandbox: Sandbox) -> None:
    connections = 0

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        program = attempts(
            f"__import__('socket').create_connection(('127.0.0.1', {port}), timeout=2)",
            "__import__('socket').socket(__import__('socket').AF_UNIX)",
            "__import__('socket').getaddrinfo('example.com', 443)",
        )
        result = await sandbox.run_python(program)
        await asyncio.sleep(0.1)
    finally:
        server.close()
        await server.wait_closed()
    assert refused_all(result.stdout, 3), result.stdout
    assert connections == 0
    await assert_runner_healthy(sandbox)


async def test_a_busy_loop_is_stopped_at_the_cpu_limit(sandbox: Sandbox) -> None:
    result = await sandbox.run_python("while True:\n    pass")
    assert result.stopped == "cpu_time" and result.exit_code is None
    assert result.duration_seconds < LIMITS.wall_seconds
    await assert_runner_healthy(sandbox)


async def test_a_sleeping_program_is_killed_at_the_wall_clock_limit(sandbox: Sandbox) -> None:
    # 3 s: room for the interpreter to start and print on a loaded machine; the program would sleep for 60
    result = await sandbox.run_python("import time\nprint('before', flush=True)\ntime.sleep(60)", wall_seconds=3.0)
    assert result.stopped == "wall_time" and result.stdout == "before\n"
    assert result.duration_seconds < 30.0
    await assert_runner_healthy(sandbox)


async def test_allocating_past_the_memory_limit_fails(sandbox: Sandbox) -> None:
    result = await sandbox.run_python(f"block = bytearray({2 * LIMITS.memory_bytes})")
    assert result.exit_code == 1 and "MemoryError" in result.stderr
    await assert_runner_healthy(sandbox)


async def test_printing_past_the_output_cap_stops_the_program_and_truncates(sandbox: Sandbox) -> None:
    result = await sandbox.run_python("while True:\n    print('x' * 1000)")
    assert result.stopped == "output" and result.output_truncated
    assert len(result.stdout) + len(result.stderr) <= LIMITS.output_bytes
    await assert_runner_healthy(sandbox)


async def test_a_fork_bomb_is_refused(sandbox: Sandbox) -> None:
    result = await sandbox.run_python("import os\nwhile True:\n    os.fork()")
    assert result.exit_code == 1 and "PermissionError" in result.stderr
    await assert_runner_healthy(sandbox)


async def test_a_program_cannot_start_other_programs(sandbox: Sandbox) -> None:
    program = attempts(
        "__import__('subprocess').run(['/bin/ls'])", "os.system('ls')", "os.execv('/bin/ls', ['ls'])", "__import__('ctypes')"
    )
    result = await sandbox.run_python(program)
    assert refused_all(result.stdout, 4), result.stdout
    await assert_runner_healthy(sandbox)


async def test_each_call_gets_a_fresh_directory_that_is_removed_afterwards(sandbox: Sandbox) -> None:
    first = await sandbox.run_python("open('note.txt', 'w').write('hello')\nimport os\nos.listdir('.')")
    second = await sandbox.run_python("import os\nos.listdir('.')")
    assert (first.result, second.result) == ("['note.txt']", "[]")
    assert sandbox.work_root is not None and sandbox.work_root.parent == Path(sandbox.config.work_root or "/tmp")
    assert list(sandbox.work_root.iterdir()) == []


async def test_concurrent_programs_run_as_different_users(sandbox: Sandbox, layers: tuple[str, ...]) -> None:
    if "uid" not in layers:
        pytest.skip("the runner is not root here: no per-sandbox uid")
    program = "import os, time\ntime.sleep(0.3)\nos.getuid()"
    first, second = await asyncio.gather(sandbox.run_python(program), sandbox.run_python(program))
    assert first.result != second.result and int(str(first.result)) >= sandbox.config.uid_base


async def test_a_cancelled_run_kills_its_program_and_frees_its_slot(sandbox: Sandbox) -> None:
    task = asyncio.create_task(sandbox.run_python("import time\ntime.sleep(60)"))
    await asyncio.sleep(0.5)
    assert _sandbox_children()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _sandbox_children() == []
    await asyncio.gather(*(assert_runner_healthy(sandbox) for _ in range(sandbox.config.max_concurrent)))


async def test_a_sandbox_that_cannot_start_its_program_raises_a_sandbox_error() -> None:
    broken = Sandbox(SandboxConfig(limits=LIMITS, python="/nonexistent/bin/python3"))
    with pytest.raises(SandboxError):
        await broken.run_python("print('never')")
    await broken.close()


def _sandbox_children() -> list[int]:
    """Launchers this test process started that are still alive (each one's sandbox dies with it)."""
    children = []
    for entry in Path("/proc").iterdir():
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == os.getpid() and b"_launcher.py" in (entry / "cmdline").read_bytes():
                children.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return children


async def test_closing_waits_for_the_last_running_program_then_removes_the_work_root() -> None:
    shared = Sandbox(SandboxConfig(limits=LIMITS, max_concurrent=2))
    try:
        await shared.probe()
    except SandboxError as exc:
        pytest.skip(f"this machine offers no kernel isolation: {exc}")
    running = asyncio.create_task(shared.run_python(
        "import os, time\ntime.sleep(0.5)\nopen('still-here.txt', 'w').write('x')\nprint(sorted(os.listdir('.')))"))
    await asyncio.sleep(0.2)
    work_root = shared._work_root
    assert work_root is not None and work_root.exists()
    await shared.close()  # as the first of the two handlers sharing it would, mid-call
    result = await running
    assert result.exit_code == 0 and "still-here.txt" in result.stdout
    assert not work_root.exists()
