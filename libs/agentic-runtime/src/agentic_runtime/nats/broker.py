"""NATS JetStream: one connection per process, and the streams the design names."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js.api import KeyValueConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError
from nats.js.kv import KeyValue

from agentic_runtime.settings import TransportSecuritySettings
from agentic_runtime.tls import nats_options

# The tool protocol names its stream; it is created here with the others (and still importable from here).
from agentic_runtime.tools.protocol import TOOLS_STREAM

log = logging.getLogger(__name__)
T = TypeVar("T")

# Errors of a broker that is stalled, restarting or reconnecting: the same request may succeed moments later.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TimeoutError, nats.errors.NoRespondersError, nats.errors.ConnectionReconnectingError,
    nats.errors.StaleConnectionError, nats.errors.OutboundBufferLimitError, nats.errors.FlushTimeoutError,
    nats.js.errors.NoStreamResponseError, nats.js.errors.ServiceUnavailableError,
)
REQUEST_TIMEOUT_SECONDS = 5.0  # the most one broker request may take before it is retried
_RETRY_PAUSE_SECONDS = (0.1, 1.0)  # the first and the longest pause between tries


async def retrying(request: Callable[[float], Awaitable[T]], deadline: float, what: str) -> T:
    """`request(timeout)` again and again while the broker fails transiently, until `deadline` (time.monotonic()).

    A request that JetStream dedupes (a publish with a message id, a KV put of the same value) is safe to repeat;
    raises `TimeoutError` at the deadline, or the first non-transient error.
    """
    pause = _RETRY_PAUSE_SECONDS[0]
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{what}: the message broker did not answer in time")
        try:
            return await request(min(left, REQUEST_TIMEOUT_SECONDS))
        except TRANSIENT_ERRORS as exc:
            log.warning("%s failed, retrying: %r", what, exc)
        await asyncio.sleep(max(0.0, min(pause, deadline - time.monotonic())))
        pause = min(pause * 2, _RETRY_PAUSE_SECONDS[1])

# Each background response's public events, `responses.<id>.events`, kept for resuming streams.
RESPONSES_STREAM = StreamConfig(
    name="RESPONSES",
    subjects=["responses.*.events"],
    retention=RetentionPolicy.LIMITS,
    max_age=24 * 3600.0,
)
# Background turns waiting for an executor: each message is one turn, taken once (work queue), on its tenant's
# subject `background.turns.<tenant token>` (`background.turns` alone: turns queued before subjects were per tenant).
BACKGROUND_STREAM = StreamConfig(
    name="BACKGROUND",
    subjects=["background.turns", "background.turns.*"],
    retention=RetentionPolicy.WORK_QUEUE,
)


# Operator tools the runners offer (name → function definition), written by every runner at start-up.
TOOL_DEFINITIONS_BUCKET = "TOOL_DEFINITIONS"


def inbox_prefix(name: str) -> str:
    """The reply subjects of a service's requests (JetStream API answers, pulled messages, watched keys):
    `_INBOX.<service>`, so that a broker that limits each service's subscriptions (the chart's NATS users) gives it
    only its own answers. Apart from `_INBOX.agentic-executor.`, where tool results come back (tools/dispatch.py)."""
    return "_INBOX." + name.removeprefix("agentic-")


async def connect(url: str, name: str, security: TransportSecuritySettings) -> Client:
    """Connect, retrying in the background after a drop; a bad URL fails at start-up. TLS and credentials come from
    `security` (`AGENTIC_NATS_*`)."""
    client = Client()
    try:
        await client.connect(
            url,
            name=name,
            connect_timeout=5,
            max_reconnect_attempts=-1,
            reconnect_time_wait=1,
            allow_reconnect=True,
            inbox_prefix=inbox_prefix(name),
            **nats_options(security),  # TLS and credentials
        )
    except BaseException:
        # nats-py leaves the socket of an attempt cut short (a start-up timeout, a shutdown) open.
        await close_quietly(client)
        raise
    return client


async def close_quietly(client: Client, timeout: float = 1.0) -> None:
    """Close a client that may never have connected. Its socket is closed at once; waiting for a TLS socket to
    finish closing can hang after a refused handshake, so that wait is bounded."""
    try:
        await asyncio.wait_for(client.close(), timeout)
    except Exception as error:  # a timeout too: best effort, the caller is already handling a failure
        log.debug("closing an unconnected NATS client: %r", error)


async def ensure_streams(client: Client, responses_retention_seconds: float | None = None) -> None:
    """Create (or update to our config) the JetStream streams. Safe to run from every replica. The RESPONSES
    stream's retention is the executor's setting: only a caller that names it updates an existing stream."""
    jetstream = client.jetstream()
    responses = RESPONSES_STREAM
    if responses_retention_seconds is not None:
        responses = StreamConfig(name=responses.name, subjects=responses.subjects, retention=responses.retention,
                                 max_age=responses_retention_seconds)
    for config, update in ((TOOLS_STREAM, True), (BACKGROUND_STREAM, True), (responses, responses_retention_seconds is not None)):
        try:
            await jetstream.add_stream(config)
        except BadRequestError:
            if update:
                await jetstream.update_stream(config)


async def ensure_tools_stream(client: Client) -> None:
    """Create (or update to our config) the TOOLS stream only: what tool consumers need, and all that a NATS user
    limited to the tool protocol may create (the other streams are the executor's)."""
    jetstream = client.jetstream()
    try:
        await jetstream.add_stream(TOOLS_STREAM)
    except BadRequestError:
        await jetstream.update_stream(TOOLS_STREAM)


async def ensure_key_value(client: Client, bucket: str, ttl_seconds: float | None = None, in_memory: bool = False) -> KeyValue:
    """The KV bucket, created on first use (idempotent across replicas)."""
    jetstream = client.jetstream()
    try:
        return await jetstream.key_value(bucket)
    except BucketNotFoundError:
        storage = StorageType.MEMORY if in_memory else StorageType.FILE
        return await jetstream.create_key_value(KeyValueConfig(bucket=bucket, ttl=ttl_seconds, storage=storage))
