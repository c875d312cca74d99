"""Agent-sized requests against the floor (`python -m bench.agent_turns`; a part of `make bench`).

The floor is the fake model server answering the same request directly: its CPU per request is what the request
costs where nothing stands in between. Through the stack, each process's CPU per request is read from /proc the
same way (a process with its descendants), and the stack's sum (the model server left out) is set against it.

Scenarios: a plain turn (`store` both ways); Codex CLI's recorded first request (tests/fixtures/agent-clients,
40 KB: 9 tools including a namespace and web_search), streamed, `store` both ways; a turn on a conversation of
200 turns against its first turn; and a 50-turn Codex-like session over WebSocket (the recorded request, then
each turn a new ~1 KB input on `previous_response_id`), CPU per turn at its first turns against its last.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import uvloop
import websockets

from bench.cpu import cpu_seconds, ms_per_turn
from bench.cpu_turns import _conversation
from bench.figures import percentile
from bench.own_stack import own_stack

ROOT = Path(__file__).parents[1]
CODEX_FIXTURE = ROOT / "tests" / "fixtures" / "agent-clients" / "codex-0.169.0-first-request.json"
MODEL = "smollm2"
CONCURRENCY = 8
SESSIONS = 16  # WebSocket sessions run side by side, each turn of all of them one CPU reading
SESSION_TURNS = 50
STACK = ("gateway", "executor", "state", "postgres", "nats")
FLOOR = ("client", "model-server")  # what a request costs with nothing in between
TERMINAL = {"response.completed", "response.incomplete", "response.failed", "error"}
Body = Callable[[int], bytes]


def codex_body(**fields: Any) -> dict[str, Any]:
    """The recorded first request of a Codex CLI session, for the benchmark's model."""
    body: dict[str, Any] = json.loads(CODEX_FIXTURE.read_text())["body"]
    return {**body, "model": MODEL, **fields}


async def _drive(url: str, bodies: Body, turns: int, stream: bool) -> list[float]:
    latencies: list[float] = []
    next_turn = 0
    headers = {"content-type": "application/json"}

    async def worker(client: aiohttp.ClientSession) -> None:
        nonlocal next_turn
        while next_turn < turns:
            body = bodies(next_turn)
            next_turn += 1
            started = time.perf_counter()
            async with client.post(url, data=body, headers=headers) as reply:
                payload = await reply.read()
                if reply.status != 200 or (stream and b"response.completed" not in payload):
                    raise RuntimeError(f"{url} answered {reply.status}: {await reply.text()}")
            latencies.append(time.perf_counter() - started)

    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as client:
        await asyncio.gather(*(worker(client) for _ in range(CONCURRENCY)))
    return latencies


def _measure(url: str, bodies: Body, turns: int, stream: bool, pids: dict[str, int]) -> dict[str, Any]:
    uvloop.run(_drive(url, bodies, 20, stream))
    before, client = cpu_seconds(pids), time.process_time()
    latencies = uvloop.run(_drive(url, bodies, turns, stream))
    cpu = {**ms_per_turn(before, cpu_seconds(pids), turns), "client": (time.process_time() - client) * 1000 / turns}
    return {"cpu_ms": cpu, "p50_ms": percentile(latencies, 0.5) * 1000}


def _fixed(body: dict[str, Any]) -> Body:
    encoded = json.dumps(body).encode()
    return lambda n: encoded


async def _ws_turn(connection: Any, message: str) -> dict[str, Any]:
    await connection.send(message)
    while True:
        event = json.loads(await connection.recv())
        if event["type"] in TERMINAL:
            if event["type"] != "response.completed":
                raise RuntimeError(f"WebSocket turn ended {event}")
            response: dict[str, Any] = event["response"]
            return response


async def _sessions(base_url: str, pids: dict[str, int], store: bool) -> list[dict[str, float]]:
    """SESSIONS Codex-like sessions in lockstep, one connection each; CPU per turn of each turn number."""
    url = base_url.replace("http://", "ws://") + "/responses"
    first = codex_body(store=store)
    first.pop("stream", None)
    connections = [await websockets.connect(url, max_size=None) for _ in range(SESSIONS)]
    previous: list[str | None] = [None] * SESSIONS
    per_turn: list[dict[str, float]] = []
    tool_output = "total 48\n" + "".join(f"-rw-r--r-- 1 user user {n * 37} Dec  1 12:00 file_{n}.py\n" for n in range(20))
    try:
        for turn in range(SESSION_TURNS):
            messages = []
            for session in range(SESSIONS):
                if previous[session] is None:
                    fields = {"type": "response.create", **first}
                else:
                    fields = {"type": "response.create", **first, "previous_response_id": previous[session],
                              "input": [{"role": "user", "content": f"Turn {turn}: the command printed\n{tool_output}"}]}
                messages.append(json.dumps(fields))
            before = cpu_seconds(pids)
            responses = await asyncio.gather(*(_ws_turn(c, m) for c, m in zip(connections, messages, strict=True)))
            per_turn.append(ms_per_turn(before, cpu_seconds(pids), SESSIONS))
            previous = [response["id"] for response in responses]
    finally:
        for connection in connections:
            await connection.close()
    return per_turn


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {name: sum(row[name] for row in rows) / len(rows) for name in rows[0]}


