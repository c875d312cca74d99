"""Compressed request bodies through the gateway, as agent clients send them (Codex sends zstd)."""

from __future__ import annotations

import gzip
import zlib

import httpx
import orjson
import pytest
import zstandard

from tests.support.fake_upstream import Text

MODEL = "smollm2"
ENCODERS = {"gzip": gzip.compress, "deflate": zlib.compress, "zstd": zstandard.ZstdCompressor().compress}
BODY_LIMIT = 1024 * 1024  # AGENTIC_GATEWAY_MAX_BODY_BYTES in the test stack


def _post(gateway_url: str, auth_headers: dict[str, str], path: str, content: bytes, encoding: str) -> httpx.Response:
    headers = {**auth_headers, "content-type": "application/json", "content-encoding": encoding}
    return httpx.post(f"{gateway_url}{path}", content=content, headers=headers, timeout=30)


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
def test_a_compressed_stored_turn_is_answered_and_stored(gateway_url, auth_headers, upstream, encoding) -> None:
    upstream.script(Text("decoded fine"))
    body = orjson.dumps({"model": MODEL, "input": f"sent with {encoding}"})
    reply = _post(gateway_url, auth_headers, "/v1/responses", ENCODERS[encoding](body), encoding)
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"][0]["content"][0]["text"] == "decoded fine"
    assert upstream.requests[0]["input"][-1]["content"][0]["text"] == f"sent with {encoding}"
    stored = httpx.get(f"{gateway_url}/v1/responses/{reply.json()['id']}", headers=auth_headers, timeout=10)
    assert stored.json()["status"] == "completed"


def test_a_compressed_pass_through_turn_reaches_the_model_server_decoded(gateway_url, auth_headers, upstream) -> None:
    upstream.script(Text("relayed"))
    body = orjson.dumps({"model": MODEL, "input": "stateless and compressed", "store": False})
    reply = _post(gateway_url, auth_headers, "/v1/responses", zstandard.ZstdCompressor().compress(body), "zstd")
    assert reply.status_code == 200, reply.text
    assert upstream.requests[0]["input"] == "stateless and compressed"
    assert "content-encoding" not in upstream.headers[0]


def test_a_compressed_messages_request_is_answered(gateway_url, auth_headers, upstream) -> None:
    upstream.script(Text("messages decoded"))
    body = orjson.dumps({"model": MODEL, "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]})
    reply = _post(gateway_url, auth_headers, "/v1/messages", gzip.compress(body), "gzip")
    assert reply.status_code == 200, reply.text
    assert reply.json()["content"][0]["text"] == "messages decoded"


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
def test_a_decompression_bomb_is_a_413_and_reaches_nothing(gateway_url, auth_headers, upstream, encoding) -> None:
    padding = b" " * (64 * BODY_LIMIT)  # 64 MiB once decoded; a few KiB on the wire
    bomb = ENCODERS[encoding](b'{"model": "smollm2", "input": "x"' + padding + b"}")
    assert len(bomb) < BODY_LIMIT
    reply = _post(gateway_url, auth_headers, "/v1/responses", bomb, encoding)
    assert reply.status_code == 413, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["code"] == "request_too_large"
    assert upstream.requests == []


def test_corrupt_and_unsupported_encodings_are_client_errors(gateway_url, auth_headers, upstream) -> None:
    corrupt = _post(gateway_url, auth_headers, "/v1/responses", b"definitely not gzip", "gzip")
    assert corrupt.status_code == 400, corrupt.text
    assert "gzip" in corrupt.json()["error"]["message"]
    unsupported = _post(gateway_url, auth_headers, "/v1/responses", b"{}", "br")
    assert unsupported.status_code == 415, unsupported.text
    assert unsupported.json()["error"]["code"] == "unsupported_content_encoding"
    anthropic_shaped = _post(gateway_url, auth_headers, "/v1/messages", b"{}", "br")
    assert anthropic_shaped.status_code == 415
    assert anthropic_shaped.json()["type"] == "error"
    assert upstream.requests == []
