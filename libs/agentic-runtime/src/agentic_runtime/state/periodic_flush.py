"""What the recorders share: records are kept in memory and a heartbeat sends them every `flush_seconds`, started
by the first record; `close` stops it and sends what is left."""

from __future__ import annotations

from agentic_runtime.heartbeat import Heartbeat


class PeriodicFlush:
    flush_seconds: float
    _beat: Heartbeat | None = None

    async def flush(self) -> None:
        raise NotImplementedError

    def _flush_soon(self) -> None:
        """Called on each record: starts the flushing once."""
        if self._beat is None:
            self._beat = Heartbeat(self.flush_seconds, self.flush, f"sending {type(self).__name__}'s records")

    async def close(self) -> None:
        if self._beat is not None:
            await self._beat.stop()
            self._beat = None
        await self.flush()
