"""Our OpenAI-shaped errors in Anthropic's form: `{"type": "error", "error": {"type", "message"}}`.

Anthropic clients branch on the HTTP status (the SDK raises one exception
class per status and retries 408/409/429/5xx) and on `error.type`, so both
follow Anthropic's documented table; the message keeps our wording.
"""

from __future__ import annotations

from typing import Any

import orjson

OVERLOADED_STATUS = 529
# Anthropic's error types by HTTP status (docs: "HTTP errors"; SDK: shared/error_type.py).
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    OVERLOADED_STATUS: "overloaded_error",
}


def anthropic_status(http_status: int) -> int:
    """The status an Anthropic client expects: overload (our 503) is Anthropic's 529; 422 is a plain 400."""
    if http_status == 503:
        return OVERLOADED_STATUS
    if http_status == 422:
        return 400
    return http_status


def anthropic_error_type(http_status: int) -> str:
    """The Anthropic `error.type` for a status (ours or already mapped by `anthropic_status`)."""
    status = anthropic_status(http_status)
    if status in _ERROR_TYPES:
        return _ERROR_TYPES[status]
    return "invalid_request_error" if 400 <= status < 500 else "api_error"


def anthropic_error(http_status: int, openai_error_body: bytes) -> bytes:
    """Our error body (any status, OpenAI shape or not) → Anthropic's error body; send it with `anthropic_status`."""
    return orjson.dumps(error_object(anthropic_error_type(http_status), _message(openai_error_body, http_status)))


def error_object(error_type: str, message: str) -> dict[str, Any]:
    """Anthropic's error object, also the data of a stream's `error` event."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _message(body: bytes, http_status: int) -> str:
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body.decode("utf-8", "replace").strip()
        return text or f"The request failed with HTTP status {http_status}."
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return body.decode("utf-8", "replace")
    message = str(error.get("message") or f"The request failed with HTTP status {http_status}.")
    param = error.get("param")
    # Anthropic messages lead with the offending field (`messages.0.content: ...`); ours usually name it already.
    if isinstance(param, str) and param and param not in message:
        message = f"{param}: {message}"
    return message
