"""One periodic beat in a task of its own: JetStream in-progress acks of running messages, conversation lease
renewals, the recorders' batches. A beat that fails is logged and the next one tries again (a missed beat only
shortens a lease); a beat that returns False ends the heartbeat."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Heartbeat:
    """Calls `beat` every `interval` seconds, the first time one interval after it is made, until stopped."""

    def __init__(self, interval: float, beat: Callable[[], Awaitable[bool | None]], what: str) -> None:
        self.interval = interval
        self.beat = beat
        self.what = what
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                if await self.beat() is False:
                    return
            except Exception as exc:  # retried at the next beat
                log.warning("%s failed (retried at the next beat): %r", self.what, exc)

    def cancel(self) -> None:
        """Stops it without waiting (from a `finally` that must not wait)."""
        self._task.cancel()

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
