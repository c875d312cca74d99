"""Child processes that die with the launcher, and helpers to wait on them."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    # Even a SIGKILLed launcher leaves nothing behind: the kernel sends SIGTERM to orphans.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As the servers do: a port in TIME_WAIT from our last run is still usable.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class ChildProcess:
    """One named child with its log file; stopped with `stop_signal`, then killed after a grace period."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        stop_signal: int = signal.SIGTERM,
        user: str | None = None,
    ) -> None:
        self.name = name
        self.log_path = log_path
        self.stop_signal = stop_signal
        self._argv, self._env, self._user = list(argv), env, user
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "ab")
        self.process = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self._argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self._env,
            user=self._user,
            preexec_fn=die_with_parent,
        )

    def restart(self) -> None:
        """The same command again, appending to the same log (after it died)."""
        if self._log.closed:
            self._log = open(self.log_path, "ab")
        self.process = self._spawn()

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def signal(self) -> None:
        if self.running:
            self.process.send_signal(self.stop_signal)

    def wait_stopped(self, timeout: float) -> None:
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()

    def stop(self, timeout: float = 15.0) -> None:
        self.signal()
        self.wait_stopped(timeout)


def wait_until(check: Callable[[], bool], timeout: float, what: str, children: Sequence[ChildProcess] = ()) -> None:
    """Poll `check` until true; fail early, with its log, if a child died meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in children:
            if not child.running:
                raise RuntimeError(
                    f"{child.name} exited with code {child.process.returncode} while waiting for {what}:\n{child.log_tail()}"
                )
        try:
            if check():
                return
        except Exception:
            pass
        time.sleep(0.05)
    tails = "\n".join(f"--- {child.name} ---\n{child.log_tail()}" for child in children)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}\n{tails}")


def tcp_accepts(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


def run_quiet(argv: Sequence[str], user: str | None = None, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(list(argv), capture_output=True, text=True, user=user, env=env, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def is_root() -> bool:
    return os.geteuid() == 0
