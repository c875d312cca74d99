"""Every service reports health, readiness and Prometheus metrics."""

from __future__ import annotations

import os
import subprocess
import sys

import grpc
import httpx
import pytest
from agentic_local.processes import free_port, wait_until
from agentic_runtime.tls import channel_credentials, channel_options, transport_security
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.e2e.test_drain import _spawn, transport_env


@pytest.mark.parametrize("service", ["gateway", "tool-runner", "llm-d"])
def test_http_services_answer_health_and_ready(stack, service: str) -> None:
    base = stack.urls[service]
    assert httpx.get(f"{base}/health").json() == {"status": "ok"}
    ready = httpx.get(f"{base}/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


def test_gateway_readiness_covers_state_and_executor(stack) -> None:
    checks = httpx.get(f"{stack.urls['gateway']}/ready").json()["checks"]
    assert checks["state"] and checks["executor"]


def test_a_gateway_is_ready_without_nats_which_it_does_not_use(stack) -> None:
    """A NATS outage must not take the gateways (pass-through traffic included) out of rotation."""
    port = free_port()
    gateway = _spawn(stack, "agentic_gateway", AGENTIC_GATEWAY_HOST="127.0.0.1", AGENTIC_PORT=str(port),
                     AGENTIC_GATEWAY_METRICS_PORT="0",
                     AGENTIC_GATEWAY_EXECUTOR_ADDRESS=stack.urls["executor"].removeprefix("grpc://"),
                     AGENTIC_GATEWAY_STATE_ADDRESS=stack.urls["state"].removeprefix("grpc://"),
                     AGENTIC_NATS_URL="nats://127.0.0.1:9")  # nothing listens there
    try:
        wait_until(lambda: httpx.get(f"http://127.0.0.1:{port}/ready").status_code == 200, 30, "gateway ready")
        assert "nats" not in httpx.get(f"http://127.0.0.1:{port}/ready").json()["checks"]
    finally:
        gateway.terminate()
        gateway.wait(30)


@pytest.mark.parametrize("service", ["executor", "state", "mcp-bridge"])
def test_grpc_services_serve_the_standard_health_service(stack, service: str) -> None:
    """Over plaintext, or TLS (mTLS) as the services' own clients speak it when the stack has certificates."""
    target = stack.urls[service].removeprefix("grpc://")
    security = transport_security(transport_env(stack))
    credentials = channel_credentials(security)
    channel = (grpc.insecure_channel(target) if credentials is None
               else grpc.secure_channel(target, credentials, options=channel_options(security)))
    with channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


@pytest.mark.parametrize("service", ["executor", "state", "mcp-bridge"])
def test_the_tls_probe_sees_grpc_services_serving(stack, service: str) -> None:
    """`python -m agentic_runtime.tls <port>`, the exec probe of the chart and compose: TLS or not, as the server."""
    port = stack.urls[service].rsplit(":", 1)[1]
    env = {**{key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_")}, **transport_env(stack)}
    check = subprocess.run([sys.executable, "-m", "agentic_runtime.tls", port], env=env, capture_output=True, timeout=30)
    assert check.returncode == 0, check.stderr.decode()


@pytest.mark.parametrize("service", ["gateway", "executor", "state", "mcp-bridge", "tool-runner", "llm-d"])
def test_every_service_exposes_prometheus_metrics(stack, service: str) -> None:
    reply = httpx.get(stack.metrics_urls[service])
    assert reply.status_code == 200
    assert "# TYPE process_cpu_seconds_total counter" in reply.text or "python_info" in reply.text


def test_turn_metrics_count_completed_turns(stack, client, upstream) -> None:
    client.responses.create(model="smollm2", input="count me")
    text = httpx.get(stack.metrics_urls["executor"]).text
    assert 'agentic_executor_turns_total{status="completed"}' in text
    assert "agentic_gateway_requests_total" in httpx.get(stack.metrics_urls["gateway"]).text


def test_the_gateways_metrics_are_on_their_own_port_not_the_api_port(stack) -> None:
    """They name tenants and their usage: the public API port answers /metrics with 404 (a caller's key or not)."""
    assert stack.metrics_urls["gateway"].rsplit(":", 1)[0] == stack.urls["gateway"].rsplit(":", 1)[0]
    assert stack.metrics_urls["gateway"] != stack.urls["gateway"] + "/metrics"
    assert httpx.get(stack.urls["gateway"] + "/metrics").status_code == 404
    assert "agentic_gateway_requests_total" in httpx.get(stack.metrics_urls["gateway"]).text
