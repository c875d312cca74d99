"""Every name of the gateway tool protocol on NATS: stream, subjects, headers, durable consumers, result-store keys.

The executor and llm-d publish a `ToolCall` (agentic_core.tools.protocol) on
`subject_for(kind)` in `TOOLS_STREAM`; the runner of that kind (the durable
consumer `durable_name(kind)`) answers on the subject in the `REPLY_HEADER`
header, and keeps the result under `result_key(dispatch_id)` in
`TOOL_RESULTS_BUCKET` so that a redelivered call is answered without running again.

A dispatch id (`<response id>/<call id>`) is chosen by model servers and llm-d
coordinators: it may hold any character at any length. It is never used as a
subject token, a KV key or a header value as is; `result_key` and `msg_id` make
it safe.
"""

from __future__ import annotations

import hashlib

from nats.js.api import Header, RetentionPolicy, StreamConfig

# A work queue: a call is gone from the stream once a runner acknowledges it.
TOOLS_STREAM_NAME = "TOOLS"
TOOLS_STREAM = StreamConfig(
    name=TOOLS_STREAM_NAME,
    subjects=["tools.exec.>"],
    retention=RetentionPolicy.WORK_QUEUE,
    max_age=3600.0,
)
SUBJECT_PREFIX = "tools.exec."

# The subject the runner publishes the `ToolResult` to (the dispatcher's inbox).
REPLY_HEADER = "Agentic-Reply"
# JetStream drops a second publish with the same id within the stream's duplicate window.
MSG_ID_HEADER: str = Header.MSG_ID.value

# The kinds whose consumer is not a tool-runner; the Helm chart names the same durables.
_DURABLES = {"mcp": "mcp-bridge", "file_search": "retrieval-file-search"}

# Finished results by dispatch id, so that a redelivered call is answered without running it again.
TOOL_RESULTS_BUCKET = "TOOL_RESULTS"
TOOL_RESULTS_TTL_SECONDS = 3600.0


def subject_for(kind: str) -> str:
    """The subject calls of `kind` are published on (one token: kinds are plain names)."""
    return SUBJECT_PREFIX + kind


def durable_name(kind: str) -> str:
    """The durable consumer every replica serving `kind` shares; a kind without one has no runner."""
    return _DURABLES.get(kind, f"tool-runner-{kind}")


def _digest(dispatch_id: str) -> str:
    # surrogatepass: even a lone surrogate from a JSON-decoded id maps to a key instead of raising.
    return hashlib.sha256(dispatch_id.encode("utf-8", "surrogatepass")).hexdigest()


def result_key(dispatch_id: str) -> str:
    """The KV key of a call's stored result.

    KV keys allow only [-/_=.a-zA-Z0-9] and call ids are arbitrary, so the key
    is the SHA-256 of the dispatch id in hex: always valid, 64 characters
    whatever the id's length, and collision-free in practice.
    """
    return _digest(dispatch_id)


def msg_id(dispatch_id: str) -> str:
    """The `MSG_ID_HEADER` value of a call: a header value must not hold CR/LF, and ids may."""
    return _digest(dispatch_id)
