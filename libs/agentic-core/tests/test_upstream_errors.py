"""What a client sees when the model server fails."""

from __future__ import annotations

from pathlib import Path

from agentic_core.errors import UpstreamRejected, UpstreamUnavailable
from agentic_core.upstream_errors import error_from_upstream

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"


def _captured(name: str) -> bytes:
    return (FIXTURES / name).read_bytes().rsplit(b"\nHTTP", 1)[0]


def test_vllm_unknown_model_keeps_404_message_and_param() -> None:
    error = error_from_upstream(404, _captured("error-unknown-model.response.txt"))
    assert isinstance(error, UpstreamRejected) and error.http_status == 404
    body = error.to_dict()["error"]
    assert body == {"message": "The model `nope` does not exist. Valid aliases: smollm2.", "type": "invalid_request_error",
                    "param": "model", "code": "model_not_found"}


def test_vllm_validation_error_param_loses_its_body_prefix() -> None:
    error = error_from_upstream(400, _captured("error-bad-input.response.txt"))
    assert error.http_status == 400 and error.param == "input" and error.code == "invalid_request"


def test_upstream_auth_failure_is_our_502_not_the_clients_401() -> None:
    error = error_from_upstream(401, b'{"error": {"message": "bad key"}}')
    assert isinstance(error, UpstreamUnavailable) and error.http_status == 502


def test_5xx_with_a_non_json_body_is_502_with_its_text() -> None:
    error = error_from_upstream(503, b"Service Unavailable")
    assert error.http_status == 502 and "Service Unavailable" in error.message


# -- hosted providers' error shapes --------------------------------------------------------------------------


def test_anthropics_error_shape_keeps_its_message_and_a_429_its_retry_after() -> None:
    body = b'{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests exceeded"}}'
    error = error_from_upstream(429, body, "30")
    assert error.http_status == 429 and error.message == "Number of requests exceeded"
    assert error.code == "rate_limit_exceeded" and error.retry_after == "30"


def test_anthropics_overloaded_529_is_a_503() -> None:
    error = error_from_upstream(529, b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    assert error.http_status == 503 and error.code == "upstream_overloaded" and "Overloaded" in error.message


def test_geminis_error_shape_keeps_its_message() -> None:
    body = b'{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}'
    error = error_from_upstream(400, body, "5")
    assert error.http_status == 400 and error.message == "Invalid JSON payload received."
    assert error.code == "invalid_request" and error.retry_after is None  # only a 429 or 529 tells when to retry
