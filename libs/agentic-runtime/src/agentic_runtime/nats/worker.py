"""The one JetStream worker loop: messages taken from a pull source, at most `concurrency` running at once, each
in a task of its own; a running message heartbeats (`in_progress`) so that its ack wait redelivers the messages of
a dead worker soon and never those of a live one. What a message means, and its ack or nak, is the handler's.

Used by the tool consumers (tools/consumer.py), the executor's background turns and retrieval's ingestion."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError

from agentic_runtime.heartbeat import Heartbeat

log = logging.getLogger(__name__)

_RETRY_PAUSE_SECONDS = 0.5  # after a failed take: the broker went away for a moment
_UNWIND_SECONDS = 5.0  # how long cancelled handlers get to unwind (nak, record a failure) at stop


class PullWorker:
    """`take(free)` returns up to `free` messages (none at a timeout); `handle(message)` runs one."""

    def __init__(self, take: Callable[[int], Awaitable[list[Msg]]], handle: Callable[[Msg], Coroutine[Any, Any, None]], *,
                 concurrency: int, what: str) -> None:
        self.take = take
        self.handle = handle
        self.concurrency = concurrency
        self.what = what
        self.active: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(concurrency)
        self._loop: asyncio.Task[None] | None = None
        # Also checked by the loop: nats-py's fetch may turn the cancel of a stop into a timeout.
        self._stopping = False

    def start(self) -> None:
        self._loop = asyncio.get_running_loop().create_task(self._take_forever())

    async def _take_forever(self) -> None:
        while not self._stopping:
            await self._slots.acquire()
            free = 1
            while free < self.concurrency and not self._slots.locked():
                await self._slots.acquire()
                free += 1
            try:
                messages = await self.take(free)
            except (NatsTimeoutError, TimeoutError):
                messages = []
            except Exception as exc:  # the broker went away for a moment: try again
                log.warning("taking %s failed: %s", self.what, exc)
                messages = []
                await asyncio.sleep(_RETRY_PAUSE_SECONDS)
            for _ in range(free - len(messages)):
                self._slots.release()
            for message in messages:
                task = asyncio.create_task(self.handle(message))
                self.active.add(task)
                task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.active.discard(task)
        self._slots.release()
        if not task.cancelled() and (exc := task.exception()) is not None:  # collected: never left for the loop
            log.error("a task of %s failed", self.what, exc_info=exc)

    async def stop(self, drain_seconds: float) -> None:
        """Takes no more; running messages get `drain_seconds`, then are cancelled (what they leave unacknowledged
        is redelivered)."""
        self._stopping = True
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)
        if self.active:
            await asyncio.wait(set(self.active), timeout=drain_seconds)
        for task in list(self.active):
            task.cancel()
        if self.active:
            await asyncio.wait(set(self.active), timeout=_UNWIND_SECONDS)


def in_progress(deliveries: list[Msg], interval: float, what: str) -> Heartbeat:
    """`in_progress` on every delivery of a running message every `interval`, so that none is redelivered while it
    runs (the list may grow: a redelivery that joins the running message)."""

    async def beat() -> None:
        for message in deliveries:
            try:
                await message.in_progress()
            except Exception as exc:  # a missed beat is retried at the next one
                log.debug("the heartbeat of %s failed: %r", what, exc)

    return Heartbeat(interval, beat, f"the heartbeat of {what}")
