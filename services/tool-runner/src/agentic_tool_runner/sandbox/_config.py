"""What a sandbox may use (limits) and which isolation layers it tries (config)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentic_tool_runner.settings import ToolRunnerSettings

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Per-program limits. CPU, memory, file size, descriptors and processes are rlimits of each
    process; wall time and output are enforced by the runner, which kills the whole group."""

    wall_seconds: float = 30.0
    cpu_seconds: int = 20
    memory_bytes: int = 512 * MIB
    disk_bytes: int = 64 * MIB
    open_files: int = 64
    processes: int = 32
    output_bytes: int = 64 * 1024
    result_chars: int = 16 * 1024

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_AS": self.memory_bytes,
            "RLIMIT_FSIZE": self.disk_bytes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_CORE": 0,
        }


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """Each layer is used where the kernel allows it; `require_isolation` refuses to run a program
    unless the kernel both cuts the network and confines the filesystem (see docs/sandbox.md)."""

    limits: SandboxLimits = field(default_factory=SandboxLimits)
    max_concurrent: int = 4
    uid_base: int = 60000
    drop_uid: bool = True  # a uid per slot where the runner can switch uids (sandbox_separate_uids)
    namespaces: bool = True
    landlock: bool = True
    seccomp: bool = True
    require_isolation: bool = True
    readonly_paths: tuple[str, ...] = ()
    work_root: str = ""
    python: str = ""

    @classmethod
    def from_settings(cls, settings: ToolRunnerSettings) -> SandboxConfig:
        limits = SandboxLimits(
            wall_seconds=settings.sandbox_wall_seconds,
            cpu_seconds=settings.sandbox_cpu_seconds,
            memory_bytes=settings.sandbox_memory_mb * MIB,
            disk_bytes=settings.sandbox_disk_mb * MIB,
            open_files=settings.sandbox_open_files,
            processes=settings.sandbox_processes,
            output_bytes=settings.sandbox_output_bytes,
        )
        return cls(
            limits=limits,
            max_concurrent=settings.sandbox_max_concurrent,
            uid_base=settings.sandbox_uid_base,
            drop_uid=settings.sandbox_separate_uids,
            namespaces=settings.sandbox_namespaces,
            landlock=settings.sandbox_landlock,
            seccomp=settings.sandbox_seccomp,
            require_isolation=settings.sandbox_require_isolation,
            readonly_paths=tuple(path.strip() for path in settings.sandbox_readonly_paths.split(",") if path.strip()),
            work_root=settings.sandbox_work_root,
            python=settings.code_interpreter_python,
        )
