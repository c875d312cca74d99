"""Background responses: what a resume and a background turn cost (`python -m bench.background`; the last part of
`make bench`).

- resume: a finished background response of about 1,000 events streamed again from the start
  (`GET /v1/responses/{id}?stream=true`): time from the GET to its last event;
- overhead: the same streamed turn in the foreground and with `background: true` (through the queue, an
  executor's worker and the RESPONSES stream), one at a time: latency from the POST to the terminal event,
  and CPU ms per turn of each process of the stack (from /proc).

Its own stack (embedded PostgreSQL and NATS unless AGENTIC_DATABASE_URL / AGENTIC_NATS_URL name servers) and
its own fake model server, which echoes the input word by word: one delta event per word.
"""

from __future__ import annotations

import json
import os
import time

import aiohttp
import uvloop

from bench.cpu import cpu_seconds, ms_per_turn
from bench.figures import percentile
from bench.own_stack import own_stack

TURN = {"model": "smollm2", "input": "Say hello in five words.", "stream": True}
RESUME_EVENTS = 1000
# The fake's echo of this many words streams 1,000 events: 8 around the text, one delta per word.
LONG_INPUT = " ".join(f"w{index}" for index in range(RESUME_EVENTS - 9))


async def _stream_to_end(client: aiohttp.ClientSession, method: str, url: str, body: dict | None = None) -> tuple[float, int]:
    """Seconds from the request to the terminal event, and the events read."""
    started = time.perf_counter()
    events = 0
    async with client.request(method, url, json=body) as reply:
        assert reply.status == 200, await reply.text()
        async for line in reply.content:
            if line.startswith(b"data: "):
                events += 1
                if b'"type":"response.completed"' in line:
                    break
    return time.perf_counter() - started, events


async def _finished_background_response(client: aiohttp.ClientSession, base_url: str) -> tuple[str, int]:
    async with client.post(f"{base_url}/responses", json={**TURN, "input": LONG_INPUT, "background": True}) as reply:
        response_id: str = ""
        events = 0
        async for line in reply.content:
            if line.startswith(b"data: "):
                events += 1
                response_id = response_id or json.loads(line[6:])["response"]["id"]
    return response_id, events


async def _resumes(base_url: str, count: int, pids: dict[str, int]) -> tuple[list[float], int, dict[str, float]]:
    """Latencies, the stream's events, and CPU ms per resume of each process."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as client:
        response_id, events = await _finished_background_response(client, base_url)
        url = f"{base_url}/responses/{response_id}?stream=true"
        for _ in range(3):  # warm-up
            await _stream_to_end(client, "GET", url)
        latencies = []
        before = cpu_seconds(pids)
        for _ in range(count):
            seconds, resumed = await _stream_to_end(client, "GET", url)
            assert resumed == events, (resumed, events)
            latencies.append(seconds)
    return latencies, events, ms_per_turn(before, cpu_seconds(pids), count)


async def _turns(base_url: str, count: int, background: bool) -> list[float]:
    body = {**TURN, "background": True} if background else TURN
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as client:
        return [(await _stream_to_end(client, "POST", f"{base_url}/responses", body))[0] for _ in range(count)]


def _ms(values: list[float], fraction: float) -> float:
    return round(percentile(values, fraction) * 1000, 2)


def run_background_benchmarks(turns: int = 200, resumes: int = 20) -> str:
    with own_stack("background") as (stack, pids):
        resumed, events, resume_cpu = uvloop.run(_resumes(stack.base_url, resumes, pids))
        latencies: dict[str, list[float]] = {}
        cpu: dict[str, dict[str, float]] = {}
        for mode in ("foreground", "background"):
            uvloop.run(_turns(stack.base_url, 20, mode == "background"))  # warm-up
            before = cpu_seconds(pids)
            latencies[mode] = uvloop.run(_turns(stack.base_url, turns, mode == "background"))
            cpu[mode] = ms_per_turn(before, cpu_seconds(pids), turns)
    lines = ["", "Background responses:", "",
             f"Resume of a finished background response of {events} events from the start (GET to last event, "
             f"{resumes} resumes): p50 {_ms(resumed, 0.5)} ms, p95 {_ms(resumed, 0.95)} ms; CPU ms per resume: "
             + ", ".join(f"{name} {ms:.1f}" for name, ms in resume_cpu.items()) + ".", "",
             f"A streamed turn, one at a time ({turns} turns each), POST to terminal event:", "",
             "| mode | p50 ms | p95 ms | " + " | ".join(f"{name} CPU ms/turn" for name in pids) + " |",
             "|---|---|---|" + "---|" * len(pids)]
    for mode in ("foreground", "background"):
        lines.append(f"| {mode} | {_ms(latencies[mode], 0.5)} | {_ms(latencies[mode], 0.95)} | "
                     + " | ".join(f"{cpu[mode][name]:.2f}" for name in pids) + " |")
    added = {name: cpu["background"][name] - cpu["foreground"][name] for name in pids}
    lines.append("| background - foreground | "
                 f"{_ms(latencies['background'], 0.5) - _ms(latencies['foreground'], 0.5):+.2f} | "
                 f"{_ms(latencies['background'], 0.95) - _ms(latencies['foreground'], 0.95):+.2f} | "
                 + " | ".join(f"{added[name]:+.2f}" for name in pids) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    requests = int(os.environ.get("BENCH_REQUESTS", "600"))
    print(run_background_benchmarks(turns=max(50, requests // 3)))
