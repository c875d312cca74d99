"""CPU time of the stack's processes from /proc (Linux): what a batch of requests cost each service.

A process counts with its live descendants (PostgreSQL serves each connection
from a backend process of its own), in clock ticks (usually 10 ms each), so a
batch should be long enough for the per-turn figure to mean something.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

from agentic_local.stack import LocalStack

_TICK_SECONDS = 1.0 / os.sysconf("SC_CLK_TCK")


def _process_table() -> tuple[dict[int, list[int]], dict[int, int]]:
    """Children by parent pid, and user + system ticks by pid, of every process readable now."""
    children: dict[int, list[int]] = defaultdict(list)
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended while we looked
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        pid = int(entry.name)
        children[int(fields[1])].append(pid)
        ticks[pid] = int(fields[11]) + int(fields[12])
    return children, ticks


def stack_pids(stack: LocalStack) -> dict[str, int]:
    """Each service's process, and the embedded PostgreSQL and NATS when the stack started them."""
    pids = {child.name: child.process.pid for child in stack.children}
    for name, server in (("postgres", stack.postgres), ("nats", stack.nats)):
        if server is not None and server.child is not None:
            pids[name] = server.child.process.pid
    return pids


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each named process and its descendants."""
    children, ticks = _process_table()
    totals = {}
    for name, root in pids.items():
        total, pending = 0, [root]
        while pending:
            pid = pending.pop()
            total += ticks.get(pid, 0)
            pending.extend(children.get(pid, ()))
        totals[name] = total * _TICK_SECONDS
    return totals


def ms_per_turn(before: dict[str, float], after: dict[str, float], turns: int) -> dict[str, float]:
    return {name: round((after[name] - before[name]) * 1000 / turns, 2) for name in before}