def _stack_sum(cpu: dict[str, float]) -> float:
    """The stack's processes and the model server (the client's share is the same either way)."""
    return sum(cpu.get(name, 0.0) for name in (*STACK, "model-server"))


def run_agent_turn_benchmarks(turns: int = 400) -> str:
    plain = {"model": MODEL, "input": "Say hello in five words.", "max_output_tokens": 24}
    scenarios: list[tuple[str, dict[str, Any], bool]] = [
        ("plain turn, `store: false` (pass-through)", {**plain, "store": False}, False),
        ("plain stored turn", {**plain, "store": True}, False),
        ("Codex's first request, `store: false`, streamed", codex_body(store=False), True),
        ("Codex's first request, stored, streamed", codex_body(store=True), True),
    ]
    # A Codex model's window, not the benchmark model's 4,096 tokens: the recorded request alone is ~10,000.
    with own_stack("agent", AGENTIC_EXECUTOR_CONTEXT_WINDOW_TOKENS="400000", with_model_server=True) as (stack, pids):
        model_url = stack.config.upstream_url
        direct_url = model_url + "/responses"
        lines = ["", f"Agent-sized requests: CPU ms per request per process (concurrency {CONCURRENCY}, "
                 f"{turns} requests each; direct = the fake model server alone):", "",
                 "| request | direct: client + model server | agentic: client + model server | "
                 + " | ".join(STACK) + " | agentic (all) | × direct | direct p50 ms | agentic p50 ms |",
                 "|---|---|---|" + "---|" * len(STACK) + "---|---|---|---|"]
        for label, body, stream in scenarios:
            direct = _measure(direct_url, _fixed(body), turns, stream, pids)
            through = _measure(stack.base_url + "/responses", _fixed(body), turns, stream, pids)
            floor = sum(direct["cpu_ms"][name] for name in FLOOR)
            total = sum(through["cpu_ms"][name] for name in (*FLOOR, *STACK))
            print(json.dumps({"agent_turn": label, "direct": direct, "agentic": through}), flush=True)
            starts = " + ".join(f"{direct['cpu_ms'][name]:.2f}" for name in FLOOR)
            ends = " + ".join(f"{through['cpu_ms'][name]:.2f}" for name in FLOOR)
            lines.append(f"| {label} | {starts} | {ends} | " + " | ".join(f"{through['cpu_ms'][n]:.2f}" for n in STACK)
                         + f" | {total:.2f} | {total / floor:.2f}× | {direct['p50_ms']:.2f} | {through['p50_ms']:.2f} |")

        fresh = [uvloop.run(_conversation(stack.base_url, 0)) for _ in range(turns + 20)]
        long = [uvloop.run(_conversation(stack.base_url, 200)) for _ in range(CONCURRENCY)]
        conversation_rows = []
        for label, bodies in (
            ("conversation, first turn", lambda n: json.dumps({**plain, "conversation": fresh[n % len(fresh)]}).encode()),
            ("conversation of 200 turns", lambda n: json.dumps({**plain, "conversation": long[n % CONCURRENCY]}).encode()),
        ):
            figures = _measure(stack.base_url + "/responses", bodies, turns, False, pids)
            print(json.dumps({"agent_turn": label, "agentic": figures}), flush=True)
            conversation_rows.append((label, figures))
        first_sum = _stack_sum(conversation_rows[0][1]["cpu_ms"])
        lines += ["", "| conversation turn | " + " | ".join(STACK) + " | model server | sum | × first turn | p50 ms |",
                  "|---|" + "---|" * len(STACK) + "---|---|---|---|"]
        for label, figures in conversation_rows:
            total = _stack_sum(figures["cpu_ms"])
            lines.append(f"| {label} | " + " | ".join(f"{figures['cpu_ms'][n]:.2f}" for n in (*STACK, "model-server"))
                         + f" | {total:.2f} | {total / first_sum:.2f}× | {figures['p50_ms']:.2f} |")

        lines += ["", f"{SESSION_TURNS}-turn Codex-like sessions over WebSocket ({SESSIONS} side by side, "
                  "`previous_response_id`, ~1 KB new input a turn): CPU ms per turn", "",
                  "| session | turns | " + " | ".join(STACK) + " | model server | sum | × turns 1–5 |",
                  "|---|---|" + "---|" * len(STACK) + "---|---|---|"]
        for store in (False, True):
            per_turn = uvloop.run(_sessions(stack.base_url, pids, store))
            print(json.dumps({"agent_session": {"store": store, "per_turn": per_turn}}), flush=True)
            early, late = _mean(per_turn[:5]), _mean(per_turn[-5:])
            for span, cpu in (("1–5", early), (f"{SESSION_TURNS - 4}–{SESSION_TURNS}", late)):
                lines.append(f"| `store: {str(store).lower()}` | {span} | " + " | ".join(f"{cpu[n]:.2f}" for n in (*STACK, "model-server"))
                             + f" | {_stack_sum(cpu):.2f} | {_stack_sum(cpu) / _stack_sum(early):.2f}× |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run_agent_turn_benchmarks(turns=max(100, int(os.environ.get("BENCH_REQUESTS", "600")) * 2 // 3)))
