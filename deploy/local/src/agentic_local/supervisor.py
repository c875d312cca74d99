"""The launcher watches its services as Kubernetes would: a service that dies is reported with its last log
lines and restarted with backoff; one that keeps dying stops the stack with a clear message."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentic_local.processes import ChildProcess


class ServiceKeepsDying(Exception):
    """A service died `max_deaths` times within `window_seconds`: the stack cannot run."""


@dataclass
class _Record:
    deaths: list[float] = field(default_factory=list)
    restart_at: float | None = None


class Supervisor:
    """`check()` often: restarts what died once its backoff passed; raises `ServiceKeepsDying`."""

    def __init__(self, children: Callable[[], Sequence[ChildProcess]], report: Callable[[str], None],
                 first_backoff: float = 1.0, max_backoff: float = 30.0, max_deaths: int = 5,
                 window_seconds: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.children = children
        self.report = report
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.max_deaths = max_deaths
        self.window_seconds = window_seconds
        self.clock = clock
        self._records: dict[str, _Record] = {}

    def check(self) -> None:
        now = self.clock()
        for child in self.children():
            record = self._records.setdefault(child.name, _Record())
            if child.running:
                continue
            if record.restart_at is None:
                self._died(child, record, now)
            elif now >= record.restart_at:
                record.restart_at = None
                self.report(f"agentic: restarting {child.name}")
                child.restart()

    def _died(self, child: ChildProcess, record: _Record, now: float) -> None:
        record.deaths = [at for at in record.deaths if now - at < self.window_seconds] + [now]
        code = child.process.returncode
        tail = child.log_tail(15)
        if len(record.deaths) >= self.max_deaths:
            raise ServiceKeepsDying(
                f"{child.name} died {len(record.deaths)} times within {self.window_seconds:.0f} s (last exit code "
                f"{code}); its log is {child.log_path}. Last lines:\n{tail}")
        backoff = min(self.first_backoff * 2 ** (len(record.deaths) - 1), self.max_backoff)
        record.restart_at = now + backoff
        self.report(f"agentic: {child.name} exited with code {code}; restarting in {backoff:.0f} s. "
                    f"Last lines of {child.log_path}:\n{tail}")
