"""Slow and vanishing clients: a request head or body that never finishes is answered 408 and its connection closed
within the read timeouts (settings), and a client that hangs up mid-stream leaves no half-written turn."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.faults.support import API_KEY, MODEL, FaultStack, wait_for
from tests.faults.test_tool_faults import IN_FLIGHT, _marker_call
from tests.support.fake_upstream import EchoToolOutput, FakeUpstream

TIMEOUT_SECONDS = 1.0
BOUND_SECONDS = 5.0  # the timeout, and the machine's slack


@pytest.fixture(scope="module")
def impatient_gateway(faults: FaultStack) -> Iterator[tuple[str, int]]:
    """A gateway replica that waits one second for a request's head and for each piece of its body."""
    url = faults.stack.add_gateway(AGENTIC_GATEWAY_HEADER_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS),
                                   AGENTIC_GATEWAY_BODY_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS))
    yield url, int(url.rsplit(":", 1)[1])


def _answer_after(port: int, sent: bytes) -> tuple[bytes, float]:
    """Sends `sent`, never the rest; returns everything the server sent until it closed, and how long that took."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND_SECONDS * 2) as connection:
        connection.sendall(sent)
        received = b""
        while chunk := connection.recv(65536):  # b"": the server closed the connection
            received += chunk
    return received, time.monotonic() - started


def _status_and_error(answer: bytes) -> tuple[int, dict[str, str]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, orjson.loads(body)["error"]


def test_a_request_head_that_never_ends_is_a_408_and_a_closed_connection(impatient_gateway: tuple[str, int]) -> None:
    _, port = impatient_gateway
    answer, took = _answer_after(port, b"POST /v1/responses HTTP/1.1\r\nHost: agentic\r\nContent-Type: application/json\r\n")
    status, error = _status_and_error(answer)
    assert status == 408 and error["code"] == "header_timeout", answer
    assert TIMEOUT_SECONDS <= took < BOUND_SECONDS


def test_a_connection_that_sends_nothing_is_closed(impatient_gateway: tuple[str, int]) -> None:
    _, port = impatient_gateway
    answer, took = _answer_after(port, b"")
    assert took < BOUND_SECONDS  # closed by the server, with a 408 or without a word
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer


def test_a_body_shorter_than_its_length_is_a_408_and_nothing_runs(faults: FaultStack, upstream: FakeUpstream,
                                                                   impatient_gateway: tuple[str, int]) -> None:
    _, port = impatient_gateway
    asked = len(upstream.requests)
    stored = faults.stored_count()
    body = orjson.dumps({"model": MODEL, "input": "never finished"})
    head = (f"POST /v1/responses HTTP/1.1\r\nHost: agentic\r\nAuthorization: Bearer {API_KEY}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body) + 100}\r\n\r\n").encode()
    answer, took = _answer_after(port, head + body)
    status, error = _status_and_error(answer)
    assert status == 408 and error["code"] == "body_timeout", answer
    assert took < BOUND_SECONDS
    assert len(upstream.requests) == asked and faults.stored_count() == stored  # the model was never asked


def test_a_client_that_hangs_up_mid_stream_leaves_no_half_written_turn(faults: FaultStack, upstream: FakeUpstream,
                                                                       tmp_path: Path) -> None:
    """The client leaves while a tool call runs: the turn stops (nothing is stored of it, the model is not asked
    for the round after the call), and the next turn is served as usual."""
    marker = tmp_path / "marker"
    upstream.script(_marker_call(marker, 2.0), EchoToolOutput("the tool said: "))
    asked = len(upstream.requests)
    body = {"model": MODEL, "input": "do it", "stream": True, "tools": [{"type": "operator", "name": "append_marker"}]}
    response_id = None
    with httpx.stream("POST", faults.stack.base_url + "/responses", json=body, timeout=30,
                      headers={"authorization": f"Bearer {API_KEY}"}) as reply:
        for line in reply.iter_lines():
            if line.startswith("data: ") and response_id is None:
                response_id = orjson.loads(line[len("data: "):])["response"]["id"]
            if response_id is not None and faults.metric("tool-runner", IN_FLIGHT) >= 1:
                break  # hang up while the call runs
    assert response_id is not None
    wait_for(lambda: faults.metric("tool-runner", IN_FLIGHT) == 0, 30, "the tool call to end")
    time.sleep(1.0)  # room for a (wrong) second round or a (wrong) store
    assert faults.stored_status(response_id) is None
    assert len(upstream.requests) == asked + 1, "no round after the client left"
    upstream.script(EchoToolOutput("served"))
    with faults.client() as client:
        assert client.responses.create(model=MODEL, input="next").status == "completed"
