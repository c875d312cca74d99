"""Mapping a model server's failure to the error our client sees.

A 4xx the client caused keeps its status and message; our own credentials
being refused, a 5xx, a refused connection or a timeout are gateway errors.
Error bodies are read in each API's shape: OpenAI's and vLLM's
`{"error": {"message", "param", "code"}}`, Anthropic's
`{"type": "error", "error": {"type", "message"}}`, Gemini's
`{"error": {"code", "message", "status"}}`. A 429 keeps the server's
`retry-after`; Anthropic's 529 (overloaded) is our 503.
"""

from __future__ import annotations

from typing import Any

import orjson

from agentic_core.errors import AgenticError, ServiceUnavailable, UpstreamRejected, UpstreamUnavailable

_DEFAULT_CODES = {400: "invalid_request", 404: "not_found", 409: "conflict", 413: "request_too_large",
                  422: "invalid_request", 429: "rate_limit_exceeded"}
OVERLOADED_STATUS = 529  # Anthropic's "overloaded_error"
MAX_MESSAGE_CHARS = 2000
MAX_RETRY_AFTER_CHARS = 64


def error_from_upstream(status: int, body: bytes, retry_after: str | None = None) -> AgenticError:
    """`retry_after`: the reply's `retry-after` header, told to the client with a 429 or 503."""
    message, param, code = _extract(body)
    if status in (401, 403):
        return UpstreamUnavailable(
            f"The model server refused the gateway's credentials (HTTP {status}).", code="upstream_auth_failed"
        )
    error: AgenticError
    if status == OVERLOADED_STATUS:
        detail = f": {message}" if message else ""
        error = ServiceUnavailable(f"The model server is overloaded{detail}", code="upstream_overloaded")
    elif 400 <= status < 500:
        if status == 404 and param == "model":
            code = code or "model_not_found"
        error = UpstreamRejected(
            status, message or f"The model server rejected the request (HTTP {status}).", param=param,
            code=code or _DEFAULT_CODES.get(status),
        )
    else:
        detail = f": {message}" if message else ""
        return UpstreamUnavailable(f"The model server failed with HTTP {status}{detail}")
    if retry_after and status in (429, OVERLOADED_STATUS) and len(retry_after) <= MAX_RETRY_AFTER_CHARS:
        error.retry_after = retry_after.strip()
    return error


def _extract(body: bytes) -> tuple[str, str | None, str | None]:
    try:
        payload: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body[:MAX_MESSAGE_CHARS].decode("utf-8", "replace").strip(), None, None
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, str):
        return error[:MAX_MESSAGE_CHARS], None, None
    if not isinstance(error, dict):
        detail = payload.get("detail") if isinstance(payload, dict) else None
        return (str(detail)[:MAX_MESSAGE_CHARS] if detail else ""), None, None
    message = str(error.get("message") or "")[:MAX_MESSAGE_CHARS]
    param = error.get("param")
    if isinstance(param, str) and param.startswith("body."):
        param = param[len("body."):]
    code = error.get("code")
    return message, param if isinstance(param, str) else None, code if isinstance(code, str) else None
