"""A real MCP server for tests, built with the `mcp` SDK: Streamable HTTP on `/mcp`, HTTP+SSE on `/sse`, or stdio.

Tools: `echo`, `add` (structured content), `structured` (structured content only,
no text), `fail` (answers `isError`), `slow`, `grow` (adds a tool and sends
`notifications/tools/list_changed`), `whoami` (needs `Authorization: Bearer
<token>`, answers with the MCP session it came on). `tools/list`
is paginated (`--page-size`). `GET /stats` reports what the server saw so far
(`tools/list` requests per Authorization header, calls per tool, `whoami` sessions), `POST /reset`
forgets it and the grown tools. `/redirect?to=<url>` answers a 307 to `<url>`
(for redirect policy tests).

    python -m tests.support.fake_mcp_server --port 8765 [--host 127.0.0.1] [--page-size 2] [--token secret]
    python -m tests.support.fake_mcp_server --stdio

Tests start it with `FakeMcpProcess().start()` (a free loopback port) and read
what it saw with `.stats()`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, ListToolsResult, PaginatedRequestParams
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

DEFAULT_TOKEN = "fake-mcp-token"
ROOT = Path(__file__).resolve().parents[2]


class FakeMcpServer(MCPServer):
    """An MCPServer whose `tools/list` pages (the stock one answers everything at once)."""

    def __init__(self, *, page_size: int, token: str) -> None:
        super().__init__(name="fake-mcp", instructions="A fake MCP server for agentic's tests.")
        self.page_size = page_size
        self.token = token
        self.list_requests: Counter[str] = Counter()
        self.sessions: set[str] = set()
        self.calls: Counter[str] = Counter()
        self.grown = 0
        _register_tools(self)

    async def _handle_list_tools(self, ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        headers = getattr(ctx.request, "headers", None) or {}
        self.list_requests[headers.get("authorization", "")] += 1
        tools = await self.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + self.page_size
        return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        self.calls[name] += 1
        return await super().call_tool(name, arguments, context)

    def reset(self) -> None:
        self.list_requests.clear()
        self.calls.clear()
        self.sessions.clear()
        for number in range(1, self.grown + 1):
            self.remove_tool(f"extra_{number}")
        self.grown = 0


def _register_tools(server: FakeMcpServer) -> None:
    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Answer structured content only.")
    def structured(label: str) -> CallToolResult:
        return CallToolResult(content=[], structured_content={"label": label, "ok": True})

    @server.tool(description="Always fails (answers isError).")
    def fail(reason: str = "it broke") -> str:
        raise ToolError(f"failing on purpose: {reason}")

    @server.tool(description="Sleep, then answer.")
    async def slow(seconds: float) -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(description="Add a tool to the list and tell the client so.")
    async def grow(ctx: Context) -> str:
        server.grown += 1
        name = f"extra_{server.grown}"
        server.add_tool(lambda: name, name=name, description="A tool that grew.")
        await ctx.session.send_tool_list_changed()
        return name

    @server.tool(description="Who is calling (needs the bearer token).")
    async def whoami(ctx: Context) -> str:
        headers = ctx.headers or {}
        if headers.get("authorization") != f"Bearer {server.token}":
            raise ToolError("unauthorized: a valid Authorization header is required")
        request = ctx.request_context.request  # the HTTP request (None on stdio)
        session = "stdio" if request is None else (
            request.headers.get("mcp-session-id") or request.query_params.get("session_id", "")
        )
        server.sessions.add(session)
        return f"authorized session={session}"


def build_app(server: FakeMcpServer, host: str) -> Any:
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(host=host, transport_security=security)
    sse = server.sse_app(host=host, transport_security=security)
    app.router.routes.extend(sse.routes)

    async def stats(request: Request) -> Response:
        return JSONResponse({
            "list_requests": dict(server.list_requests), "calls": dict(server.calls), "sessions": sorted(server.sessions)
        })

    async def reset(request: Request) -> Response:
        server.reset()
        return JSONResponse({})

    async def redirect(request: Request) -> Response:
        return RedirectResponse(request.query_params.get("to", "/mcp"), status_code=307)

    app.add_route("/stats", stats, methods=["GET"])
    app.add_route("/reset", reset, methods=["POST"])
    app.add_route("/redirect", redirect, methods=["GET", "POST", "DELETE"])
    return app


class FakeMcpProcess:
    """The fake server as a child process on a free loopback port, for tests."""

    def __init__(self, *, page_size: int = 3, token: str = DEFAULT_TOKEN, port: int | None = None) -> None:
        self.page_size = page_size
        self.token = token
        self.port = port or _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The Streamable HTTP endpoint."""
        return f"{self.base_url}/mcp"

    @property
    def sse_url(self) -> str:
        """The older HTTP+SSE endpoint."""
        return f"{self.base_url}/sse"

    @property
    def host(self) -> str:
        """`127.0.0.1:<port>`, as an allowlist entry."""
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> FakeMcpProcess:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.fake_mcp_server", "--port", str(self.port),
             "--page-size", str(self.page_size), "--token", self.token],
            cwd=ROOT,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the fake MCP server did not start") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def stats(self) -> dict[str, Any]:
        """`{"list_requests": {authorization: n}, "calls": {tool: n}, "sessions": [whoami sessions]}`."""
        with urllib.request.urlopen(f"{self.base_url}/stats", timeout=5) as response:
            return json.loads(response.read())

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.base_url}/reset", method="POST")
        with urllib.request.urlopen(request, timeout=5):
            pass


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--page-size", type=int, default=3)
    parser.add_argument("--token", default=DEFAULT_TOKEN)
    parser.add_argument("--stdio", action="store_true", help="speak MCP on stdin/stdout instead of HTTP")
    args = parser.parse_args()
    server = FakeMcpServer(page_size=args.page_size, token=args.token)
    if args.stdio:
        anyio.run(server.run_stdio_async)
        return
    config = uvicorn.Config(build_app(server, args.host), host=args.host, port=args.port, log_level="warning")
    asyncio.run(uvicorn.Server(config).serve())


if __name__ == "__main__":
    main()
