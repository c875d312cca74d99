"""SSE streams that send a keepalive frame after a stretch of silence, so that proxies and clients with idle
timeouts keep a stream open while a turn is quiet (a long gateway tool call, a slow model server).

One watchdog task per stream, not per event: it sleeps until the stream has been
quiet for the interval, then sends the keepalive unless something was sent
meanwhile. A chunk waits for a keepalive being written, and a keepalive is not
started while a chunk is, so frames never interleave (two flags rather than a
lock: the per-chunk cost is an attribute test); the watchdog ends with the body.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, Mapping

from fastapi.responses import StreamingResponse
from starlette.types import Send

# A comment line: every SSE client ignores it (OpenAI's SDKs included).
COMMENT_FRAME = b": keepalive\n\n"
# Anthropic's own keepalive event, which its SDKs expect on Messages streams.
PING_FRAME = b'event: ping\ndata: {"type": "ping"}\n\n'
_FRAME_ENDS = (b"\n\n", b"\r\n\r\n")


class KeepaliveStreamingResponse(StreamingResponse):
    """`interval`: seconds of silence before `keepalive` is sent. `whole_frames`: every chunk of the body is whole
    SSE frames (the gateway's own streams); otherwise (relayed upstream bytes) a keepalive is only sent after a
    chunk that ended a frame, never inside one. `cut_frame`: the terminal error event sent when the server cuts
    the stream (its drain bound passed at shutdown), so the client learns the turn did not finish."""

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        interval: float,
        keepalive: bytes = COMMENT_FRAME,
        whole_frames: bool = True,
        cut_frame: bytes | None = None,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = "text/event-stream",
    ) -> None:
        super().__init__(content, status_code=status_code, headers=headers, media_type=media_type)
        self.interval = interval
        self.keepalive = keepalive
        self.whole_frames = whole_frames
        self.cut_frame = cut_frame
        self._quiet_since = 0.0
        self._between_frames = True
        self._sending = False  # a chunk is being written
        self._keepalive_written: asyncio.Future[None] | None = None  # set while a keepalive is being written

    async def stream_response(self, send: Send) -> None:
        loop = asyncio.get_running_loop()
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        self._quiet_since = loop.time()
        watchdog = asyncio.create_task(self._watch(send, loop))
        try:
            async for chunk in self.body_iterator:
                if not isinstance(chunk, bytes | memoryview):
                    chunk = chunk.encode(self.charset)
                if self._keepalive_written is not None:
                    await self._keepalive_written  # never two frames at once
                self._sending = True
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self._sending = False
                self._quiet_since = loop.time()
                if not self.whole_frames:
                    self._between_frames = bytes(chunk[-4:]).endswith(_FRAME_ENDS)
        except asyncio.CancelledError:
            if self.cut_frame is not None and self._between_frames and self._keepalive_written is None:
                with contextlib.suppress(Exception):  # a client that already left
                    await send({"type": "http.response.body", "body": self.cut_frame, "more_body": False})
            raise
        finally:
            watchdog.cancel()
            # Collects its end, even a failed send to a client that left, without hiding our own cancellation.
            await asyncio.gather(watchdog, return_exceptions=True)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _watch(self, send: Send, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            await asyncio.sleep(max(self._quiet_since + self.interval - loop.time(), 0.0))
            if loop.time() - self._quiet_since < self.interval:
                continue  # a chunk went out while this slept
            if self._between_frames and not self._sending:
                # Checked and claimed with no await in between: the body loop waits for this write.
                self._keepalive_written = written = loop.create_future()
                try:
                    await send({"type": "http.response.body", "body": self.keepalive, "more_body": True})
                finally:
                    self._keepalive_written = None
                    if not written.done():  # cancelled with a body loop that was waiting on it
                        written.set_result(None)
            # Also when skipped (inside an upstream frame, a chunk being written): look again one interval later.
            self._quiet_since = loop.time()
