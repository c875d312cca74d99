"""Stream events that are ready at once leave in one gRPC message.

A model server's chunk often carries several events, and a turn emits several
of its own around them (opening, item and part boundaries); each gRPC message
and each SSE write costs both services far more than the bytes in it. A turn's
events are produced by one task into a bounded queue; the stream takes what is
there each time it writes, so nothing waits to be batched: a lone event leaves
at once, a burst leaves together.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agentic.v1 import executor_pb2

_QUEUED = 256  # events a slow reader lets a turn run ahead by
_END = object()


async def coalesced(events: AsyncIterator[executor_pb2.ExecuteEvent]) -> AsyncIterator[executor_pb2.ExecuteEvent]:
    queue: asyncio.Queue[object] = asyncio.Queue(_QUEUED)

    async def produce() -> None:
        try:
            async for event in events:
                await queue.put(event)
        except Exception as error:  # raised to the reader, in order, after what came before it
            await queue.put(error)
        else:
            await queue.put(_END)

    producer = asyncio.create_task(produce())
    try:
        while True:
            batch = [await queue.get()]
            while not queue.empty() and len(batch) < _QUEUED:
                batch.append(queue.get_nowait())
            ended = batch[-1] is _END or isinstance(batch[-1], Exception)
            ready = [item for item in (batch[:-1] if ended else batch) if isinstance(item, executor_pb2.ExecuteEvent)]
            for message in _messages(ready):
                yield message
            if ended:
                if isinstance(batch[-1], Exception):
                    raise batch[-1]
                return
    finally:
        producer.cancel()
        await asyncio.gather(producer, return_exceptions=True)
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()


def _messages(ready: list[executor_pb2.ExecuteEvent]) -> list[executor_pb2.ExecuteEvent]:
    """Runs of stream events become one `events` message; anything else goes as it came."""
    messages: list[executor_pb2.ExecuteEvent] = []
    run: list[executor_pb2.StreamEvent] = []
    for message in ready:
        if message.WhichOneof("payload") == "event":
            run.append(message.event)
            continue
        messages.extend(_run_message(run))
        run = []
        messages.append(message)
    messages.extend(_run_message(run))
    return messages


def _run_message(run: list[executor_pb2.StreamEvent]) -> list[executor_pb2.ExecuteEvent]:
    if not run:
        return []
    if len(run) == 1:
        return [executor_pb2.ExecuteEvent(event=run[0])]
    return [executor_pb2.ExecuteEvent(events=executor_pb2.StreamEvents(events=run))]
