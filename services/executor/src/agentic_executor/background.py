"""Background responses: turns that outlive the client, run by whichever executor takes them from the queue.

`submit` stores the queued response (state) and queues the turn (JetStream work
queue `BACKGROUND`). Every executor runs a `BackgroundWorker` taking at most its
concurrency of turns at once. A taken turn's queue message is its lease: the
worker heartbeats it while the turn runs; when an executor dies, JetStream
hands the message to another worker after the lease (the ack wait), which finds
the response still `in_progress` and fails it (`executor_lost`). The events go
to `responses.<id>.events` (`ResponseEvents`), whoever reads them; a cancel
reaches the running worker over core NATS and is recorded in state first, so a
worker that starts later sees it too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from agentic.v1 import common_pb2, executor_pb2, state_pb2
from agentic_core.errors import AgenticError, InvalidRequest
from agentic_core.responses.round_outcome import TurnEnding
from agentic_core.responses.stream import PublicEvent
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_runtime.credential_seal import SEALED_CREDENTIALS, CredentialSeal, CredentialsUnavailable
from agentic_runtime.nats.background_queue import WAKE_SUBJECT, tenant_subject
from agentic_runtime.nats.worker import PullWorker, in_progress
from agentic_runtime.state.client import StateClient
from nats.aio.client import Client
from nats.aio.msg import Msg

from agentic_executor.background_signing import SIGNATURE_HEADER, BackgroundSigner
from agentic_executor.fair_queue import MAX_DELIVERIES, FairQueue, drop_queued
from agentic_executor.metrics import BACKGROUND_UNVERIFIED
from agentic_executor.response_events import TERMINAL_EVENTS, ResponseEvents, cancel_subject
from agentic_executor.turn import TurnRunner
from agentic_executor.turn_context import read_turn_request
from agentic_executor.turn_record import response_object

log = logging.getLogger(__name__)

ENDED = frozenset({"completed", "incomplete", "failed", "cancelled"})


@dataclass(frozen=True, slots=True)
class BackgroundPolicy:
    concurrency: int = 16          # turns one executor runs at once
    lease_seconds: float = 30.0    # a lost executor's turn fails after about this long
    cancel_wait_seconds: float = 10.0
    # MCP credentials of a queued turn are sealed while it waits in the queue (on NATS's disk).
    credentials: CredentialSeal = field(default_factory=lambda: CredentialSeal(None))
    # Signs the turns this executor queues and verifies the ones it takes (background_signing.py).
    signer: BackgroundSigner = field(default_factory=lambda: BackgroundSigner(None))


class BackgroundTurns:
    """What the Execute, StreamResponse and CancelResponse calls need; the worker runs the turns."""

    def __init__(self, runner: TurnRunner, state: StateClient, client: Client, policy: BackgroundPolicy) -> None:
        self.runner = runner
        self.state = state
        self.client = client
        self.events = ResponseEvents(client)
        self.policy = policy

    async def submit(self, request: executor_pb2.ExecuteRequest, parsed: dict[str, Any]) -> tuple[str, dict[str, object]]:
        """Validates the request (`parsed`: its body, read once by the servicer), stores the queued response and
        queues the turn; returns the id and the object."""
        context = read_turn_request(request, parsed, self.runner.router)
        self.policy.signer.ensure_available()  # refused before anything is stored
        self.runner.policy.media.check(context.input_items)  # a refused URL is a 400 now; the fetch waits for the turn
        if not context.request.store:
            raise InvalidRequest("Background responses must be stored: `background: true` needs `store: true`.",
                                 param="background", code="invalid_value")
        # What the turn continues must be the caller's: refused now (404), as a foreground turn would be, not queued.
        await self.runner.history.read(context.principal, previous_response_id=context.request.previous_response_id,
                                       conversation_id=context.conversation_id)
        # So are the stores a file_search tool names (checked again when the turn runs).
        await self.runner.policy.retrieval.check_stores(context.principal, context.request.tools or [])
        queued_request = self._sealed_credentials(request)
        queued = response_object(context, TurnSoFar(), TurnEnding("queued"))
        await self.state.create_background(context.principal, context.response_id, orjson.dumps(queued))
        job = executor_pb2.ExecuteRequest()
        job.CopyFrom(request)
        job.response_id, job.stream = context.response_id, True
        job.request_json = queued_request
        payload = job.SerializeToString()
        # The tenant's own subject: its lane, and what its concurrency quota counts (background_queue.py).
        await self.client.jetstream().publish(tenant_subject(context.principal.tenant), payload, headers={
            "Nats-Msg-Id": context.response_id, SIGNATURE_HEADER: self.policy.signer.sign(payload)})
        await self.client.publish(WAKE_SUBJECT, b"")  # idle executors look at once
        return context.response_id, queued

    def _sealed_credentials(self, request: executor_pb2.ExecuteRequest) -> bytes:
        """The request as it waits in the queue: its MCP credentials sealed for the tenant (checked before the
        response is stored, so a refusal leaves nothing)."""
        if b'"mcp"' not in request.request_json:
            return request.request_json
        try:
            sealed = self.policy.credentials.seal_request(orjson.loads(request.request_json), request.principal.tenant)
        except CredentialsUnavailable:
            raise InvalidRequest("A background response with MCP `authorization` or `headers` needs the gateway's "
                                 "credentials key (AGENTIC_CREDENTIALS_KEY), which is not set.", param="tools",
                                 code="background_credentials_unavailable") from None
        return request.request_json if sealed is None else orjson.dumps(sealed)

    async def stream(self, principal: common_pb2.Principal, response_id: str, starting_after: int) -> AsyncIterator[PublicEvent]:
        """Another tenant's id, or an id that is not a background response, is refused before any event."""
        row = await self._row(principal, response_id, "streamed")
        async for event in self.events.read(response_id, starting_after, ended=row.status in ENDED):
            yield event

    async def cancel(self, principal: common_pb2.Principal, response_id: str) -> bytes:
        """The response in its final state (or as it is after `cancel_wait_seconds`)."""
        await self._row(principal, response_id, "cancelled")
        row = await self.state.cancel_background(principal, response_id)
        if row.previous_status == "queued":  # cancelled before any executor took it: end its stream here
            await drop_queued(self.client, principal.tenant, response_id)  # its tenant's slot is free at once
            await self._publish_terminal(response_id, "response.cancelled", row.response)
            return bytes(row.response)
        if row.status in ENDED:
            return bytes(row.response)
        await self.client.publish(cancel_subject(response_id), b"")
        deadline = time.monotonic() + self.policy.cancel_wait_seconds
        while row.status not in ENDED and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            row = await self.state.get_background(principal, response_id)
        return bytes(row.response)

    async def _row(self, principal: common_pb2.Principal, response_id: str, verb: str) -> state_pb2.BackgroundState:
        try:
            return await self.state.get_background(principal, response_id)
        except AgenticError as error:
            if error.http_status != 404:
                raise
            await self.state.get_response(principal, response_id)  # 404 when it is not there at all
            raise InvalidRequest(f"Only background responses can be {verb}.", param="response_id",
                                 code="not_background") from None

    async def _publish_terminal(self, response_id: str, event_type: str, response: bytes) -> None:
        sequence = await self.events.next_sequence(response_id)
        data = b'{"type":"' + event_type.encode() + b'","response":' + response + b',"sequence_number":' \
            + str(sequence).encode() + b"}"
        await self.events.publish(response_id, (event_type, sequence, data))

    # -- running a turn taken from the queue ----------------------------------------------------------

    async def run(self, message: Msg) -> None:
        """One queued turn, start to end; the message is acknowledged once the response has ended. A message no
        executor signed is acknowledged and dropped before anything is read from or written to state."""
        signature = (message.headers or {}).get(SIGNATURE_HEADER)
        if not self.policy.signer.verify(message.data, signature):
            reason = "unsigned" if not signature else "bad_signature"
            BACKGROUND_UNVERIFIED.labels(reason=reason).inc()
            log.warning("dropped a queued background turn that no executor signed (%s, %d bytes): not run",
                        reason, len(message.data))
            await message.ack()
            return
        request = executor_pb2.ExecuteRequest.FromString(message.data)
        principal, response_id = request.principal, request.response_id
        cancelled = asyncio.Event()

        async def on_cancel(_: Msg) -> None:
            cancelled.set()

        subscription = await self.client.subscribe(cancel_subject(response_id), cb=on_cancel)
        heartbeat = in_progress([message], self.policy.lease_seconds / 3, f"background response {response_id}")
        try:
            try:
                row = await self.state.claim_background(principal, response_id)
            except AgenticError as error:  # 404: another deployment's turn on a shared NATS, or a deleted response
                if error.http_status != 404:
                    raise
                await message.nak(delay=1.0)
                return
            if row.previous_status == "in_progress":  # its executor was lost: the claim failed it
                log.warning("background response %s lost its executor; marked failed", response_id)
                await self._publish_terminal(response_id, "response.failed", row.response)
            elif row.status == "in_progress" and not row.cancel_requested:
                await self._run_turn(request, row.response, cancelled)
            elif row.status == "in_progress":
                await self._finish(principal, response_id, "cancelled", _with_status(row.response, "cancelled"))
        finally:
            heartbeat.cancel()
            await subscription.unsubscribe()
        await message.ack()

    async def _run_turn(self, request: executor_pb2.ExecuteRequest, running: bytes, cancelled: asyncio.Event) -> None:
        principal, response_id = request.principal, request.response_id
        turn = asyncio.create_task(self._publish_turn(request))
        waiter = asyncio.create_task(cancelled.wait())
        try:
            await asyncio.wait({turn, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the executor is stopping: this turn ends here, failed
            turn.cancel()
            await asyncio.gather(turn, return_exceptions=True)
            failed = _failed(running, "executor_stopped", "The executor stopped before this response finished.")
            await asyncio.shield(self._finish(principal, response_id, "failed", failed))
            raise
        finally:
            waiter.cancel()
        if not turn.done():  # cancelled by the client
            turn.cancel()
            await asyncio.gather(turn, return_exceptions=True)
            await self._finish(principal, response_id, "cancelled", _with_status(running, "cancelled"))
            return
        try:
            status, response = turn.result()
        except AgenticError as error:  # refused before its first event (the model server said no, ...)
            status, response = "failed", _failed(running, error.code or "server_error", error.message)
            await self._finish(principal, response_id, status, response)
            return
        await self.state.finish_background(principal, response_id, status, response)

    async def _publish_turn(self, request: executor_pb2.ExecuteRequest) -> tuple[str, bytes]:
        """Runs the turn, publishing each event; returns its final status and response object."""
        if SEALED_CREDENTIALS.encode() in request.request_json:  # opened in memory only, for this turn's MCP calls
            opened = executor_pb2.ExecuteRequest()
            opened.CopyFrom(request)
            try:
                payload = self.policy.credentials.open_request(orjson.loads(request.request_json), request.principal.tenant)
            except CredentialsUnavailable as exc:
                raise InvalidRequest(f"This executor cannot open the turn's MCP credentials ({exc}).",
                                     code="background_credentials_unavailable") from None
            opened.request_json = orjson.dumps(payload)
            request = opened
        terminal: PublicEvent | None = None
        async for event in self.runner.stream(request):
            await self.events.publish(request.response_id, event)
            terminal = event
        assert terminal is not None and terminal[0] in TERMINAL_EVENTS, "a streamed turn ends with its terminal event"
        response = orjson.loads(terminal[2])["response"]
        return response["status"], orjson.dumps(response)

    async def _finish(self, principal: common_pb2.Principal, response_id: str, status: str, response: bytes) -> None:
        """Ends a response that no stored turn ended: its row, then its stream's terminal event."""
        row = await self.state.finish_background(principal, response_id, status, response)
        await self._publish_terminal(response_id, f"response.{row.status}", row.response)


class BackgroundWorker:
    """Takes queued turns from JetStream, tenants in turn (fair_queue.py), at most `concurrency` at once, and runs
    them."""

    def __init__(self, turns: BackgroundTurns) -> None:
        self.turns = turns
        self.queue = FairQueue(turns.client, turns.policy.lease_seconds)
        self.worker = PullWorker(self._take, self._run, concurrency=turns.policy.concurrency, what="background turns")
        self._started = False

    async def start(self) -> None:
        await self.queue.start()
        self.worker.start()
        self._started = True

    async def _take(self, free: int) -> list[Msg]:
        return [await self.queue.take()]  # one at a time: the lanes are asked in turn for each

    async def _run(self, message: Msg) -> None:
        try:
            await self.turns.run(message)
        except asyncio.CancelledError:
            raise
        except Exception:  # left unacknowledged: the lease runs out and another worker settles it
            log.exception("a background turn failed unexpectedly")
            if message.metadata.num_delivered >= MAX_DELIVERIES:  # never delivered again: it would hold its slot
                await asyncio.gather(message.ack(), return_exceptions=True)

    async def stop(self, drain_seconds: float) -> None:
        """Stop taking turns, give running ones `drain_seconds`, then end the rest as failed."""
        await self.worker.stop(drain_seconds)
        if self._started:
            await self.queue.close()


def _with_status(response: bytes, status: str) -> bytes:
    return orjson.dumps({**orjson.loads(response), "status": status})


def _failed(response: bytes, code: str, message: str) -> bytes:
    return orjson.dumps({**orjson.loads(response), "status": "failed", "error": {"code": code, "message": message}})
