"""The one periodic beat: every interval until stopped, on through failures, and never again once a beat says so."""

from __future__ import annotations

import asyncio

import pytest
from agentic_runtime.heartbeat import Heartbeat

INTERVAL = 0.05


async def test_it_beats_every_interval_until_stopped() -> None:
    beats: list[float] = []

    async def beat() -> None:
        beats.append(asyncio.get_running_loop().time())

    heartbeat = Heartbeat(INTERVAL, beat, "a test beat")
    await asyncio.sleep(INTERVAL * 5.5)
    await heartbeat.stop()
    assert 3 <= len(beats) <= 6
    stopped = len(beats)
    await asyncio.sleep(INTERVAL * 3)
    assert len(beats) == stopped


async def test_a_failed_beat_is_logged_and_retried(caplog: pytest.LogCaptureFixture) -> None:
    tries: list[int] = []

    async def beat() -> None:
        tries.append(1)
        if len(tries) <= 2:
            raise ConnectionError("gone for a moment")

    heartbeat = Heartbeat(INTERVAL, beat, "renewing a test lease")
    await asyncio.sleep(INTERVAL * 5.5)
    await heartbeat.stop()
    assert len(tries) >= 4
    assert "renewing a test lease failed (retried at the next beat)" in caplog.text


async def test_a_beat_that_returns_false_ends_it() -> None:
    tries: list[int] = []

    async def beat() -> bool:
        tries.append(1)
        return False

    heartbeat = Heartbeat(INTERVAL, beat, "a test beat")
    await asyncio.sleep(INTERVAL * 4)
    assert tries == [1]
    await heartbeat.stop()
