"""The one JetStream worker loop, with a stand-in source: at most `concurrency` messages run at once, a failed take
is retried, stop drains what runs and cancels what outlives the drain."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from agentic_runtime.nats.worker import PullWorker, in_progress
from nats.aio.msg import Msg


class Source:
    """Hands out `count` messages, up to what the worker asks for; fails the first `failures` takes."""

    def __init__(self, count: int, failures: int = 0) -> None:
        self.left = list(range(count))
        self.failures = failures
        self.asked: list[int] = []

    async def take(self, free: int) -> list[Msg]:
        self.asked.append(free)
        if self.failures:
            self.failures -= 1
            raise ConnectionError("the broker went away for a moment")
        if not self.left:
            await asyncio.sleep(0.05)
            raise TimeoutError
        taken, self.left = self.left[:free], self.left[free:]
        return [cast(Msg, number) for number in taken]


async def test_every_message_runs_and_never_more_than_the_concurrency_at_once() -> None:
    source, running, done, most = Source(10), set[Any](), list[Any](), 0

    async def handle(message: Msg) -> None:
        nonlocal most
        running.add(message)
        most = max(most, len(running))
        await asyncio.sleep(0.02)
        running.discard(message)
        done.append(message)

    worker = PullWorker(source.take, handle, concurrency=3, what="test messages")
    worker.start()
    for _ in range(100):
        if len(done) == 10:
            break
        await asyncio.sleep(0.02)
    await worker.stop(1.0)
    assert sorted(done) == list(range(10))
    assert most == 3
    assert max(source.asked) == 3


async def test_a_failed_take_is_retried(caplog: pytest.LogCaptureFixture) -> None:
    source, done = Source(2, failures=1), list[Any]()

    async def handle(message: Msg) -> None:
        done.append(message)

    worker = PullWorker(source.take, handle, concurrency=2, what="test messages")
    worker.start()
    for _ in range(100):
        if len(done) == 2:
            break
        await asyncio.sleep(0.02)
    await worker.stop(1.0)
    assert sorted(done) == [0, 1]
    assert "taking test messages failed" in caplog.text


async def test_stop_drains_what_runs_and_cancels_what_outlives_the_drain() -> None:
    source, finished, cancelled = Source(2), list[Any](), list[Any]()

    async def handle(message: Msg) -> None:
        try:
            await asyncio.sleep(0.05 if message == 0 else 10)
            finished.append(message)
        except asyncio.CancelledError:
            cancelled.append(message)
            raise

    worker = PullWorker(source.take, handle, concurrency=2, what="test messages")
    worker.start()
    while len(worker.active) < 2:
        await asyncio.sleep(0.01)
    await worker.stop(0.3)
    assert finished == [0] and cancelled == [1]
    assert not worker.active


async def test_a_running_message_heartbeats_every_delivery() -> None:
    class Delivery:
        beats = 0

        async def in_progress(self) -> None:
            self.beats += 1

    first, second = Delivery(), Delivery()
    deliveries = [cast(Msg, first)]
    heartbeat = in_progress(deliveries, 0.05, "a test message")
    await asyncio.sleep(0.12)
    deliveries.append(cast(Msg, second))  # a redelivery joins the running message
    await asyncio.sleep(0.1)
    await heartbeat.stop()
    assert first.beats >= 3 and second.beats >= 1
