"""SIGTERM drains: a turn in flight finishes, then the process exits; new work is refused meanwhile."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import httpx
import pytest
from agentic_local.processes import free_port, tcp_accepts, wait_until
from openai import OpenAI

from conftest import TENANT_KEYS
from tests.support.fake_upstream import Delay, Text


def _spawn(module: str, **env: str) -> subprocess.Popen:
    base = {key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_")}
    return subprocess.Popen([sys.executable, "-m", module], env={**base, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _stream_in_background(base_url: str, results: dict) -> threading.Thread:
    def run() -> None:
        client = OpenAI(base_url=base_url, api_key=TENANT_KEYS["tenant-a"], max_retries=0, timeout=60)
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
        process = _spawn("agentic_executor", AGENTIC_EXECUTOR_HOST="127.0.0.1", AGENTIC_EXECUTOR_PORT=str(executor_port),
                         AGENTIC_EXECUTOR_METRICS_PORT="0", AGENTIC_EXECUTOR_STATE_ADDRESS=state,
                         AGENTIC_NATS_URL=stack.nats_url, AGENTIC_UPSTREAM_URL=upstream.base_url)
        wait_until(lambda: tcp_accepts(executor_port), 30, "executor")
        executor = f"127.0.0.1:{executor_port}"
    else:
        process = None
        executor = stack.urls["executor"].removeprefix("grpc://")
    gateway_port = free_port()
    gateway = _spawn("agentic_gateway", AGENTIC_GATEWAY_HOST="127.0.0.1", AGENTIC_PORT=str(gateway_port),
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
    gateway = _spawn("agentic_gateway", AGENTIC_GATEWAY_HOST="127.0.0.1", AGENTIC_PORT=str(port),
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
