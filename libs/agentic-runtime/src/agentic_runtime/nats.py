"""NATS JetStream: one connection per process, and the streams the design names."""

from __future__ import annotations

import logging

import nats
from nats.aio.client import Client
from nats.js.api import KeyValueConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError
from nats.js.kv import KeyValue

# The tool protocol names its stream; it is created here with the others (and still importable from here).
from agentic_runtime.tool_protocol import TOOLS_STREAM

log = logging.getLogger(__name__)

RESPONSES_STREAM = StreamConfig(
    name="RESPONSES",
    subjects=["responses.*.events"],
    retention=RetentionPolicy.LIMITS,
    max_age=24 * 3600.0,
)


# Operator tools the runners offer (name → function definition), written by every runner at start-up.
TOOL_DEFINITIONS_BUCKET = "TOOL_DEFINITIONS"


async def connect(url: str, name: str) -> Client:
    """Connect, retrying in the background after a drop; a bad URL fails at start-up."""
    return await nats.connect(
        url,
        name=name,
        connect_timeout=5,
        max_reconnect_attempts=-1,
        reconnect_time_wait=1,
        allow_reconnect=True,
    )


async def ensure_streams(client: Client) -> None:
    """Create (or update to our config) the JetStream streams. Safe to run from every replica."""
    jetstream = client.jetstream()
    for config in (TOOLS_STREAM, RESPONSES_STREAM):
        try:
            await jetstream.add_stream(config)
        except BadRequestError:
            await jetstream.update_stream(config)


async def ensure_key_value(client: Client, bucket: str, ttl_seconds: float | None = None, in_memory: bool = False) -> KeyValue:
    """The KV bucket, created on first use (idempotent across replicas)."""
    jetstream = client.jetstream()
    try:
        return await jetstream.key_value(bucket)
    except BucketNotFoundError:
        storage = StorageType.MEMORY if in_memory else StorageType.FILE
        return await jetstream.create_key_value(KeyValueConfig(bucket=bucket, ttl=ttl_seconds, storage=storage))
