"""The floor the transports set (`python -m bench.grpc_floor`; a part of `make bench`): CPU milliseconds of a bare
grpc.aio call on this machine, per side, with the services' own channel and server options and uvloop.

A server process answers a unary and a unary-stream method with the bytes it got (no protobuf work, no handler
work); a client process calls it at concurrency 8. Each process's CPU time is read from /proc around a fixed
number of calls. A stored turn makes three such calls (gateway → executor, executor → state to read, executor →
state to store), so three times the sum of both sides is what gRPC alone costs a stored turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import uvloop
from agentic_local.processes import free_port, tcp_accepts, wait_until
from agentic_runtime.grpc.client import CLIENT_OPTIONS
from agentic_runtime.grpc.server import CHANNEL_OPTIONS, SERVER_KEEPALIVE_OPTIONS

from bench.cpu import cpu_seconds

CONCURRENCY = 8
PAYLOAD = b"x" * 600  # about a small turn's request
SERVICE = "bench.Floor"


def _identity(data: bytes) -> bytes:
    return data


async def _serve(address: str) -> None:
    async def unary(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    async def stream(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        yield request
        yield request

    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "Unary": grpc.unary_unary_rpc_method_handler(unary, _identity, _identity),
        "Stream": grpc.unary_stream_rpc_method_handler(stream, _identity, _identity),
    })
    server = grpc.aio.server(options=[*CHANNEL_OPTIONS, *SERVER_KEEPALIVE_OPTIONS])
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(address)
    await server.start()
    await server.wait_for_termination()


async def _calls(address: str, calls: int, method: str) -> float:
    async with grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS) as channel:
        if method == "Unary":
            unary = channel.unary_unary(f"/{SERVICE}/Unary", _identity, _identity)

            async def one() -> None:
                await unary(PAYLOAD)
        else:
            streaming = channel.unary_stream(f"/{SERVICE}/Stream", _identity, _identity)

            async def one() -> None:
                async for _ in streaming(PAYLOAD):
                    pass

        remaining = calls

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await one()

        for _ in range(200):  # warm-up: the connection, the first calls
            await one()
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return time.perf_counter() - started


def run_grpc_floor(calls: int = 4000) -> str:
    lines = ["", f"A bare grpc.aio call, CPU ms per call ({calls} calls at concurrency {CONCURRENCY}, uvloop, "
                 "the services' channel options), over loopback TCP and over a Unix socket:", "",
             "| call | transport | client | server | both | calls/s |", "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="agentic-grpc-floor-") as folder:
        port = free_port()
        for transport, address in (("TCP", f"127.0.0.1:{port}"), ("Unix socket", f"unix:{folder}/floor.sock")):
            lines += _floor_rows(transport, address, port, calls)
    return "\n".join(lines)


def _floor_rows(transport: str, address: str, port: int, calls: int) -> list[str]:
    server = subprocess.Popen([sys.executable, "-m", "bench.grpc_floor", "--serve", address])
    rows = []
    try:
        if address.startswith("unix:"):
            wait_until(lambda: Path(address.removeprefix("unix:")).exists(), 30, "the bare gRPC server")
        else:
            wait_until(lambda: tcp_accepts(port), 30, "the bare gRPC server")
        for method in ("Unary", "Stream"):
            pids = {"client": os.getpid(), "server": server.pid}
            before = cpu_seconds(pids)
            elapsed = uvloop.run(_calls(address, calls, method))
            after = cpu_seconds(pids)
            client, serving = ((after[name] - before[name]) * 1000 / calls for name in ("client", "server"))
            label = "unary" if method == "Unary" else "unary → stream of 2"
            print(json.dumps({"call": label, "transport": transport, "client_ms": client, "server_ms": serving}),
                  flush=True)
            rows.append(f"| {label} | {transport} | {client:.3f} | {serving:.3f} | {client + serving:.3f} | "
                        f"{calls / elapsed:.0f} |")
        return rows
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        uvloop.run(_serve(sys.argv[2]))
    else:
        print(run_grpc_floor())
