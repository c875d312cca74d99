"""WebSocket mode: `GET /v1/responses` upgraded, `response.create` messages in, the SSE events out as messages.

Each request runs on the executor exactly as a streamed HTTP turn does. Requests
name a lane (`stream_id`): lanes run concurrently, one lane's requests run in
order. Admission is checked when a message arrives (requests and bytes queued,
lanes held) and refused at once with a 429 `error` event that changes nothing.
Unstored responses are remembered per lane for `previous_response_id`
continuations (`SocketHistory`). A disconnect cancels the connection's work;
SIGTERM lets running work finish, refuses new work, then closes with 1001.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any

import orjson
from agentic.v1 import common_pb2
from agentic_core.errors import AgenticError, InvalidRequest, PayloadTooLarge, RateLimited, ServiceUnavailable
from agentic_core.responses.socket_history import Retained, SocketHistory
from fastapi import APIRouter, WebSocket
from fastapi.responses import Response
from starlette.websockets import WebSocketDisconnect

from agentic_gateway.accounting.audit import record_socket_turn
from agentic_gateway.context import Gateway, gateway_of
from agentic_gateway.metrics import REQUESTS, WEBSOCKET_CONTINUATIONS, WEBSOCKETS
from agentic_gateway.relay.socket_events import event_too_large, socket_events

log = logging.getLogger(__name__)
router = APIRouter()

_ROUTE = "responses_websocket"
_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_CONTINUABLE = frozenset({"response.completed", "response.incomplete"})
_DEFAULT_LANE = ""
_MAX_STREAM_ID_CHARS = 128
_GOING_AWAY = 1001


@router.websocket("/v1/responses")
async def responses_socket(websocket: WebSocket) -> None:
    gateway = gateway_of(websocket)
    try:
        if getattr(websocket.app.state, "draining", False):
            raise ServiceUnavailable("The gateway is shutting down; connect again.", code="server_shutting_down")
        principal = await _authenticate(gateway, websocket)
        opened = gateway.accounting.sockets.admit(principal.tenant)  # the tenant's open sockets (429 beyond)
    except AgenticError as error:
        REQUESTS.labels(route=_ROUTE, status=error.http_status).inc()
        await _deny(websocket, error)
        return
    try:
        await websocket.accept()
        socket = ResponsesSocket(websocket, gateway, principal)
        gateway.connections.add(socket)
        WEBSOCKETS.inc()
        try:
            await socket.serve()
        finally:
            WEBSOCKETS.dec()
            gateway.connections.discard(socket)
    finally:
        opened.release()


@router.get("/v1/responses")
async def upgrade_required() -> Response:
    error = InvalidRequest("GET /v1/responses is the WebSocket mode of the Responses API: send a WebSocket upgrade.",
                           code="upgrade_required")
    return Response(content=error.body(), status_code=426, media_type="application/json",
                    headers={"upgrade": "websocket", "connection": "Upgrade"})


async def _authenticate(gateway: Gateway, websocket: WebSocket) -> common_pb2.Principal:
    """The HTTP routes' authenticator: keys, OIDC tokens (whose keys may need fetching), admin keys."""
    headers = websocket.headers
    return await gateway.auth.authenticate(headers.get("authorization"), headers.get("x-api-key"))


async def _deny(websocket: WebSocket, error: AgenticError) -> None:
    """Refuses the upgrade with the error's HTTP status and OpenAI body where the server can (uvicorn can)."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(
            Response(content=error.body(), status_code=error.http_status, media_type="application/json"))
    else:
        await websocket.close(code=1008, reason=error.message[:120])


def error_event(error: AgenticError, stream_id: str | None) -> bytes:
    """The WebSocket form of an error: the HTTP status it would have had, and OpenAI's error object."""
    event: dict[str, Any] = {"type": "error", "status": error.http_status, **error.to_dict()}
    if stream_id is not None:
        event["stream_id"] = stream_id
    return orjson.dumps(event)


def in_lane(data: bytes, stream_id: str | None) -> bytes:
    """The event as sent: `stream_id` spliced in front when the request named one (no re-parse)."""
    if stream_id is None:
        return data
    return b'{"stream_id":' + orjson.dumps(stream_id) + b"," + data[1:]


