"""`make bench`: the stack's overhead over calling the model server directly.

Starts the fake model server as its own process and the whole stack with the
local launcher, then measures, in the same run and with the same client
(aiohttp on uvloop, one process; it shares the 2 cores with the stack):
non-streaming stored turns at concurrency 1, 8 and 32 (p50/p95 latency,
requests/s) and the time to first byte of streaming turns — each directly
against the model server and through the stack — and prints figures and ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import aiohttp
import uvloop
from agentic_local.processes import free_port, tcp_accepts, wait_until
from agentic_local.stack import LocalStack, StackConfig

from bench import llm_d
from bench.agent_turns import run_agent_turn_benchmarks
from bench.background import run_background_benchmarks
from bench.cpu_turns import run_cpu_turn_benchmarks
from bench.figures import Figures, percentile
from bench.grpc_floor import run_grpc_floor
from bench.retrieval import run_retrieval_benchmarks, run_workers_benchmarks
from bench.tools import run_tool_benchmarks
from bench.vector_search import run_vector_search_benchmark
from bench.websocket import run_websocket_benchmarks

ROOT = Path(__file__).parents[1]
BODY = {"model": "smollm2", "input": "Say hello in five words.", "max_output_tokens": 24}


async def _drive(client: aiohttp.ClientSession, url: str, bodies: list[bytes], concurrency: int, total: int, first_byte: bool) -> tuple[list[float], float]:
    latencies: list[float] = []
    remaining = total
    sent = 0
    headers = {"content-type": "application/json"}

    async def worker() -> None:
        nonlocal remaining, sent
        while remaining > 0:
            remaining -= 1
            body = bodies[sent % len(bodies)]
            sent += 1
            started = time.perf_counter()
            async with client.post(url, data=body, headers=headers) as reply:
                if first_byte:
                    chunks = reply.content.iter_any()
                    await anext(chunks)
                    latencies.append(time.perf_counter() - started)
                    async for _ in chunks:
                        pass
                else:
                    await reply.read()
                    latencies.append(time.perf_counter() - started)
                if reply.status != 200:
                    raise RuntimeError(f"{url} answered {reply.status}")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, time.perf_counter() - started


SLOW_MODEL = "smollm2-slow"  # served by a second fake that takes 20 ms per generation, like a real small model
MESSAGES_BODY = {"model": "smollm2", "max_tokens": 24, "messages": [{"role": "user", "content": "Say hello in five words."}]}
SCENARIO_FIELDS = {
    "json-stored": {},
    "stream-ttfb": {"stream": True},
    "passthrough": {"store": False},
    "json-stored-20ms": {"model": SLOW_MODEL},
    "passthrough-20ms": {"store": False, "model": SLOW_MODEL},
}


async def measure(target: str, base_url: str, scenario: str, concurrency: int, total: int,
                  variants: list[dict] | None = None, warm_up: bool = True) -> Figures:
    """`variants`: extra fields, one set per request in turn (e.g. a different conversation each)."""
    stream = scenario == "stream-ttfb"
    base = MESSAGES_BODY if scenario.startswith("messages") else BODY
    path = "/messages" if scenario.startswith("messages") else "/responses"
    bodies = [json.dumps({**base, **SCENARIO_FIELDS.get(scenario, {}), **extra}).encode() for extra in variants or [{}]]
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as client:
        if warm_up:
            await _drive(client, base_url + path, bodies, concurrency, max(20, concurrency * 2), stream)
        latencies, elapsed = await _drive(client, base_url + path, bodies, concurrency, total, stream)
    return Figures(target, scenario, concurrency, total, round(percentile(latencies, 0.5) * 1000, 2),
                   round(percentile(latencies, 0.95) * 1000, 2), round(total / elapsed, 1))


async def long_conversation(base_url: str, prior_turns: int) -> str:
    """A conversation holding `prior_turns` turns (a user and an assistant item each), built through the API."""
    async with aiohttp.ClientSession() as client:
        async with client.post(f"{base_url}/conversations", json={}) as reply:
            conversation_id = (await reply.json())["id"]
        for start in range(0, prior_turns * 2, 20):
            items = [{"role": "user" if (start + n) % 2 == 0 else "assistant", "content": f"turn {(start + n) // 2} says hello"}
                     for n in range(min(20, prior_turns * 2 - start))]
            async with client.post(f"{base_url}/conversations/{conversation_id}/items", json={"items": items}) as reply:
                assert reply.status == 200, await reply.text()
    return conversation_id


def _report(results: list[Figures]) -> str:
    lines = ["| scenario | concurrency | direct p50 / p95 ms | stack p50 / p95 ms | added p50 ms | direct req/s | stack req/s | stack/direct req/s |",
             "|---|---|---|---|---|---|---|---|"]
    by_key = {(f.target, f.scenario, f.concurrency): f for f in results}
    for (target, scenario, concurrency), stack in by_key.items():
        if target != "stack" or ("direct", scenario, concurrency) not in by_key:
            continue
        direct = by_key[("direct", scenario, concurrency)]
        lines.append(
            f"| {scenario} | {concurrency} | {direct.p50_ms} / {direct.p95_ms} | {stack.p50_ms} / {stack.p95_ms} | "
            f"{stack.p50_ms - direct.p50_ms:+.2f} | {direct.requests_per_s} | {stack.requests_per_s} | "
            f"{stack.requests_per_s / direct.requests_per_s:.2f} |"
        )
    first_turn = by_key.get(("stack", "conversation-0", 1))
    lines.append("")
    for (_, scenario, _), figures in by_key.items():
        if scenario.startswith("conversation-") and first_turn is not None:
            lines.append(f"- {scenario} (a turn on a conversation with that many prior turns): p50 {figures.p50_ms} ms, "
                         f"p95 {figures.p95_ms} ms, {figures.p50_ms / first_turn.p50_ms:.2f}x the first turn's p50")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=int(os.environ.get("BENCH_REQUESTS", "600")))
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "latest.json")
    parser.add_argument("--only", default="", help="comma-separated `scenario:concurrency` rows of the latency table "
                        "(e.g. json-stored:1,stream-ttfb:1), and none of the other benchmarks")
    args = parser.parse_args()

    port, slow_port = free_port(), free_port()
    fakes = [
        subprocess.Popen([sys.executable, "-m", "tests.support.fake_upstream", "--port", str(port)], cwd=ROOT),
        subprocess.Popen([sys.executable, "-m", "tests.support.fake_upstream", "--port", str(slow_port), "--model", SLOW_MODEL,
                          "--latency-ms", "20"], cwd=ROOT),
    ]
    wait_until(lambda: tcp_accepts(port) and tcp_accepts(slow_port), 30, "fake model servers")
    upstream_url = f"http://127.0.0.1:{port}/v1"
    slow_url = f"http://127.0.0.1:{slow_port}/v1"
    with tempfile.TemporaryDirectory(prefix="agentic-bench-") as data_dir:
        stack = LocalStack(StackConfig(
            data_dir=Path(data_dir), upstream_url=upstream_url, gateway_port=0, llm_d_port=0,
            database_url=os.environ.get("AGENTIC_DATABASE_URL"), nats_url=os.environ.get("AGENTIC_NATS_URL"),
            extra_env={"AGENTIC_LOG_LEVEL": "WARNING",
                       "AGENTIC_MODELS": json.dumps([{"match": SLOW_MODEL, "base_url": slow_url}])},
        ))
        stack.start()
        try:
            results: list[Figures] = []
            plan = [("json-stored", 1), ("json-stored", 8), ("json-stored", 32), ("stream-ttfb", 1), ("stream-ttfb", 8),
                    ("passthrough", 1), ("passthrough", 32), ("json-stored-20ms", 32), ("passthrough-20ms", 32),
                    ("messages-passthrough", 1), ("messages-passthrough", 32)]
            if args.only:
                plan = [(row.split(":")[0], int(row.split(":")[1])) for row in args.only.split(",")]
            for scenario, concurrency in plan:
                total = args.requests if concurrency > 1 else args.requests // 2
                direct_url = slow_url if scenario.endswith("-20ms") else upstream_url
                for target, base in (("direct", direct_url), ("stack", stack.base_url)):
                    figures = uvloop.run(measure(target, base, scenario, concurrency, total))
                    print(json.dumps(asdict(figures)), flush=True)
                    results.append(figures)
            fresh = [{"conversation": uvloop.run(long_conversation(stack.base_url, 0))} for _ in range(100)]
            long = [{"conversation": uvloop.run(long_conversation(stack.base_url, 200))}]
            for scenario, variants in (("conversation-0", fresh), ("conversation-200", long)) if not args.only else ():
                figures = uvloop.run(measure("stack", stack.base_url, scenario, 1, 100, variants, warm_up=False))
                print(json.dumps(asdict(figures)), flush=True)
                results.append(figures)
        finally:
            stack.stop()
            for fake in fakes:
                fake.terminate()
                fake.wait()
    print()
    print(_report(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps([asdict(f) for f in results], indent=2))
    if args.only:
        return
    print(run_tool_benchmarks())
    print(run_cpu_turn_benchmarks(turns=max(100, args.requests * 2 // 3)))
    print(run_agent_turn_benchmarks(turns=max(100, args.requests * 2 // 3)))
    print(run_grpc_floor())
    print(run_background_benchmarks(turns=max(50, args.requests // 3)))
    print(run_websocket_benchmarks(turns=max(50, args.requests // 3)))
    llm_d.run(args.requests, args.out.parent / "llm-d.json")
    print(run_retrieval_benchmarks())
    print(run_workers_benchmarks())
    print(run_vector_search_benchmark().report())


if __name__ == "__main__":
    main()
