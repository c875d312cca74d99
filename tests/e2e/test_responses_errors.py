"""Bad input and upstream failures: OpenAI-shaped errors, the right status, and nothing half-stored."""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import openai
import pytest
from openai import OpenAI

from tests.support.fake_upstream import Delay, HttpError, Text, Truncated

MODEL = "smollm2"


@pytest.fixture()
def stored_count(infra):
    def count() -> int:
        async def query() -> int:
            connection = await asyncpg.connect(infra["database_url"])
            try:
                return await connection.fetchval("SELECT count(*) FROM responses")
            finally:
                await connection.close()

        return asyncio.run(query())

    return count


def _assert_openai_error(reply: httpx.Response, status: int, param: str | None = None) -> dict:
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"]
    if param is not None:
        assert error["param"] == param
    return error


def test_unknown_previous_response_id_is_404(client: OpenAI, upstream) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.create(model=MODEL, input="x", previous_response_id="resp_doesnotexist")
    assert raised.value.body["param"] == "previous_response_id"
    assert raised.value.body["type"] == "invalid_request_error"
    assert upstream.requests == []  # nothing reached the model server


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": "no model"}, "model"),
        ({"model": MODEL, "input": 12345}, "input"),
        ({"model": MODEL, "input": "x", "temperature": "hot"}, "temperature"),
        ({"model": MODEL, "input": "x", "metadata": {"k": 1}}, "metadata.k"),
        ({"model": MODEL, "input": "x", "store": "yes"}, "store"),
        ({"model": MODEL, "input": "x", "stream": "yes"}, "stream"),
        ({"model": MODEL, "input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
        ({"model": MODEL, "input": [{"type": "function_call_output", "call_id": "", "output": "x"}]}, "input[0].call_id"),
    ],
)
def test_bad_fields_are_400_with_the_param_named(gateway_url, auth_headers, upstream, body, param) -> None:
    reply = httpx.post(f"{gateway_url}/v1/responses", json=body, headers=auth_headers)
    error = _assert_openai_error(reply, 400, param)
    assert error["type"] == "invalid_request_error"
    assert upstream.requests == []


def test_missing_model_through_the_sdk_is_a_bad_request(client: OpenAI, upstream) -> None:
    with pytest.raises(openai.BadRequestError):
        client.responses.create(input="x", extra_body={"model": None}, model=None)  # type: ignore[arg-type]


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"", b'"text"'])
def test_malformed_json_is_400(gateway_url, auth_headers, raw: bytes) -> None:
    reply = httpx.post(f"{gateway_url}/v1/responses", content=raw, headers={**auth_headers, "content-type": "application/json"})
    _assert_openai_error(reply, 400)


def test_body_over_the_limit_is_413(gateway_url, auth_headers) -> None:
    big = b'{"model": "smollm2", "input": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    reply = httpx.post(f"{gateway_url}/v1/responses", content=big, headers=auth_headers)
    _assert_openai_error(reply, 413)


def test_missing_or_wrong_api_key_is_401(gateway_url) -> None:
    for headers in ({}, {"authorization": "Bearer sk-wrong"}):
        reply = httpx.post(f"{gateway_url}/v1/responses", json={"model": MODEL, "input": "x"}, headers=headers)
        assert _assert_openai_error(reply, 401)["type"] == "authentication_error"


def test_unknown_route_is_an_openai_shaped_404(gateway_url, auth_headers) -> None:
    _assert_openai_error(httpx.get(f"{gateway_url}/v1/nothing-here", headers=auth_headers), 404)


@pytest.mark.parametrize("stream", [False, True])
def test_upstream_4xx_keeps_its_status_and_message(client: OpenAI, upstream, stored_count, stream: bool) -> None:
    before = stored_count()
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.create(model="nope", input="x", stream=stream)
    assert "does not exist" in raised.value.body["message"]
    assert raised.value.body["param"] == "model"
    assert stored_count() == before


@pytest.mark.parametrize("stream", [False, True])
def test_upstream_5xx_is_502_and_nothing_is_stored(client: OpenAI, upstream, stored_count, stream: bool) -> None:
    upstream.script(HttpError(500, "engine crashed", "InternalServerError"))
    before = stored_count()
    with pytest.raises(openai.APIStatusError) as raised:
        client.responses.create(model=MODEL, input="x", stream=stream)
    assert raised.value.status_code == 502
    assert stored_count() == before


def test_upstream_timeout_is_504(client: OpenAI, upstream, stored_count) -> None:
    upstream.script(Delay(4.5))  # the test stack's upstream read timeout is 3 s
    before = stored_count()
    with pytest.raises(openai.APIStatusError) as raised:
        client.responses.create(model=MODEL, input="x")
    assert raised.value.status_code == 504
    assert stored_count() == before


def test_truncated_upstream_stream_fails_the_response_and_stores_nothing(client: OpenAI, upstream, stored_count) -> None:
    upstream.script(Truncated("this will be cut off somewhere", events=5))
    before = stored_count()
    events = list(client.responses.create(model=MODEL, input="x", stream=True))
    assert events[-1].type == "response.failed"
    assert events[-1].response.status == "failed"
    assert events[-1].response.error is not None
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert stored_count() == before
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(events[-1].response.id)


def test_a_failed_turn_does_not_break_the_chain(client: OpenAI, upstream) -> None:
    upstream.script(Text("good"), HttpError(500, "boom", "InternalServerError"), Text("still fine"))
    first = client.responses.create(model=MODEL, input="one")
    with pytest.raises(openai.APIStatusError):
        client.responses.create(model=MODEL, input="two", previous_response_id=first.id)
    third = client.responses.create(model=MODEL, input="three", previous_response_id=first.id)
    assert third.output_text == "still fine"
    assert [item["content"][0]["text"] for item in upstream.requests[-1]["input"]] == ["one", "good", "three"]
