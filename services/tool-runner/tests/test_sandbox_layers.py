"""Each isolation layer on its own, the others turned off: the kernel layers hold without the Python
audit hook, and the audit hook holds without them. Layers this machine lacks are skipped."""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import agentic_tool_runner.settings
import pytest
from agentic_tool_runner.sandbox import Sandbox, SandboxConfig, SandboxError, SandboxLimits, _sandbox, _seccomp

LIMITS = SandboxLimits(wall_seconds=5.0, cpu_seconds=2, output_bytes=16384, processes=16)
SERVICE_FILE = Path(agentic_tool_runner.settings.__file__).resolve()
# Without namespaces and uid drop, tests run the program as the test's own user: these stand in for
# a non-root runner in a container, where only Landlock and seccomp are at hand.
HOST = {"namespaces": False, "drop_uid": False, "require_isolation": False}


@pytest.fixture(scope="module")
async def available() -> tuple[str, ...]:
    sandbox = Sandbox(SandboxConfig(limits=LIMITS))
    try:
        return await sandbox.probe()
    except SandboxError:
        return ()
    finally:
        await sandbox.close()


@pytest.fixture(scope="module")
async def listener() -> AsyncIterator[tuple[int, list[int]]]:
    """A TCP server on 127.0.0.1 that counts the connections it gets."""
    accepted: list[int] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1], accepted
    server.close()
    await server.wait_closed()


def need(available: tuple[str, ...], *layers: str) -> None:
    missing = [layer for layer in layers if not any(found.startswith(layer) for found in available)]
    if missing:
        pytest.skip(f"this machine lacks {', '.join(missing)}")


async def run(code: str, *, audit_hook: bool = False, **config: object) -> str:
    sandbox = Sandbox(SandboxConfig(limits=LIMITS, **config))  # type: ignore[arg-type]
    try:
        result = await sandbox.run_python(code, audit_hook=audit_hook)
    finally:
        await sandbox.close()
    return result.stdout + result.stderr


def outcome(expression: str) -> str:
    return f"try:\n    {expression}\n    print('ALLOWED')\nexcept OSError as exc:\n    print('REFUSED', exc.errno)\n"


async def test_the_network_namespace_alone_cuts_even_localhost(available: tuple[str, ...], listener: tuple[int, list[int]]) -> None:
    need(available, "net")
    port, accepted = listener
    connect = f"__import__('socket').create_connection(('127.0.0.1', {port}), timeout=2)"
    output = await run(outcome(connect), landlock=False, seccomp=False)
    assert output.startswith("REFUSED") and not accepted, output


async def test_the_mount_namespace_alone_hides_host_files_and_makes_the_root_read_only(available: tuple[str, ...]) -> None:
    need(available, "mount")
    escape = Path("/tmp") / f"escape-{uuid.uuid4().hex}"
    code = "".join(outcome(snippet) for snippet in (f"open({str(SERVICE_FILE)!r})", "open('/etc/shadow')"))
    code += outcome(f"open({str(escape)!r}, 'w')") + outcome("open('/usr/escape', 'w')")
    output = await run(code, landlock=False, seccomp=False)
    assert output.split() == ["REFUSED", "2", "REFUSED", "2", "REFUSED", "2", "REFUSED", "30"], output  # ENOENT, EROFS
    assert not escape.exists()


async def test_the_pid_namespace_shows_only_the_sandbox(available: tuple[str, ...]) -> None:
    need(available, "pid", "proc")
    output = await run("import os\nprint(sorted(name for name in os.listdir('/proc') if name.isdigit()))", seccomp=False)
    assert output.strip() == "['1', '2']", output


async def test_seccomp_alone_refuses_sockets_new_processes_and_namespaces(
    available: tuple[str, ...], listener: tuple[int, list[int]]
) -> None:
    need(available, "seccomp")
    port, accepted = listener
    snippets = [
        f"__import__('socket').create_connection(('127.0.0.1', {port}), timeout=2)",
        "__import__('os').fork()",
        "__import__('os').execv('/bin/true', ['true'])",
        "__import__('os').unshare(0x40000000) if hasattr(__import__('os'), 'unshare') else _unshare()",
    ]
    unshare = (
        "def _unshare():\n    import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    if libc.unshare(0x40000000) != 0:\n        raise OSError(ctypes.get_errno(), 'unshare')\n"
    )
    output = await run(unshare + "".join(outcome(snippet) for snippet in snippets), landlock=False, **HOST)
    assert output.split() == ["REFUSED", "1"] * 4, output  # EPERM
    assert not accepted


async def test_landlock_alone_confines_reads_writes_and_tcp(available: tuple[str, ...], listener: tuple[int, list[int]]) -> None:
    need(available, "landlock-net")
    port, accepted = listener
    escape = Path("/tmp") / f"escape-{uuid.uuid4().hex}"
    snippets = [
        f"open({str(SERVICE_FILE)!r})",
        f"open({str(escape)!r}, 'w')",
        f"__import__('socket').create_connection(('127.0.0.1', {port}), timeout=2)",
    ]
    output = await run("".join(outcome(snippet) for snippet in snippets), seccomp=False, **HOST)
    assert output.split() == ["REFUSED", "13"] * 3, output  # EACCES
    assert not escape.exists() and not accepted


