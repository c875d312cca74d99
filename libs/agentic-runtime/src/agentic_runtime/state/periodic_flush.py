"""What the recorders share: records are kept in memory and a task sends them every `flush_seconds`, started by
the first record; `close` stops the task and sends what is left."""

from __future__ import annotations

import asyncio
import contextlib


class PeriodicFlush:
    flush_seconds: float
    _task: asyncio.Task[None] | None = None

    async def flush(self) -> None:
        raise NotImplementedError

    def _flush_soon(self) -> None:
        """Called on each record: starts the flushing task once."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._flush_forever())

    async def _flush_forever(self) -> None:
        while True:
            await asyncio.sleep(self.flush_seconds)
            await self.flush()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.flush()
