"""The fault suite's stack: every service as a process, with its own embedded PostgreSQL and NATS, so that pausing,
killing or restarting them disturbs no other test. Short timeouts (settings) keep each scenario to seconds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agentic_local.stack import LocalStack, StackConfig

from tests.faults.support import TENANT, FaultStack
from tests.support.fake_upstream import FakeUpstream

# Settings that make every fault show within seconds.
FAST = {
    "AGENTIC_GATEWAY_API_KEYS": f"sk-faults={TENANT}",
    "AGENTIC_EXECUTOR_UPSTREAM_READ_TIMEOUT_SECONDS": "3",
    "AGENTIC_EXECUTOR_UPSTREAM_RETRIES": "0",
    "AGENTIC_EXECUTOR_TOOL_TIMEOUT_SECONDS": "40",       # outlasts a 10 s NATS pause and a redelivery
    "AGENTIC_EXECUTOR_CONVERSATION_WAIT_SECONDS": "2",
    "AGENTIC_TOOL_RUNNER_KINDS": "operator",
    "AGENTIC_TOOL_RUNNER_OPERATOR_MODULES": "tests.support.operator_tools",
    "AGENTIC_TOOL_RUNNER_ACK_WAIT_SECONDS": "3",          # a dead runner's calls run elsewhere within 3 s
    "AGENTIC_TOOL_RUNNER_HEARTBEAT_SECONDS": "1",
    "AGENTIC_MCP_BRIDGE_ACK_WAIT_SECONDS": "3",
    "AGENTIC_MCP_BRIDGE_HEARTBEAT_SECONDS": "1",
    "AGENTIC_MCP_BRIDGE_ALLOW_HTTP": "true",
    **{f"AGENTIC_{service}_DRAIN_SECONDS": "5" for service in ("GATEWAY", "EXECUTOR", "STATE", "TOOL_RUNNER",
                                                               "MCP_BRIDGE", "LLM_D")},
}


@pytest.fixture(scope="module")
def faults(fake_upstream: FakeUpstream, fake_mcp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultStack]:
    """One stack per module (its own PostgreSQL and NATS); each scenario leaves it whole, restarting what it broke."""
    config = StackConfig(
        data_dir=tmp_path_factory.mktemp("faults"), upstream_url=fake_upstream.base_url, gateway_port=0, llm_d_port=0,
        extra_env={**FAST, "AGENTIC_MCP_ALLOWED_HOSTS": fake_mcp.host},
    )
    stack = LocalStack(config).start()
    yield FaultStack(stack)
    stack.stop()
