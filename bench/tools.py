"""Tool benchmarks: calls/s through NATS with 1, 2 and 4 runners, and the cost of one gateway tool round.

Throughput: the executor's dispatcher sends calls to a tool that sleeps 100 ms;
runners run one call at a time each, so the ideal is 10 calls/s per runner.
Round cost: a turn whose model calls the `echo` operator tool once (two
inference rounds, one dispatch) against a plain one-round turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import uvloop
from agentic_core.tools.protocol import ToolCall
from agentic_local.infra import EmbeddedNats
from agentic_local.processes import ChildProcess, free_port, tcp_accepts, wait_until
from agentic_local.stack import LocalStack, StackConfig, _http_ready
from agentic_runtime.nats import broker
from agentic_runtime.tls import transport_security
from agentic_runtime.tools.dispatch import ToolDispatcher

ROOT = Path(__file__).parents[1]
TOOLS_MODULE = "tests.support.operator_tools"


def _runner(nats_url: str, logs: Path, index: int) -> ChildProcess:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_")}
    env.update(AGENTIC_NATS_URL=nats_url, AGENTIC_TOOL_RUNNER_PORT=str(port), AGENTIC_TOOL_RUNNER_HOST="127.0.0.1",
               AGENTIC_TOOL_RUNNER_KINDS="operator", AGENTIC_TOOL_RUNNER_OPERATOR_MODULES=TOOLS_MODULE,
               AGENTIC_TOOL_RUNNER_CONCURRENCY="1", AGENTIC_LOG_LEVEL="WARNING")
    child = ChildProcess(f"runner-{index}", [sys.executable, "-m", "agentic_tool_runner"], logs / f"runner-{index}.log", env=env)
    wait_until(lambda: _http_ready(f"http://127.0.0.1:{port}/ready"), 60, "tool runner", [child])
    return child


async def _throughput(nats_url: str, calls: int, in_flight: int) -> float:
    client = await broker.connect(nats_url, "bench", transport_security())
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    semaphore = asyncio.Semaphore(in_flight)

    async def one(index: int) -> None:
        async with semaphore:
            call = ToolCall(call_id=f"bench/{time.time_ns()}-{index}", kind="operator", tool="slow",
                            arguments={"seconds": 0.1}, deadline=time.time() + 60)
            result = await dispatcher.call(call, timeout=60)
            assert result.status == "ok", result

    await asyncio.gather(*(one(index) for index in range(8)))  # warm-up
    started = time.perf_counter()
    await asyncio.gather(*(one(index) for index in range(calls)))
    elapsed = time.perf_counter() - started
    await dispatcher.close()
    await client.drain()
    return calls / elapsed


async def _turn_latencies(base_url: str, body: dict, count: int) -> float:
    latencies = []
    async with aiohttp.ClientSession() as client:
        for index in range(count + 10):
            started = time.perf_counter()
            async with client.post(f"{base_url}/responses", json=body) as reply:
                payload = await reply.json()
                assert reply.status == 200 and payload["status"] == "completed", payload
            if index >= 10:
                latencies.append(time.perf_counter() - started)
    latencies.sort()
    return latencies[len(latencies) // 2] * 1000


def run_tool_benchmarks() -> str:
    lines = ["", "Tools:", "", "| runners (concurrency 1 each) | tool calls/s (100 ms tool) | vs 1 runner |", "|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="agentic-bench-tools-") as folder:
        data = Path(folder)
        server = EmbeddedNats(data, data / "logs")
        nats_url = server.start()
        runners: list[ChildProcess] = []
        try:
            baseline = None
            for count in (1, 2, 4):
                while len(runners) < count:
                    runners.append(_runner(nats_url, data / "logs", len(runners)))
                rate = uvloop.run(_throughput(nats_url, calls=40 * count, in_flight=8 * count))
                baseline = baseline or rate
                lines.append(f"| {count} | {rate:.1f} | {rate / baseline:.2f}x |")
        finally:
            for runner in runners:
                runner.stop()
            server.stop()

        port = free_port()
        fake = subprocess.Popen([sys.executable, "-m", "tests.support.fake_upstream", "--port", str(port), "--call-tools"],
                                cwd=ROOT)
        wait_until(lambda: tcp_accepts(port), 30, "fake model server")
        stack = LocalStack(StackConfig(
            data_dir=data / "stack", upstream_url=f"http://127.0.0.1:{port}/v1", gateway_port=0, llm_d_port=0,
            database_url=os.environ.get("AGENTIC_DATABASE_URL"), nats_url=os.environ.get("AGENTIC_NATS_URL"),
            extra_env={"AGENTIC_LOG_LEVEL": "WARNING", "AGENTIC_TOOL_RUNNER_OPERATOR_MODULES": TOOLS_MODULE},
        ))
        stack.start()
        try:
            plain = uvloop.run(_turn_latencies(stack.base_url, {"model": "smollm2", "input": "hi"}, 200))
            with_tool = uvloop.run(_turn_latencies(
                stack.base_url, {"model": "smollm2", "input": "hi", "tools": [{"type": "operator", "name": "echo"}]}, 200))
        finally:
            stack.stop()
            fake.terminate()
            fake.wait()
    lines += ["", f"One gateway tool round (the `echo` operator tool, two inference rounds): p50 {with_tool:.2f} ms against "
                  f"{plain:.2f} ms for a plain turn: +{with_tool - plain:.2f} ms."]
    return "\n".join(lines)


if __name__ == "__main__":
    print(json.dumps(run_tool_benchmarks()) if "--json" in sys.argv else run_tool_benchmarks())
