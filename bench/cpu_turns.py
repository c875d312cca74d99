"""CPU milliseconds per turn of each process, by scenario (`python -m bench.cpu_turns`; a part of `make bench`).

For each scenario a fixed number of turns runs at concurrency 8 after a warm-up, and each process's CPU time is
read from /proc before and after (a process with its descendants: PostgreSQL's backends count). The figure that
sizes a cluster: how many cores a thousand turns per second take, per service. Latency and throughput of the
same run are printed next to it; the machine is shared, so compare figures from one run.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import uvloop

from bench.cpu import cpu_seconds, ms_per_turn
from bench.figures import percentile
from bench.own_stack import own_stack

MODEL = "smollm2"
CONCURRENCY = 8
TOOLS_MODULE = "tests.support.operator_tools"
Body = Callable[[int], dict[str, Any]]


async def _drive(url: str, bodies: Body, turns: int, stream: bool) -> tuple[list[float], float]:
    latencies: list[float] = []
    next_turn = 0

    async def worker(client: aiohttp.ClientSession) -> None:
        nonlocal next_turn
        while next_turn < turns:
            body = bodies(next_turn)
            next_turn += 1
            started = time.perf_counter()
            async with client.post(url, json=body) as reply:
                await reply.read()
                if reply.status != 200:
                    raise RuntimeError(f"{url} answered {reply.status}: {await reply.text()}")
            latencies.append(time.perf_counter() - started)

    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(CONCURRENCY)))
        return latencies, time.perf_counter() - started


async def _conversation(base_url: str, prior_turns: int) -> str:
    async with aiohttp.ClientSession() as client:
        async with client.post(f"{base_url}/conversations", json={}) as reply:
            conversation_id: str = (await reply.json())["id"]
        for start in range(0, prior_turns * 2, 20):
            items = [{"role": "user" if (start + n) % 2 == 0 else "assistant", "content": f"turn {(start + n) // 2}"}
                     for n in range(min(20, prior_turns * 2 - start))]
            async with client.post(f"{base_url}/conversations/{conversation_id}/items", json={"items": items}) as reply:
                assert reply.status == 200, await reply.text()
    return conversation_id


async def _vector_store(base_url: str) -> str:
    """A store of one ingested document (keyword search: the benchmark's stack has no embeddings server)."""
    async with aiohttp.ClientSession() as client:
        form = aiohttp.FormData()
        form.add_field("purpose", "assistants")
        form.add_field("file", b"Llamas carry packs in the Andes. Say hello in five words, the llama said.",
                       filename="llamas.txt", content_type="text/plain")
        async with client.post(f"{base_url}/files", data=form) as reply:
            file_id = (await reply.json())["id"]
        async with client.post(f"{base_url}/vector_stores", json={"file_ids": [file_id]}) as reply:
            store_id: str = (await reply.json())["id"]
        for _ in range(600):
            async with client.get(f"{base_url}/vector_stores/{store_id}/files/{file_id}") as reply:
                status = (await reply.json())["status"]
            if status != "in_progress":
                break
            await asyncio.sleep(0.1)
        if status != "completed":
            raise RuntimeError(f"the benchmark's document ended {status}")
        return store_id


def _scenarios(base_url: str, turns: int) -> dict[str, tuple[str, Body, bool]]:
    plain = {"model": MODEL, "input": "Say hello in five words.", "max_output_tokens": 24}
    store = uvloop.run(_vector_store(base_url))
    fresh = [uvloop.run(_conversation(base_url, 0)) for _ in range(turns + 20)]
    long = [uvloop.run(_conversation(base_url, 200)) for _ in range(CONCURRENCY)]
    messages = {"model": MODEL, "max_tokens": 24, "messages": [{"role": "user", "content": "Say hello."}]}
    return {
        "stored": ("/responses", lambda n: plain, False),
        "pass-through": ("/responses", lambda n: {**plain, "store": False}, False),
        "streamed": ("/responses", lambda n: {**plain, "stream": True}, True),
        "conversation, first turn": ("/responses", lambda n: {**plain, "conversation": fresh[n]}, False),
        "conversation of 200 turns": ("/responses", lambda n: {**plain, "conversation": long[n % CONCURRENCY]}, False),
        "tool round (operator echo)": ("/responses", lambda n: {**plain, "tools": [{"type": "operator", "name": "echo"}]},
                                       False),
        "file_search round (one search)": ("/responses", lambda n: {
            **plain, "tools": [{"type": "file_search", "vector_store_ids": [store]}]}, False),
        "Messages (pass-through)": ("/messages", lambda n: messages, False),
    }


def run_cpu_turn_benchmarks(turns: int = 400) -> str:
    with own_stack("cpu", ("--call-tools",), AGENTIC_TOOL_RUNNER_OPERATOR_MODULES=TOOLS_MODULE) as (stack, pids):
        pids = {**pids, **{name: pid for name, pid in _more_pids(stack).items()}}
        rows = []
        only = os.environ.get("BENCH_SCENARIOS")  # e.g. "stored,file_search round (one search)"
        for scenario, (path, bodies, stream) in _scenarios(stack.base_url, turns).items():
            if only and scenario not in only.split(","):
                continue
            url = stack.base_url + path
            uvloop.run(_drive(url, _spare(bodies, turns), 20, stream))  # warm-up, on spare conversations
            before = cpu_seconds(pids)
            latencies, elapsed = uvloop.run(_drive(url, bodies, turns, stream))
            cpu = ms_per_turn(before, cpu_seconds(pids), turns)
            print(json.dumps({"scenario": scenario, "cpu_ms": cpu, "p50_ms": percentile(latencies, 0.5) * 1000}),
                  flush=True)
            rows.append((scenario, cpu, percentile(latencies, 0.5) * 1000, percentile(latencies, 0.95) * 1000,
                         turns / elapsed))
    names = [name for name in pids if any(cpu[name] for _, cpu, _, _, _ in rows)]
    lines = ["", f"CPU ms per turn per process (concurrency {CONCURRENCY}, {turns} turns per scenario):", "",
             "| scenario | " + " | ".join(names) + " | sum | p50 ms | p95 ms | turns/s |",
             "|---|" + "---|" * (len(names) + 4)]
    for scenario, cpu, p50, p95, rate in rows:
        lines.append(f"| {scenario} | " + " | ".join(f"{cpu[name]:.2f}" for name in names)
                     + f" | {sum(cpu[name] for name in names):.2f} | {p50:.2f} | {p95:.2f} | {rate:.0f} |")
    return "\n".join(lines)


def _spare(bodies: Body, turns: int) -> Body:
    return lambda n: bodies(turns + n % 20)


def _more_pids(stack: Any) -> dict[str, int]:
    """The tool runner, the MCP bridge and retrieval too (a tool round reaches the runner, file_search retrieval)."""
    return {child.name: child.process.pid for child in stack.children
            if child.name in ("tool-runner", "mcp-bridge", "retrieval")}


if __name__ == "__main__":
    print(run_cpu_turn_benchmarks(turns=max(100, int(os.environ.get("BENCH_REQUESTS", "600")) * 2 // 3)))
