"""WebSocket mode against SSE (`python -m bench.websocket`; a part of `make bench`): one turn each way, and what a
50-turn session sends.

A turn over SSE is a POST whose streamed reply is read to its end (aiohttp, one kept-alive connection); over
WebSocket it is one `response.create` message on an open connection, read to its terminal event; latency and
CPU ms per turn of each process (from /proc). The session figure is the bytes the client sends per turn on one
connection, continuing with `previous_response_id` (only the new input) or resending the whole history each
turn (what a client without server state does). Its own stack and fake model server.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import aiohttp
import uvloop
import websockets

from bench.cpu import cpu_seconds, ms_per_turn
from bench.figures import percentile
from bench.own_stack import own_stack

MODEL = "smollm2"
TERMINAL = {"response.completed", "response.incomplete", "response.failed", "error"}


async def _sse_turn(client: aiohttp.ClientSession, url: str, body: bytes) -> float:
    started = time.perf_counter()
    async with client.post(url, data=body, headers={"content-type": "application/json"}) as reply:
        async for _ in reply.content.iter_any():
            pass
        if reply.status != 200:
            raise RuntimeError(f"SSE turn answered {reply.status}")
    return time.perf_counter() - started


async def _ws_turn(connection: Any, message: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    await connection.send(message)
    while True:
        event = json.loads(await connection.recv())
        if event["type"] in TERMINAL:
            if event["type"] == "error":
                raise RuntimeError(f"WebSocket turn failed: {event}")
            return time.perf_counter() - started, event["response"]


def _ws_url(base_url: str) -> str:
    return base_url.replace("http://", "ws://") + "/responses"


async def _sse_turns(base_url: str, body: bytes, turns: int) -> list[float]:
    async with aiohttp.ClientSession() as client:
        return [await _sse_turn(client, base_url + "/responses", body) for _ in range(turns)]


async def _ws_turns(base_url: str, message: str, turns: int) -> list[float]:
    async with websockets.connect(_ws_url(base_url), max_size=None) as connection:
        return [(await _ws_turn(connection, message))[0] for _ in range(turns)]


def turn_figures(base_url: str, pids: dict[str, int], turns: int, store: bool) -> dict[str, dict[str, Any]]:
    """The same streamed turn over SSE and over WebSocket, one at a time after a warm-up: latency, CPU per turn."""
    fields = {"model": MODEL, "input": "Say hello in five words.", "max_output_tokens": 24, "store": store}
    runs = {"SSE": lambda count: _sse_turns(base_url, json.dumps({**fields, "stream": True}).encode(), count),
            "WebSocket": lambda count: _ws_turns(base_url, json.dumps({"type": "response.create", **fields}), count)}
    figures: dict[str, dict[str, Any]] = {}
    for transport, run_turns in runs.items():
        uvloop.run(run_turns(20))
        before = cpu_seconds(pids)
        latencies = uvloop.run(run_turns(turns))
        figures[transport] = {"p50_ms": percentile(latencies, 0.5) * 1000, "p95_ms": percentile(latencies, 0.95) * 1000,
                              "cpu_ms": ms_per_turn(before, cpu_seconds(pids), turns)}
    return figures


async def session_bytes(base_url: str, turns: int, continue_on_connection: bool) -> dict[str, float]:
    """A `turns`-turn unstored session on one connection: bytes sent per turn (first, last, mean), wall time."""
    history: list[dict[str, Any]] = []
    sent: list[int] = []
    previous: str | None = None
    started = time.perf_counter()
    async with websockets.connect(_ws_url(base_url), max_size=None) as connection:
        for turn in range(turns):
            new = [{"role": "user", "content": f"Turn {turn}: say hello in five words."}]
            fields: dict[str, Any] = {"type": "response.create", "model": MODEL, "store": False, "max_output_tokens": 24}
            if continue_on_connection and previous is not None:
                fields.update(previous_response_id=previous, input=new)
            else:
                fields.update(input=history + new)
            message = json.dumps(fields)
            sent.append(len(message.encode()))
            _, response = await _ws_turn(connection, message)
            previous = response["id"]
            history += new + response["output"]
    return {"first_bytes": sent[0], "last_bytes": sent[-1], "mean_bytes": sum(sent) / len(sent),
            "seconds": time.perf_counter() - started}


def run_websocket_benchmarks(turns: int = 200) -> str:
    """The markdown section of `make bench` for WebSocket mode."""
    with own_stack("websocket") as (stack, pids):
        lines = ["", "WebSocket mode:", "",
                 "| turn (streamed, one at a time) | transport | p50 ms | p95 ms | "
                 + " | ".join(f"{name} CPU ms/turn" for name in pids) + " |",
                 "|---|---|---|---|" + "---|" * len(pids)]
        for store in (True, False):
            label = "stored (through the executor)" if store else "unstored (straight to the model server)"
            for transport, figures in turn_figures(stack.base_url, pids, turns, store).items():
                print(json.dumps({"websocket_turn": {"store": store, "transport": transport, **figures}}), flush=True)
                lines.append(f"| {label} | {transport} | {figures['p50_ms']:.2f} | {figures['p95_ms']:.2f} | "
                             + " | ".join(f"{figures['cpu_ms'][name]:.2f}" for name in pids) + " |")
        lines += ["", "| 50-turn unstored session, one connection | bytes sent: turn 1 | turn 50 | mean per turn | wall s |",
                  "|---|---|---|---|---|"]
        for continued in (True, False):
            lines.append(_session_line(stack.base_url, continued))
    return "\n".join(lines)


def _session_line(base_url: str, continued: bool) -> str:
    figures = uvloop.run(session_bytes(base_url, 50, continued))
    print(json.dumps({"websocket_session": {"previous_response_id": continued, **figures}}), flush=True)
    label = "`previous_response_id` (new input only)" if continued else "full history every turn"
    return (f"| {label} | {figures['first_bytes']} | {figures['last_bytes']} | {figures['mean_bytes']:.0f} | "
            f"{figures['seconds']:.2f} |")


if __name__ == "__main__":
    print(run_websocket_benchmarks(turns=max(50, int(os.environ.get("BENCH_REQUESTS", "600")) // 3)))
