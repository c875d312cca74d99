"""Hostile input against the running stack: each probe that once made a service answer 5xx is now a 4xx in the
API's own shape (OpenAI's, or Anthropic's under /v1/messages), and the model server is not asked first."""

from __future__ import annotations

import socket
from urllib.parse import quote

import httpx
import orjson
import pytest

from tests.support.fake_upstream import Text

MODEL = "smollm2"
HUGE_ID = "resp_" + "x" * 10_000
BAD_IDS = ["resp_\x00x", HUGE_ID, "resp x", "ré"]


def _openai_error(reply: httpx.Response) -> dict[str, object]:
    assert 400 <= reply.status_code < 500, (reply.status_code, reply.text[:300])
    assert reply.headers["content-type"].startswith("application/json")
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert len(reply.content) < 2048  # an id is quoted short, if at all
    return error


def _anthropic_error(reply: httpx.Response) -> dict[str, object]:
    assert 400 <= reply.status_code < 500, (reply.status_code, reply.text[:300])
    body = reply.json()
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    return body["error"]


@pytest.fixture()
def http(gateway_url: str, auth_headers: dict[str, str]):
    with httpx.Client(base_url=gateway_url, headers=auth_headers, timeout=30) as client:
        yield client


def _nested(depth: int) -> str:
    return "[" * depth + '"leaf"' + "]" * depth  # by hand: encoders refuse this depth themselves


NON_STRING_ITEM_ID = {"type": "message", "role": "user", "content": "hi", "id": 5}


def test_a_non_string_item_id_is_a_400_on_conversations(http: httpx.Client) -> None:
    # The items are normalised as input items are, and named so (as every other problem with them is).
    assert _openai_error(http.post("/v1/conversations", json={"items": [NON_STRING_ITEM_ID]}))["param"] == "input[0].id"
    conversation = http.post("/v1/conversations", json={}).json()["id"]
    reply = http.post(f"/v1/conversations/{conversation}/items", json={"items": [NON_STRING_ITEM_ID]})
    assert _openai_error(reply)["param"] == "input[0].id"


def test_a_non_string_item_id_on_responses_is_a_400_before_the_model_is_asked(http: httpx.Client, upstream) -> None:
    upstream.script(Text("should not be asked"))
    reply = http.post("/v1/responses", json={"model": MODEL, "input": [NON_STRING_ITEM_ID]})
    _openai_error(reply)
    assert upstream.requests == []


@pytest.mark.parametrize("tool_type", [5, ["function"], {"a": 1}])
def test_a_non_string_tool_type_is_a_400(http: httpx.Client, tool_type: object) -> None:
    passthrough = {"model": MODEL, "input": "hi", "store": False, "tools": [{"type": tool_type, "name": "f"}]}
    assert _openai_error(http.post("/v1/responses", json=passthrough))["param"] == "tools[0].type"
    message = {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
               "tools": [{"type": tool_type, "name": "f", "input_schema": {"type": "object"}}]}
    _anthropic_error(http.post("/v1/messages", json=message))


@pytest.mark.parametrize("role", [5, ["user"], {"r": 1}])
def test_a_non_string_messages_role_in_count_tokens_is_a_400(http: httpx.Client, role: object) -> None:
    reply = http.post("/v1/messages/count_tokens", json={"model": MODEL, "messages": [{"role": role, "content": "hi"}]})
    _anthropic_error(reply)


@pytest.mark.parametrize("depth", [300, 1000])
@pytest.mark.parametrize(("path", "body"), [
    ("/v1/responses", '{"model": "smollm2", "input": "hi", "text": NESTED}'),
    ("/v1/responses", '{"model": "smollm2", "input": "hi", "store": false, "text": NESTED}'),
    ("/v1/responses", '{"model": "smollm2", "input": [{"role": "user", "content": NESTED}]}'),
    ("/v1/responses/input_tokens", '{"model": "smollm2", "input": "hi", "text": NESTED}'),
    ("/v1/conversations", '{"metadata": NESTED}'),
    ("/v1/conversations", '{"items": [{"role": "user", "content": [{"type": "input_text", "text": NESTED}]}]}'),
    ("/v1/messages", '{"model": "smollm2", "max_tokens": 5, "messages": NESTED}'),
    ("/v1/messages/count_tokens", '{"model": "smollm2", "messages": [{"role": "user", "content": NESTED}]}'),
])
def test_json_nested_under_the_parsers_limit_is_a_400(http: httpx.Client, upstream, path: str, body: str,
                                                      depth: int) -> None:
    content = body.replace("NESTED", _nested(depth))
    reply = http.post(path, content=content, headers={"content-type": "application/json"})
    error = _anthropic_error(reply) if path.startswith("/v1/messages") else _openai_error(reply)
    assert "deeper than" in str(error["message"])
    assert upstream.requests == []


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_a_bad_id_in_a_path_or_cursor_is_a_400_that_quotes_it_short(http: httpx.Client, bad_id: str) -> None:
    escaped = quote(bad_id, safe="")
    for method, path in [
        ("GET", f"/v1/responses/{escaped}"), ("DELETE", f"/v1/responses/{escaped}"),
        ("GET", f"/v1/responses/{escaped}/input_items"), ("POST", f"/v1/responses/{escaped}/cancel"),
        ("GET", f"/v1/conversations/{escaped}"), ("DELETE", f"/v1/conversations/{escaped}"),
        ("GET", f"/v1/conversations/{escaped}/items"), ("GET", f"/v1/conversations/conv_1/items/{escaped}"),
    ]:
        _openai_error(http.request(method, path))
    conversation = http.post("/v1/conversations", json={}).json()["id"]
    _openai_error(http.get(f"/v1/conversations/{conversation}/items", params={"after": bad_id}))


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_a_bad_id_in_a_body_is_a_400_before_the_model_is_asked(http: httpx.Client, upstream, bad_id: str) -> None:
    for body in (
        {"model": MODEL, "input": "hi", "previous_response_id": bad_id},
        {"model": MODEL, "input": "hi", "conversation": bad_id},
        {"model": MODEL, "input": "hi", "conversation": {"id": bad_id}},
        {"model": MODEL, "input": [{"type": "message", "role": "user", "content": "hi", "id": bad_id}]},
    ):
        _openai_error(http.post("/v1/responses", json=body))
    _openai_error(http.post("/v1/conversations", json={"items": [{"role": "user", "content": "x", "id": bad_id}]}))
    assert upstream.requests == []


def test_a_huge_request_id_is_not_echoed(http: httpx.Client, upstream) -> None:
    upstream.script(Text("ok"))
    turn = {"model": MODEL, "input": "hi", "stream": True}
    reply = http.post("/v1/responses", json=turn, headers={"x-request-id": "r" * 50_000})
    assert reply.status_code == 200
    assert len(reply.headers["x-request-id"]) <= 128
    upstream.script(Text("ok"))
    plain = http.post("/v1/responses", json=turn, headers={"x-request-id": "req-42"})
    assert plain.headers["x-request-id"] == "req-42"


def test_a_content_length_that_is_not_a_number_is_a_json_400(gateway_url: str) -> None:
    host, port = httpx.URL(gateway_url).host, httpx.URL(gateway_url).port
    with socket.create_connection((host, port), timeout=30) as connection:
        connection.sendall(b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n{}")
        raw = b""
        while chunk := connection.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
    assert set(orjson.loads(body)["error"]) == {"message", "type", "param", "code"}
