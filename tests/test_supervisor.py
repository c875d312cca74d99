"""The launcher's supervision with real child processes: a death is reported with the child's last log lines
and followed by a restart after a growing backoff; a child that keeps dying stops the stack."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from agentic_local.processes import ChildProcess
from agentic_local.supervisor import ServiceKeepsDying, Supervisor


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _wait_dead(child: ChildProcess) -> None:
    child.process.wait(10)


def test_a_dead_child_is_reported_then_restarted_after_a_growing_backoff(tmp_path: Path) -> None:
    child = ChildProcess("crasher", [sys.executable, "-c", "print('boom: no config'); raise SystemExit(3)"],
                         tmp_path / "crasher.log")
    reports: list[str] = []
    clock = Clock()
    supervisor = Supervisor(lambda: [child], reports.append, first_backoff=1.0, max_deaths=10, clock=clock)
    try:
        _check_restarts(child, supervisor, reports, clock, tmp_path)
    finally:
        child.stop(5)


def _check_restarts(child: ChildProcess, supervisor: Supervisor, reports: list[str], clock: Clock,
                    tmp_path: Path) -> None:
    _wait_dead(child)
    supervisor.check()
    assert "crasher exited with code 3; restarting in 1 s" in reports[0] and "boom: no config" in reports[0]
    supervisor.check()  # the backoff has not passed: nothing happens
    assert len(reports) == 1
    clock.now = 1.0
    supervisor.check()
    assert reports[-1] == "agentic: restarting crasher"
    _wait_dead(child)
    supervisor.check()
    assert "restarting in 2 s" in reports[-1]  # the second death waits twice as long
    assert (tmp_path / "crasher.log").read_text().count("boom") == 2  # one log, appended


def test_a_child_that_keeps_dying_stops_the_stack(tmp_path: Path) -> None:
    child = ChildProcess("doomed", [sys.executable, "-c", "raise SystemExit(1)"], tmp_path / "doomed.log")
    clock = Clock()
    supervisor = Supervisor(lambda: [child], lambda line: None, first_backoff=0.0, max_deaths=3, clock=clock)
    try:
        with pytest.raises(ServiceKeepsDying) as stopped:
            for _ in range(200):
                supervisor.check()
                time.sleep(0.02)
                clock.now += 1
    finally:
        child.stop(5)
    assert "doomed died 3 times" in str(stopped.value) and "doomed.log" in str(stopped.value)


def test_a_running_child_is_left_alone(tmp_path: Path) -> None:
    child = ChildProcess("sleeper", [sys.executable, "-c", "import time; time.sleep(30)"], tmp_path / "s.log")
    reports: list[str] = []
    try:
        supervisor = Supervisor(lambda: [child], reports.append)
        supervisor.check()
        assert reports == [] and child.running
    finally:
        child.stop(5)
