"""A whole stack on the session's PostgreSQL but with a NATS server of its own: its queues, streams, buckets and
tool runners are nobody else's, so a test may kill parts of it or shorten its leases. Its runners serve the test
operator tools."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentic_local.infra import EmbeddedNats
from agentic_local.stack import LocalStack, StackConfig


@contextmanager
def own_nats_stack(data_dir: Path, database_url: str, upstream_url: str, **env: str) -> Iterator[LocalStack]:
    nats_server = EmbeddedNats(data_dir, data_dir / "logs")
    config = StackConfig(
        data_dir=data_dir / "stack", upstream_url=upstream_url, gateway_port=0, llm_d_port=0,
        database_url=database_url, nats_url=nats_server.start(),
        extra_env={"AGENTIC_TOOL_RUNNER_KINDS": "operator",
                   "AGENTIC_TOOL_RUNNER_OPERATOR_MODULES": "tests.support.operator_tools", **env},
    )
    try:
        stack = LocalStack(config).start()
        try:
            yield stack
        finally:
            stack.stop()
    finally:
        nats_server.stop()