async def test_a_per_sandbox_uid_and_process_limit_contain_a_fork_bomb_of_a_command(available: tuple[str, ...]) -> None:
    need(available, "uid", "pid")
    sandbox = Sandbox(SandboxConfig(limits=LIMITS))
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    try:
        result = await sandbox.run_command(sandbox.python, [sandbox.python, "-I", "-S", "-c", bomb], wall_seconds=1.5)
        assert result.stopped in ("wall_time", "cpu_time")
        healthy = await sandbox.run_python("6 * 7")
    finally:
        await sandbox.close()
    assert healthy.result == "42"
    sandbox_uids = range(sandbox.config.uid_base, sandbox.config.uid_base + sandbox.config.max_concurrent)
    assert not [entry.name for entry in Path("/proc").iterdir() if entry.name.isdigit() and _owner(entry) in sandbox_uids]


async def test_the_audit_hook_alone_refuses_files_network_processes_and_ctypes(listener: tuple[int, list[int]]) -> None:
    port, accepted = listener
    escape = Path("/tmp") / f"escape-{uuid.uuid4().hex}"
    snippets = [
        "open('/etc/shadow')",
        f"open({str(SERVICE_FILE)!r})",
        f"open({str(escape)!r}, 'w')",
        f"__import__('socket').create_connection(('127.0.0.1', {port}), timeout=2)",
        "__import__('os').fork()",
        "__import__('subprocess').run(['true'])",
        "__import__('ctypes')",
        "__import__('os').kill(1, 0)",
    ]
    code = "".join(outcome(snippet).replace("except OSError", "except (OSError, ImportError)") for snippet in snippets)
    output = await run(code, audit_hook=True, landlock=False, seccomp=False, **HOST)
    assert output.split() == ["REFUSED", "None"] * len(snippets), output  # PermissionError from the hook: no errno
    assert not escape.exists() and not accepted


async def test_require_isolation_refuses_to_run_without_kernel_layers() -> None:
    with pytest.raises(SandboxError, match="no kernel isolation"):
        await run("print('never')", landlock=False, seccomp=False, namespaces=False, drop_uid=False)


def test_the_seccomp_filter_is_whole_instructions_and_absent_on_unknown_architectures(monkeypatch: pytest.MonkeyPatch) -> None:
    if not _seccomp.supported():
        pytest.skip(f"no syscall table for {platform.machine()}")
    for program in (_seccomp.build_filter(), _seccomp.build_filter(no_processes=True), _seccomp.build_filter(own_group_only=True)):
        assert program is not None and len(program) % 8 == 0 and len(program) // 8 < 4096
    monkeypatch.setattr(platform, "machine", lambda: "sparc64")
    assert _seccomp.build_filter() is None


def _owner(entry: Path) -> int | None:
    try:
        for line in (entry / "status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


async def test_namespaces_the_kernel_refuses_after_all_fall_back_to_landlock_and_seccomp(
    available: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    need(available, "mount", "landlock", "seccomp")
    sandbox = Sandbox(SandboxConfig(limits=LIMITS, drop_uid=False))
    plan = sandbox._plan

    def unmountable(*args: object) -> dict[str, object]:
        planned = plan(*args)  # type: ignore[arg-type]
        return dict(planned, new_root="/nonexistent/root") if planned["namespaces"] else planned

    monkeypatch.setattr(sandbox, "_plan", unmountable)
    try:
        first = await sandbox.run_python("6 * 7")
        second = await sandbox.run_python("6 * 7")
    finally:
        await sandbox.close()
    assert first.result == second.result == "42"
    assert "mount" not in first.layers and "seccomp" in first.layers and any(layer.startswith("landlock") for layer in first.layers)


async def test_a_runner_that_cannot_switch_uids_says_so_once_and_runs_programs_as_itself(
    available: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    need(available, "seccomp")
    monkeypatch.setattr(_sandbox, "can_switch_uids", lambda: False)
    with caplog.at_level(logging.WARNING, logger=_sandbox.__name__):
        sandbox = Sandbox(SandboxConfig(limits=LIMITS, namespaces=False))
        Sandbox(SandboxConfig(limits=LIMITS, namespaces=False, drop_uid=False))  # turned off on purpose: nothing to say
    try:
        result = await sandbox.run_python("import os\nos.getuid()")
    finally:
        await sandbox.close()
    warnings = [record.getMessage() for record in caplog.records if "runs as the runner's uid" in record.getMessage()]
    assert len(warnings) == 1 and f"uid {os.geteuid()}:" in warnings[0]
    assert "uid" not in result.layers and result.result == str(os.geteuid())


def test_a_root_runner_with_its_capabilities_can_switch_uids() -> None:
    if os.geteuid() != 0:
        pytest.skip("not root here")
    status = Path("/proc/self/status").read_text()
    effective = int(next(line for line in status.splitlines() if line.startswith("CapEff:")).split()[1], 16)
    assert _sandbox.can_switch_uids() == (effective & 0b11001001 == 0b11001001)  # CHOWN, FOWNER, SETGID, SETUID
