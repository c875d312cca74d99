"""SIGTERM drains: a turn in flight finishes, then the process exits; new work is refused meanwhile."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import httpx
import openai
import pytest
from agentic_local.processes import ChildProcess, free_port, tcp_accepts, wait_until
from openai import OpenAI

from conftest import TENANT_KEYS
from tests.support.fake_upstream import Delay, FunctionCall, Text

SLOW = {"type": "operator", "name": "slow"}


# The settings of how services reach each other (gRPC TLS/mTLS, NATS TLS and credentials): a process a test starts
# on its own takes the stack's, or it could not talk to the stack's services (AGENTIC_TEST_MTLS=1).
TRANSPORT_PREFIXES = ("AGENTIC_GRPC_TLS_", "AGENTIC_NATS_")


def transport_env(stack) -> dict[str, str]:
    """The stack's transport security settings, as it gives them to its children (none: plaintext)."""
    return {key: value for key, value in stack._env().items()
            if key.startswith(TRANSPORT_PREFIXES) and key != "AGENTIC_NATS_URL"}


def _spawn(stack, module: str, **env: str) -> subprocess.Popen:
    """`module` as a process of its own: no AGENTIC_* setting but the stack's transport security and `env`."""
    base = {key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_")}
    return subprocess.Popen([sys.executable, "-m", module], env={**base, **transport_env(stack), **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _stream_in_background(base_url: str, results: dict) -> threading.Thread:
    def run() -> None:
        with OpenAI(base_url=base_url, api_key=TENANT_KEYS["tenant-a"], max_retries=0, timeout=60) as client:
            try:
                results["events"] = [event.type for event in client.responses.create(model="smollm2", input="slow", stream=True)]
            except Exception as exc:  # the assertion below reports it
                results["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize("service", ["gateway", "executor"])
def test_sigterm_lets_an_in_flight_stream_finish(stack, upstream, service: str) -> None:
    state = stack.urls["state"].removeprefix("grpc://")
    keys = ",".join(f"{key}={tenant}" for tenant, key in TENANT_KEYS.items())
    if service == "executor":
        executor_port = free_port()
        process = _spawn(stack, "agentic_executor", AGENTIC_EXECUTOR_HOST="127.0.0.1", AGENTIC_EXECUTOR_PORT=str(executor_port),
                         AGENTIC_EXECUTOR_METRICS_PORT="0", AGENTIC_EXECUTOR_STATE_ADDRESS=state,
                         AGENTIC_NATS_URL=stack.nats_url, AGENTIC_UPSTREAM_URL=upstream.base_url)
        wait_until(lambda: tcp_accepts(executor_port), 30, "executor")
        executor = f"127.0.0.1:{executor_port}"
    else:
        process = None
        executor = stack.urls["executor"].removeprefix("grpc://")
    gateway_port = free_port()
    gateway = _spawn(stack, "agentic_gateway", AGENTIC_GATEWAY_HOST="127.0.0.1", AGENTIC_PORT=str(gateway_port),
                     AGENTIC_GATEWAY_METRICS_PORT="0",
                     AGENTIC_GATEWAY_EXECUTOR_ADDRESS=executor, AGENTIC_GATEWAY_STATE_ADDRESS=state,
                     AGENTIC_NATS_URL=stack.nats_url, AGENTIC_GATEWAY_API_KEYS=keys)
    target = gateway if service == "gateway" else process
    try:
        wait_until(lambda: httpx.get(f"http://127.0.0.1:{gateway_port}/ready").status_code == 200, 30, "gateway ready")
        upstream.script(Delay(1.5, Text("finished after the signal")))
        results: dict = {}
        thread = _stream_in_background(f"http://127.0.0.1:{gateway_port}/v1", results)
        wait_until(lambda: len(upstream.requests) == 1, 10, "the turn to reach the model server")
        target.send_signal(signal.SIGTERM)
        thread.join(30)
        assert "error" not in results, results.get("error")
        assert results["events"][-1] == "response.completed"
        assert target.wait(30) == 0
    finally:
        for child in (gateway, process):
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()


def test_readiness_fails_at_sigterm_while_the_listener_still_serves(stack) -> None:
    """Load balancers see /ready fail and stop sending before connections are refused."""
    port = free_port()
    gateway = _spawn(stack, "agentic_gateway", AGENTIC_GATEWAY_HOST="127.0.0.1", AGENTIC_PORT=str(port),
                     AGENTIC_GATEWAY_METRICS_PORT="0",
                     AGENTIC_GATEWAY_EXECUTOR_ADDRESS=stack.urls["executor"].removeprefix("grpc://"),
                     AGENTIC_GATEWAY_STATE_ADDRESS=stack.urls["state"].removeprefix("grpc://"),
                     AGENTIC_GATEWAY_UNREADY_SECONDS="3")
    try:
        wait_until(lambda: httpx.get(f"http://127.0.0.1:{port}/ready").status_code == 200, 30, "gateway ready")
        gateway.send_signal(signal.SIGTERM)
        wait_until(lambda: httpx.get(f"http://127.0.0.1:{port}/ready").status_code == 503, 2, "readiness to fail")
        assert httpx.get(f"http://127.0.0.1:{port}/ready").json()["status"] == "draining"
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200  # still serving meanwhile
        assert gateway.wait(30) == 0
    finally:
        if gateway.poll() is None:
            gateway.kill()
            gateway.wait()


def _gateway(stack, **env: str) -> tuple[int, ChildProcess]:
    """A gateway replica of the stack, and its process."""
    url = stack.add_gateway(**env)
    port = int(url.rsplit(":", 1)[1])
    return port, next(child for child in stack.children if child.name == f"gateway-{port}")


def _stream_events(port: int, body: dict, events: list[dict]) -> None:
    headers = {"authorization": f"Bearer {TENANT_KEYS['tenant-a']}"}
    with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/responses", json=body, headers=headers, timeout=60) as reply:
        for line in reply.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))


def test_readiness_fails_while_streams_drain_even_without_an_unready_delay(stack, upstream) -> None:
    port, gateway = _gateway(stack)
    try:
        upstream.script(FunctionCall("slow", json.dumps({"seconds": 2.0})), Text("drained"))
        events: list[dict] = []
        body = {"model": "smollm2", "input": "slow", "stream": True, "tools": [SLOW]}
        thread = threading.Thread(target=_stream_events, args=(port, body, events))
        thread.start()
        wait_until(lambda: any(event["type"] == "response.output_item.added" for event in events), 20, "the tool call")
        gateway.signal()
        # The port keeps answering while the stream runs: load balancers see readiness fail.
        wait_until(lambda: httpx.get(f"http://127.0.0.1:{port}/ready").status_code == 503, 5, "readiness to fail")
        thread.join(30)
        assert events[-1]["type"] == "response.completed"
        assert gateway.process.wait(30) == 0
    finally:
        gateway.stop()


def test_a_stream_cut_by_the_drain_bound_ends_with_an_error_and_is_not_stored(stack, upstream, client) -> None:
    port, gateway = _gateway(stack, AGENTIC_GATEWAY_DRAIN_SECONDS="1")
    try:
        upstream.script(FunctionCall("slow", json.dumps({"seconds": 6.0})), Text("never sent"))
        events: list[dict] = []
        body = {"model": "smollm2", "input": "too slow", "stream": True, "tools": [SLOW]}
        thread = threading.Thread(target=_stream_events, args=(port, body, events))
        thread.start()
        wait_until(lambda: any(event["type"] == "response.output_item.added" for event in events), 20, "the tool call")
        gateway.signal()
        thread.join(30)
        assert events[-1]["type"] == "error" and events[-1]["code"] == "server_shutting_down"
        assert gateway.process.wait(30) == 0
        with pytest.raises(openai.NotFoundError):  # what the client was told is what is stored: nothing
            client.responses.retrieve(events[0]["response"]["id"])
    finally:
        gateway.stop()
