"""A background response's public events in JetStream (`responses.<id>.events`), written once and read by any
executor for any gateway: the stream a client started, or resumes after `starting_after`.

The event type and sequence number travel as headers, so a reader relays the
event's bytes without parsing them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentic_core.errors import InvalidRequest
from agentic_core.responses.stream import PublicEvent
from agentic_runtime.nats.broker import RESPONSES_STREAM
from nats.aio.client import Client
from nats.js.api import DeliverPolicy
from nats.js.errors import NotFoundError

_STREAM = RESPONSES_STREAM.name or "RESPONSES"
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed", "response.cancelled"})
_TYPE_HEADER = "Agentic-Event-Type"
_SEQUENCE_HEADER = "Agentic-Sequence"


def events_subject(response_id: str) -> str:
    return f"responses.{response_id}.events"


def cancel_subject(response_id: str) -> str:
    """Core NATS: the executor running a response listens here for its cancellation."""
    return f"responses.{response_id}.cancel"


class ResponseEvents:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.jetstream = client.jetstream()

    async def publish(self, response_id: str, event: PublicEvent) -> None:
        event_type, sequence, data = event
        # The message id makes a retried publish of the same event a no-op (JetStream's duplicate window).
        headers = {_TYPE_HEADER: event_type, _SEQUENCE_HEADER: str(sequence), "Nats-Msg-Id": f"{response_id}:{sequence}"}
        await self.jetstream.publish(events_subject(response_id), data, headers=headers)

    async def next_sequence(self, response_id: str) -> int:
        """The sequence number after the last event published (0 when there is none)."""
        last = await self._last(response_id)
        return 0 if last is None else last + 1

    async def _last(self, response_id: str) -> int | None:
        try:
            message = await self.jetstream.get_last_msg(_STREAM, events_subject(response_id))
        except NotFoundError:
            return None
        return int((message.headers or {}).get(_SEQUENCE_HEADER, "0"))

    async def read(self, response_id: str, starting_after: int, ended: bool) -> AsyncIterator[PublicEvent]:
        """The events after `starting_after`, then live ones, up to the terminal event. `ended`: the response has
        already ended, so its events must all be kept still."""
        if ended and await self._last(response_id) is None:
            raise _expired()
        subscription = await self.jetstream.subscribe(events_subject(response_id), ordered_consumer=True,
                                                      deliver_policy=DeliverPolicy.ALL)
        try:
            first = True
            while True:
                message = await subscription.next_msg(timeout=None)
                headers = message.headers or {}
                event_type, sequence = headers.get(_TYPE_HEADER, ""), int(headers.get(_SEQUENCE_HEADER, "0"))
                if first and sequence > starting_after + 1:
                    raise _expired()  # the oldest kept event is past the ones asked for: a gap, never relayed
                first = False
                if sequence > starting_after:
                    yield event_type, sequence, message.data
                if event_type in TERMINAL_EVENTS:
                    return
        finally:
            await subscription.unsubscribe()


def _expired() -> InvalidRequest:
    return InvalidRequest("The events of this response asked for are past their retention and no longer kept; "
                          "retrieve the response without `stream`.", param="stream", code="events_expired")
