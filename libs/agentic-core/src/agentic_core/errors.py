"""Domain errors that know their public OpenAI-shaped form.

Raised where a problem is found; each transport maps them to its wire form in
exactly one place (HTTP status + body, or a gRPC status).
"""

from __future__ import annotations

from typing import Any

import orjson


class AgenticError(Exception):
    """Base of every error that has a public shape."""

    http_status = 500
    error_type = "server_error"
    default_code: str | None = None
    retry_after: str | None = None  # a `retry-after` the client is told (a model server's, relayed)

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code if code is not None else self.default_code

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.error_type,
                "param": self.param,
                "code": self.code,
            }
        }

    def body(self) -> bytes:
        return orjson.dumps(self.to_dict())


class InvalidRequest(AgenticError):
    http_status = 400
    error_type = "invalid_request_error"


class AuthenticationFailed(AgenticError):
    http_status = 401
    error_type = "authentication_error"
    default_code = "invalid_api_key"


class NotFound(AgenticError):
    http_status = 404
    error_type = "invalid_request_error"
    default_code = "not_found"


class Conflict(AgenticError):
    http_status = 409
    error_type = "conflict_error"


class RequestTimeout(AgenticError):
    """The client did not send its request (headers or body) in time; the connection is closed after the answer."""

    http_status = 408
    error_type = "invalid_request_error"
    default_code = "request_timeout"


class PayloadTooLarge(AgenticError):
    http_status = 413
    error_type = "invalid_request_error"
    default_code = "request_too_large"


class RateLimited(AgenticError):
    """A per-caller or per-connection limit was reached; retrying later can succeed."""

    http_status = 429
    error_type = "rate_limit_error"
    default_code = "rate_limit_exceeded"


class UpstreamRejected(AgenticError):
    """The model server refused the request for a reason the client caused (4xx)."""

    error_type = "invalid_request_error"

    def __init__(self, http_status: int, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message, param=param, code=code)
        self.http_status = http_status


class UpstreamUnavailable(AgenticError):
    http_status = 502
    error_type = "upstream_error"
    default_code = "upstream_unavailable"


class UpstreamTimeout(AgenticError):
    http_status = 504
    error_type = "upstream_error"
    default_code = "upstream_timeout"


class ServiceUnavailable(AgenticError):
    http_status = 503
    error_type = "server_error"
    default_code = "service_unavailable"


class InternalError(AgenticError):
    http_status = 500
    error_type = "server_error"
    default_code = "internal_error"


class RelayedError(AgenticError):
    """An error produced by another service, relayed with its exact status and body."""

    def __init__(self, http_status: int, body: bytes) -> None:
        try:
            error = orjson.loads(body)["error"]
            message = str(error.get("message") or "")
            param, code, error_type = error.get("param"), error.get("code"), error.get("type")
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            message, param, code, error_type = body.decode("utf-8", "replace"), None, None, "server_error"
        super().__init__(message, param=param, code=code)
        self.http_status = http_status
        self.error_type = error_type or "server_error"
        self._body = body

    def body(self) -> bytes:
        return self._body
