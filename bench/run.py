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
from dataclasses import asdict, dataclass
from pathlib import Path

import aiohttp
import uvloop
from agentic_local.processes import free_port, tcp_accepts, wait_until
from agentic_local.stack import LocalStack, StackConfig

ROOT = Path(__file__).parents[1]
BODY = {"model": "smollm2", "input": "Say hello in five words.", "max_output_tokens": 24}


@dataclass
class Figures:
    target: str
    scenario: str
    concurrency: int
    requests: int
    p50_ms: float
    p95_ms: float
    requests_per_s: float


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def _drive(client: aiohttp.ClientSession, url: str, body: bytes, concurrency: int, total: int, first_byte: bool) -> tuple[list[float], float]:
    latencies: list[float] = []
    remaining = total
    headers = {"content-type": "application/json"}

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
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


async def measure(target: str, base_url: str, scenario: str, concurrency: int, total: int) -> Figures:
    stream = scenario == "stream-ttfb"
    body = json.dumps({**BODY, "stream": stream}).encode()
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as client:
        await _drive(client, f"{base_url}/responses", body, concurrency, max(20, concurrency * 2), stream)  # warm-up
        latencies, elapsed = await _drive(client, f"{base_url}/responses", body, concurrency, total, stream)
    return Figures(target, scenario, concurrency, total, round(_percentile(latencies, 0.5) * 1000, 2),
                   round(_percentile(latencies, 0.95) * 1000, 2), round(total / elapsed, 1))


def _report(results: list[Figures]) -> str:
    lines = ["| scenario | concurrency | direct p50 / p95 ms | stack p50 / p95 ms | added p50 ms | direct req/s | stack req/s | stack/direct req/s |",
             "|---|---|---|---|---|---|---|---|"]
    by_key = {(f.target, f.scenario, f.concurrency): f for f in results}
    for (target, scenario, concurrency), stack in by_key.items():
        if target != "stack":
            continue
        direct = by_key[("direct", scenario, concurrency)]
        lines.append(
            f"| {scenario} | {concurrency} | {direct.p50_ms} / {direct.p95_ms} | {stack.p50_ms} / {stack.p95_ms} | "
            f"{stack.p50_ms - direct.p50_ms:+.2f} | {direct.requests_per_s} | {stack.requests_per_s} | "
            f"{stack.requests_per_s / direct.requests_per_s:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=int(os.environ.get("BENCH_REQUESTS", "600")))
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "latest.json")
    args = parser.parse_args()

    port = free_port()
    fake = subprocess.Popen([sys.executable, "-m", "tests.support.fake_upstream", "--port", str(port)], cwd=ROOT)
    wait_until(lambda: tcp_accepts(port), 30, "fake model server")
    upstream_url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryDirectory(prefix="agentic-bench-") as data_dir:
        stack = LocalStack(StackConfig(
            data_dir=Path(data_dir), upstream_url=upstream_url, gateway_port=0, llm_d_port=0,
            database_url=os.environ.get("AGENTIC_DATABASE_URL"), nats_url=os.environ.get("AGENTIC_NATS_URL"),
            extra_env={"AGENTIC_LOG_LEVEL": "WARNING"},
        ))
        stack.start()
        try:
            results: list[Figures] = []
            plan = [("json-stored", 1), ("json-stored", 8), ("json-stored", 32), ("stream-ttfb", 1), ("stream-ttfb", 8)]
            for scenario, concurrency in plan:
                total = args.requests if concurrency > 1 else args.requests // 2
                for target, base in (("direct", upstream_url), ("stack", stack.base_url)):
                    figures = uvloop.run(measure(target, base, scenario, concurrency, total))
                    print(json.dumps(asdict(figures)), flush=True)
                    results.append(figures)
        finally:
            stack.stop()
            fake.terminate()
            fake.wait()
    print()
    print(_report(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps([asdict(f) for f in results], indent=2))


if __name__ == "__main__":
    main()
