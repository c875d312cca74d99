"""Names for the parsed JSON objects the APIs pass around, which Python types only as `dict[str, Any]`: the name says
what a dict holds. One definition each, so that every module means the same thing by it."""

from __future__ import annotations

from typing import Any

# An item of the Responses API (a message, a tool call or its output, reasoning, a compaction...), public or as the
# model server sees it.
Item = dict[str, Any]
# An event of a Responses stream (`{"type": "response.output_text.delta", ...}`), before its bytes are written.
Event = dict[str, Any]
# A JSON Schema (an OpenAPI document's, or a request body's).
Schema = dict[str, Any]
