"""The soak (`make soak`): mixed traffic against a stack of its own for a fixed time, at the rate the machine holds.

Stored turns, streamed turns, tool rounds (an operator tool on the tool runner), conversation turns, chained turns
(`previous_response_id`) and Messages turns, taken in turn by `--concurrency` closed-loop clients (each sends its
next request when the last is answered, so the rate is the most the stack gives on this machine). After a warm-up
(memory grows while caches fill), each service's RSS and open file descriptors are read; again at the end.

Prints throughput, p50/p95/p99 per kind, errors (target 0) and each service's growth (target under 10%); exits 1
when a request failed or a service grew by 10% or more. Loopback only: its own fake model server, and its own
PostgreSQL and NATS unless AGENTIC_DATABASE_URL / AGENTIC_NATS_URL name servers.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import uvloop

from bench.cpu_turns import TOOLS_MODULE, _more_pids
from bench.figures import percentile
from bench.own_stack import own_stack

MODEL = "smollm2"
GROWTH_LIMIT = 0.10
TURNS_PER_CONVERSATION = 25  # a client starts a new conversation (and a new chain) after this many turns
PLAIN = {"model": MODEL, "input": "Say hello in five words.", "max_output_tokens": 24}
MESSAGES = {"model": MODEL, "max_tokens": 24, "messages": [{"role": "user", "content": "Say hello."}]}


@dataclass
class Footprint:
    rss_kib: int
    fds: int


def footprint(pid: int) -> Footprint:
    """Resident memory and open file descriptors of one process."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return Footprint(rss, len(os.listdir(f"/proc/{pid}/fd")))


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)


class Client:
    """One closed-loop client: its own conversation and response chain, renewed every `TURNS_PER_CONVERSATION`."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, tally: Tally) -> None:
        self.session, self.base_url, self.tally = session, base_url, tally
        self.conversation: str | None = None
        self.previous: str | None = None
        self.turns = 0

    async def _post(self, kind: str, path: str, body: dict[str, Any], stream: bool = False) -> dict[str, Any] | None:
        started = time.perf_counter()
        try:
            async with self.session.post(self.base_url + path, json=body) as reply:
                data = await reply.read()
                if reply.status != 200 or (stream and b"response.completed" not in data):
                    self.tally.errors[f"{kind}: {reply.status} {data[:120]!r}"] += 1
                    return None
        except (aiohttp.ClientError, TimeoutError) as error:
            self.tally.errors[f"{kind}: {error!r}"] += 1
            return None
        self.tally.latencies[kind].append(time.perf_counter() - started)
        return {} if stream else _json(data)

    async def stored(self) -> None:
        await self._post("stored", "/responses", PLAIN)

    async def streamed(self) -> None:
        await self._post("streamed", "/responses", {**PLAIN, "stream": True}, stream=True)

    async def tool_round(self) -> None:
        await self._post("tool round", "/responses", {**PLAIN, "tools": [{"type": "operator", "name": "echo"}]})

    async def messages(self) -> None:
        await self._post("Messages", "/messages", MESSAGES)

    async def conversation_turn(self) -> None:
        if self.conversation is None or self.turns >= TURNS_PER_CONVERSATION:
            created = await self._post("new conversation", "/conversations", {})
            self.conversation, self.previous, self.turns = (created or {}).get("id"), None, 0
        if self.conversation is not None:
            await self._post("conversation turn", "/responses", {**PLAIN, "conversation": self.conversation})
            self.turns += 1

    async def chained_turn(self) -> None:
        body = {**PLAIN, "previous_response_id": self.previous} if self.previous else PLAIN
        answer = await self._post("chained turn", "/responses", body)
        self.previous = (answer or {}).get("id") if self.turns < TURNS_PER_CONVERSATION else None

    def kinds(self) -> list[Callable[[], Awaitable[None]]]:
        return [self.stored, self.streamed, self.tool_round, self.conversation_turn, self.chained_turn, self.messages]


def _json(data: bytes) -> dict[str, Any]:
    value = orjson.loads(data)
    return value if isinstance(value, dict) else {}


async def _run(base_url: str, seconds: float, concurrency: int, tally: Tally) -> float:
    deadline = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as session:

        async def loop(number: int) -> None:
            client = Client(session, base_url, tally)
            kinds = itertools.islice(itertools.cycle(client.kinds()), number, None)  # clients start on different kinds
            while time.monotonic() < deadline:
                await next(kinds)()

        started = time.perf_counter()
        await asyncio.gather(*(loop(number) for number in range(concurrency)))
        return time.perf_counter() - started


def _report(tally: Tally, elapsed: float, before: dict[str, Footprint], after: dict[str, Footprint],
            concurrency: int) -> tuple[str, bool]:
    total = sum(len(values) for values in tally.latencies.values())
    errors = sum(tally.errors.values())
    lines = [f"Soak: {elapsed:.0f} s, {concurrency} clients, {total} requests answered, {total / elapsed:.1f} per "
             f"second, {errors} errors", "",
             "| kind | requests | p50 ms | p95 ms | p99 ms |", "|---|---|---|---|---|"]
    for kind, values in sorted(tally.latencies.items()):
        lines.append(f"| {kind} | {len(values)} | {percentile(values, 0.5) * 1000:.1f} | "
                     f"{percentile(values, 0.95) * 1000:.1f} | {percentile(values, 0.99) * 1000:.1f} |")
    lines += ["", "| process | RSS MiB after warm-up | RSS MiB at the end | growth | open fds (start → end) |",
              "|---|---|---|---|---|"]
    grew = False
    for name in before:
        start, end = before[name], after[name]
        growth = (end.rss_kib - start.rss_kib) / start.rss_kib
        grew |= growth >= GROWTH_LIMIT or end.fds > start.fds * (1 + GROWTH_LIMIT) + 2
        lines.append(f"| {name} | {start.rss_kib / 1024:.1f} | {end.rss_kib / 1024:.1f} | {growth:+.1%} | "
                     f"{start.fds} → {end.fds} |")
    for error, count in tally.errors.most_common(10):
        lines.append(f"error ×{count}: {error}")
    return "\n".join(lines), errors == 0 and not grew


def soak(seconds: float, concurrency: int, warmup: float) -> bool:
    with own_stack("soak", ("--call-tools",), AGENTIC_TOOL_RUNNER_OPERATOR_MODULES=TOOLS_MODULE) as (stack, pids):
        pids = {name: pid for name, pid in {**pids, **_more_pids(stack)}.items() if name not in ("postgres", "nats")}
        warm = Tally()
        uvloop.run(_run(stack.base_url, warmup, concurrency, warm))
        before = {name: footprint(pid) for name, pid in pids.items()}
        tally = Tally()
        tally.errors.update(warm.errors)  # a failure during the warm-up counts too
        elapsed = uvloop.run(_run(stack.base_url, seconds, concurrency, tally))
        after = {name: footprint(pid) for name, pid in pids.items()}
    report, passed = _report(tally, elapsed, before, after, concurrency)
    print(report, flush=True)
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", "600")))
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds of traffic before the first footprint")
    args = parser.parse_args()
    sys.exit(0 if soak(args.seconds, args.concurrency, args.warmup) else 1)


if __name__ == "__main__":
    main()
