"""Our OpenAI-shaped errors → Anthropic's error bodies, statuses and types."""

from __future__ import annotations

import anthropic
import httpx
import orjson
import pytest
from agentic_core.errors import (
    AuthenticationFailed,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    ServiceUnavailable,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from agentic_core.messages import anthropic_error, anthropic_error_type, anthropic_status
from anthropic.types import ErrorResponse


@pytest.mark.parametrize(("status", "error_type"), [
    (400, "invalid_request_error"),
    (401, "authentication_error"),
    (402, "billing_error"),
    (403, "permission_error"),
    (404, "not_found_error"),
    (409, "conflict_error"),
    (413, "request_too_large"),
    (422, "invalid_request_error"),
    (429, "rate_limit_error"),
    (500, "api_error"),
    (502, "api_error"),
    (503, "overloaded_error"),
    (504, "timeout_error"),
    (418, "invalid_request_error"),
])
def test_each_status_has_anthropics_error_type(status: int, error_type: str) -> None:
    body = anthropic_error(status, orjson.dumps({"error": {"message": "m", "type": "x", "param": None, "code": None}}))
    assert orjson.loads(body) == {"type": "error", "error": {"type": error_type, "message": "m"}}
    assert anthropic_error_type(status) == error_type


def test_overload_is_sent_as_529_and_other_statuses_are_kept() -> None:
    assert anthropic_status(503) == 529
    assert anthropic_status(422) == 400
    assert [anthropic_status(status) for status in (400, 401, 404, 413, 429, 500, 502, 504)] == [
        400, 401, 404, 413, 429, 500, 502, 504]


@pytest.mark.parametrize("error", [
    InvalidRequest("bad", param="messages"), AuthenticationFailed("who?"), NotFound("gone"), UpstreamUnavailable("down"),
    UpstreamTimeout("slow"), ServiceUnavailable("draining"),
])
def test_the_sdk_reads_every_mapped_error_as_its_own_exception(error) -> None:
    status = anthropic_status(error.http_status)
    body = anthropic_error(error.http_status, error.body())
    if anthropic_error_type(error.http_status) != "request_too_large":
        ErrorResponse.model_validate(orjson.loads(body))
    client = anthropic.Anthropic(api_key="k", base_url="http://gateway.invalid")
    response = httpx.Response(status, content=body, request=httpx.Request("POST", "http://gateway.invalid/v1/messages"))
    raised = client._make_status_error_from_response(response)
    expected = {400: anthropic.BadRequestError, 401: anthropic.AuthenticationError, 404: anthropic.NotFoundError,
                502: anthropic.InternalServerError, 504: anthropic.GatewayTimeoutError, 529: anthropic.OverloadedError}
    assert isinstance(raised, expected[status])
    assert raised.body["error"]["message"].endswith(error.message)


def test_the_param_leads_the_message_unless_the_message_names_it() -> None:
    named = InvalidRequest("Invalid value for 'messages.0.role'.", param="messages.0.role")
    assert orjson.loads(anthropic_error(400, named.body()))["error"]["message"] == "Invalid value for 'messages.0.role'."
    unnamed = InvalidRequest("expected a string.", param="system")
    assert orjson.loads(anthropic_error(400, unnamed.body()))["error"]["message"] == "system: expected a string."


def test_a_body_that_is_not_ours_is_kept_as_the_message() -> None:
    assert orjson.loads(anthropic_error(502, b"Bad Gateway"))["error"] == {"type": "api_error", "message": "Bad Gateway"}
    assert "413" in orjson.loads(anthropic_error(413, b""))["error"]["message"]
    assert orjson.loads(anthropic_error(413, PayloadTooLarge("too big").body()))["error"]["type"] == "request_too_large"
