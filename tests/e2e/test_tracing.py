"""One trace per turn: the caller's W3C trace reaches the model server and the tool runner."""

from __future__ import annotations

import httpx
import orjson

from tests.support.fake_upstream import FunctionCall, Text

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


def test_the_callers_trace_reaches_the_model_server_and_the_tool_runner(stack, gateway_url, auth_headers, upstream) -> None:
    upstream.script(FunctionCall("echo", '{"text": "traced"}'), Text("done"))
    reply = httpx.post(f"{gateway_url}/v1/responses", headers={**auth_headers, "traceparent": TRACEPARENT}, timeout=30,
                       json={"model": "smollm2", "input": "x", "tools": [{"type": "operator", "name": "echo"}]})
    assert reply.status_code == 200
    for headers in upstream.headers:  # both inference rounds
        version, trace_id, span_id, flags = headers["traceparent"].split("-")
        assert trace_id == TRACE_ID and span_id != "00f067aa0ba902b7"
    runner_lines = [orjson.loads(line) for line in (stack.logs_dir / "tool-runner.log").read_text().splitlines()
                    if line.startswith("{")]
    assert any(line.get("trace_id") == TRACE_ID and "echo" in line["msg"] for line in runner_lines)


def test_without_a_caller_trace_each_turn_gets_its_own(gateway_url, auth_headers, upstream) -> None:
    for _ in range(2):
        httpx.post(f"{gateway_url}/v1/responses", headers=auth_headers, json={"model": "smollm2", "input": "x"}, timeout=30)
    first, second = (headers["traceparent"].split("-")[1] for headers in upstream.headers)
    assert first != second and len(first) == 32
