"""The keepalive watchdog: a keepalive after silence, never inside a relayed frame, never two frames at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agentic_gateway.relay.keepalive import COMMENT_FRAME, PING_FRAME, KeepaliveStreamingResponse

INTERVAL = 0.01


class Client:
    """The ASGI `send` side: what was written, and whether two writes ever overlapped."""

    def __init__(self, write_seconds: float = 0.0) -> None:
        self.bodies: list[bytes] = []
        self.keepalive_seen = asyncio.Event()
        self.write_seconds = write_seconds
        self.writing = 0
        self.overlaps = 0

    async def send(self, message: Any) -> None:
        self.writing += 1
        self.overlaps += self.writing > 1
        try:
            await asyncio.sleep(self.write_seconds)
        finally:  # a write cut short when the stream ends is over too
            self.writing -= 1
        if message["type"] == "http.response.body" and message["body"]:
            self.bodies.append(message["body"])
            if message["body"] in (COMMENT_FRAME, PING_FRAME):
                self.keepalive_seen.set()


async def _stream(body: AsyncIterator[bytes], client: Client, **options: Any) -> None:
    response = KeepaliveStreamingResponse(body, interval=INTERVAL, **options)
    await asyncio.wait_for(response.stream_response(client.send), 10)


async def test_a_quiet_stream_gets_keepalives_between_its_frames() -> None:
    client = Client()

    async def body() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"
        await client.keepalive_seen.wait()
        yield b"data: 2\n\n"

    await _stream(body(), client, keepalive=PING_FRAME)
    assert client.bodies[0] == b"data: 1\n\n" and client.bodies[-1] == b"data: 2\n\n"
    assert set(client.bodies[1:-1]) == {PING_FRAME}


async def test_a_relayed_stream_gets_none_inside_a_frame() -> None:
    client = Client()

    async def body() -> AsyncIterator[bytes]:
        yield b"data: {\"par"
        await asyncio.sleep(INTERVAL * 10)  # silent inside the frame: no keepalive may go out here
        yield b"tial\"}\n\n"
        await client.keepalive_seen.wait()  # after the frame ended, one does

    await _stream(body(), client, whole_frames=False)
    assert client.bodies[:2] == [b"data: {\"par", b"tial\"}\n\n"]
    assert set(client.bodies[2:]) == {COMMENT_FRAME}


async def test_frames_and_keepalives_never_overlap_on_a_slow_client() -> None:
    client = Client(write_seconds=INTERVAL * 3)

    async def body() -> AsyncIterator[bytes]:
        for index in range(5):
            yield b"data: %d\n\n" % index
            await asyncio.sleep(INTERVAL * 2)

    await _stream(body(), client)
    assert client.overlaps == 0
    assert [chunk for chunk in client.bodies if chunk != COMMENT_FRAME] == [b"data: %d\n\n" % i for i in range(5)]
