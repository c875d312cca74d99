"""NATS JetStream: one connection per process, and the streams the design names."""

from __future__ import annotations

import logging

import nats
from nats.aio.client import Client
from nats.js.api import RetentionPolicy, StreamConfig
from nats.js.errors import BadRequestError

log = logging.getLogger(__name__)

TOOLS_STREAM = StreamConfig(
    name="TOOLS",
    subjects=["tools.exec.>"],
    retention=RetentionPolicy.WORK_QUEUE,
    max_age=3600.0,
)
RESPONSES_STREAM = StreamConfig(
    name="RESPONSES",
    subjects=["responses.*.events"],
    retention=RetentionPolicy.LIMITS,
    max_age=24 * 3600.0,
)


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
