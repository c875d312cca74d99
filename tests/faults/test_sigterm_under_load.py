"""SIGTERM of each service while turns run (plain, operator tool and MCP tool turns, some sent after the signal).

Every client either gets its response or a clear error (an API error in JSON, or a refused connection: nothing was
accepted); what a client was told is what is stored; the service exits within its drain bound and comes back.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.faults.support import API_KEY, MODEL, FaultStack, wait_for
from tests.support.fake_upstream import FakeUpstream

EXIT_BOUND_SECONDS = 20.0  # the suite's drain is 5 s; generous


@dataclass
class Outcome:
    status: int | None  # None: the connection was refused, the turn never accepted
    body: dict[str, Any]


@pytest.fixture()
def busy_upstream(upstream: FakeUpstream) -> Iterator[FakeUpstream]:
    """Every generation takes a second; a request that declares tools calls the first one once (`{"text": …}`)."""
    upstream.latency, upstream.call_tools = 1.0, True
    yield upstream
    upstream.latency, upstream.call_tools = 0.0, False


def _turn(faults: FaultStack, batch: str, number: int, tools: list[dict[str, Any]]) -> Outcome:
    body = {"model": MODEL, "input": f"turn {number}", "tools": tools, "metadata": {"batch": batch, "n": str(number)}}
    try:
        reply = httpx.post(faults.stack.base_url + "/responses", json=body, timeout=90,
                           headers={"authorization": f"Bearer {API_KEY}"})
    except httpx.ConnectError:
        return Outcome(None, {})
    return Outcome(reply.status_code, reply.json())  # a body that is not JSON fails the scenario here


def _tools(fake_mcp, number: int) -> list[dict[str, Any]]:
    if number % 3 == 1:
        return [{"type": "operator", "name": "echo"}]
    if number % 3 == 2:
        return [{"type": "mcp", "server_label": "docs", "server_url": fake_mcp.url, "require_approval": "never",
                 "allowed_tools": ["echo"]}]
    return []


def _stored(faults: FaultStack, batch: str) -> dict[str, str]:
    rows = faults.query("SELECT id, status FROM responses WHERE body->'metadata'->>'batch' = $1", batch)
    return {row["id"]: row["status"] for row in rows}


@pytest.mark.parametrize("service", ["gateway", "executor", "state", "tool-runner", "mcp-bridge"])
def test_sigterm_under_load(faults: FaultStack, busy_upstream: FakeUpstream, fake_mcp, service: str) -> None:
    batch = secrets.token_hex(6)
    with ThreadPoolExecutor(8) as pool:
        turns: list[Future[Outcome]] = [pool.submit(_turn, faults, batch, n, _tools(fake_mcp, n)) for n in range(5)]
        wait_for(lambda: len(busy_upstream.requests) >= 3, 30, "turns under way")
        faults.terminate(service)
        time.sleep(0.3)
        turns += [pool.submit(_turn, faults, batch, n, _tools(fake_mcp, n)) for n in range(5, 8)]
        child = faults.stack.service(service)
        wait_for(lambda: not child.running, EXIT_BOUND_SECONDS, f"{service} to exit after SIGTERM")
        faults.restart(service)  # as Kubernetes would: queued tool calls then run on the new runner
        outcomes = [turn.result(timeout=120) for turn in turns]

    told_completed = set()
    for outcome in outcomes:
        if outcome.status == 200:
            assert outcome.body["status"] == "completed", outcome.body
            told_completed.add(outcome.body["id"])
        elif outcome.status is not None:  # a clear error in the API's shape
            assert outcome.status >= 400 and outcome.body["error"]["message"], outcome.body
    stored = _stored(faults, batch)
    assert {id_ for id_, status in stored.items() if status == "completed"} == told_completed, (outcomes, stored)
    assert told_completed, "some turns finish within the drain bound"
    # The restarted service takes turns again (a client's channel to it may still be backing off a moment).
    wait_for(lambda: _turn(faults, batch, 99, _tools(fake_mcp, 1)).status == 200, 30, "a turn through the restarted "
             + service)