@dataclass(slots=True)
class _Request:
    payload: dict[str, Any]
    size: int
    stream_id: str | None

    @property
    def lane(self) -> str:
        return self.stream_id if self.stream_id is not None else _DEFAULT_LANE


class ResponsesSocket:
    """One accepted connection: its reader (this task) and one worker task per busy lane. Every write holds
    `_writing`, so frames never interleave and a lane waits for its event to be written (backpressure: a
    slow reader holds at most one event per lane in memory)."""

    def __init__(self, websocket: WebSocket, gateway: Gateway, principal: common_pb2.Principal) -> None:
        settings = gateway.settings
        self.websocket = websocket
        self.gateway = gateway
        self.principal = principal
        self._writing = asyncio.Lock()
        self._closing: asyncio.Task[None] | None = None
        self.queues: dict[str, deque[_Request]] = {}
        self.workers: dict[str, asyncio.Task[None]] = {}
        self.history = SocketHistory(settings.ws_retained_items, settings.ws_retained_bytes)
        self.pending = 0
        self.pending_bytes = 0
        self.draining = False

    def drain(self) -> None:
        """SIGTERM: new requests are refused; the socket closes once the running ones end."""
        self.draining = True
        if self.pending == 0:
            self._close_going_away()

    async def serve(self) -> None:
        try:
            await self._read()
        finally:
            # The client left (or the socket broke): its work stops, and nothing half-done is stored.
            for task in self.workers.values():
                task.cancel()
            await asyncio.gather(*self.workers.values(), return_exceptions=True)

    async def _read(self) -> None:
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("bytes") or (message.get("text") or "").encode()
            request = await self._admit(raw)
            if request is not None:
                self._enqueue(request)

    async def _admit(self, raw: bytes) -> _Request | None:
        """The request, or None after answering an `error` event (a refusal changes no state)."""
        stream_id: str | None = None
        try:
            payload = _create_payload(raw)
            stream_id = _stream_id_of(payload)
            self._check_limits(stream_id if stream_id is not None else _DEFAULT_LANE, len(raw))
        except AgenticError as error:
            REQUESTS.labels(route=_ROUTE, status=error.http_status).inc()
            await self._send(error_event(error, stream_id))
            return None
        return _Request(payload, len(raw), stream_id)

    def _check_limits(self, lane: str, size: int) -> None:
        settings = self.gateway.settings
        if self.draining:
            raise ServiceUnavailable("The gateway is shutting down; send this request on a new connection.",
                                     code="server_shutting_down")
        if size > settings.ws_max_pending_bytes:
            raise PayloadTooLarge(f"The message is {size} bytes; this connection takes requests of up to "
                                  f"{settings.ws_max_pending_bytes} bytes.")
        if self.pending >= settings.ws_max_pending_requests:
            raise RateLimited(f"This connection already has {self.pending} requests running or queued; the limit "
                              f"is {settings.ws_max_pending_requests}.", code="websocket_pending_requests_exceeded")
        if self.pending_bytes + size > settings.ws_max_pending_bytes:
            raise RateLimited(f"This connection's running and queued requests would take {self.pending_bytes + size} "
                              f"bytes; the limit is {settings.ws_max_pending_bytes}.",
                              code="websocket_pending_bytes_exceeded")
        if lane not in self.queues and not self.history.has_lane(lane) and self._lanes_held() >= settings.ws_max_lanes:
            raise RateLimited(f"This connection already holds {settings.ws_max_lanes} lanes (`stream_id`s), the "
                              f"limit.", param="stream_id", code="websocket_lanes_exceeded")

    def _lanes_held(self) -> int:
        return len(self.queues) + sum(1 for lane in self.history.lane_names() if lane not in self.queues)

    def _enqueue(self, request: _Request) -> None:
        self.pending += 1
        self.pending_bytes += request.size
        lane = request.lane
        self.queues.setdefault(lane, deque()).append(request)
        if lane not in self.workers:
            self.workers[lane] = asyncio.create_task(self._run_lane(lane))

    async def _run_lane(self, lane: str) -> None:
        queue = self.queues[lane]
        while queue:
            request = queue[0]
            try:
                await self._execute(request)
            finally:
                queue.popleft()
                self.pending -= 1
                self.pending_bytes -= request.size
        del self.queues[lane]
        del self.workers[lane]
        if self.draining and self.pending == 0:
            self._close_going_away()

    async def _execute(self, request: _Request) -> None:
        """One turn on the executor; its events relayed as they come; an unstored response remembered."""
        request_id, principal = uuid.uuid4().hex, self.principal
        try:
            principal = await _authenticate(self.gateway, self.websocket)  # keys may have changed since the upgrade
            previous = request.payload.get("previous_response_id")
            payload, context = self.history.expand(request.payload, request.size)
            if isinstance(previous, str):
                WEBSOCKET_CONTINUATIONS.labels(source="connection" if self.history.holds(previous) else "state").inc()
            admission = self.gateway.accounting.admit_turn(principal.tenant)  # the tenant's quotas (429 beyond)
        except AgenticError as error:
            REQUESTS.labels(route=_ROUTE, status=error.http_status).inc()
            record_socket_turn(self.gateway.audit, principal, error.http_status, request_id, request.payload.get("model"))
            await self._send(error_event(error, request.stream_id))
            return
        status = 200
        failed = False
        events = socket_events(self.gateway, payload, principal, request_id, self.gateway.accounting.usage_tap("", principal),
                               previous if isinstance(previous, str) else None)
        try:
            async for event_type, event_data in events:
                data = in_lane(event_data, request.stream_id)
                if len(data) > self.gateway.settings.ws_max_event_bytes:
                    raise event_too_large(self.gateway.settings.ws_max_event_bytes, len(data))
                if event_type in _TERMINAL and context is not None:
                    self._remember(request.lane, event_type, event_data, context)
                failed = failed or event_type == "response.failed"
                await self._send(data)
        except AgenticError as error:
            status, failed = error.http_status, True
            await self._send(error_event(error, request.stream_id))
        finally:
            if failed and isinstance(previous, str):
                self.history.evict(previous)  # a failed continuation leaves no state to continue from
            await events.aclose()
            admission.release()
            REQUESTS.labels(route=_ROUTE, status=status).inc()
            record_socket_turn(self.gateway.audit, principal, status, request_id, payload.get("model"))

    def _remember(self, lane: str, event_type: str, data: bytes, context: Retained) -> None:
        if event_type not in _CONTINUABLE:
            return
        response = orjson.loads(data)["response"]
        self.history.record(lane, response["id"], context, response.get("output") or [], len(data))

    async def _send(self, data: bytes) -> None:
        async with self._writing:
            try:
                await self.websocket.send({"type": "websocket.send", "text": data.decode()})
            except (WebSocketDisconnect, RuntimeError, OSError):
                pass  # the client left: the reader sees the disconnect and stops the connection's work

    def _close_going_away(self) -> None:
        """Closes with 1001 after whatever is being written (called when draining and idle)."""
        if self._closing is None:
            self._closing = asyncio.get_running_loop().create_task(self._close())

    async def _close(self) -> None:
        async with self._writing:
            with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
                await self.websocket.close(code=_GOING_AWAY, reason="server shutting down")


def _create_payload(raw: bytes) -> dict[str, Any]:
    try:
        payload = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"The message is not valid JSON: {exc}", code="invalid_json") from None
    if not isinstance(payload, dict):
        raise InvalidRequest("Each message must be a JSON object.", code="invalid_json")
    event_type = payload.pop("type", None)
    if event_type != "response.create":
        raise InvalidRequest(f"Unsupported message type {event_type!r}: this gateway takes `response.create`.",
                             param="type", code="unsupported_event_type")
    if "stream" in payload and payload.pop("stream") is not True:
        raise InvalidRequest("WebSocket responses are always streamed; omit `stream`.", param="stream",
                             code="invalid_value")
    if payload.get("background"):
        raise InvalidRequest("`background` is not supported over WebSocket; use POST /v1/responses.",
                             param="background", code="unsupported_parameter")
    payload["stream"] = True
    return payload


def _stream_id_of(payload: dict[str, Any]) -> str | None:
    stream_id = payload.pop("stream_id", None)
    if stream_id is None:
        return None
    if not isinstance(stream_id, str) or not 0 < len(stream_id) <= _MAX_STREAM_ID_CHARS:
        raise InvalidRequest(f"Invalid value for 'stream_id': expected a string of 1 to {_MAX_STREAM_ID_CHARS} "
                             f"characters.", param="stream_id", code="invalid_value")
    return stream_id
