"""Model-server HTTP: connection failures before any byte are retried with backoff, then reported as 502."""

from __future__ import annotations

import asyncio
import socket

import pytest
from agentic_core.errors import UpstreamUnavailable
from agentic_core.routing import ModelRoute
from agentic_runtime.http.upstream import UpstreamHttp, build_router
from agentic_runtime.settings import UpstreamSettings
from aiohttp import web


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _ping(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


async def _serve_later(port: int, delay: float) -> web.AppRunner:
    await asyncio.sleep(delay)
    app = web.Application()
    app.router.add_post("/v1/ping", _ping)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


async def test_a_server_that_comes_up_late_is_reached_by_retrying() -> None:
    port = _free_port()
    http = UpstreamHttp(UpstreamSettings(AGENTIC_UPSTREAM_URL=f"http://127.0.0.1:{port}/v1", upstream_retries=5,
                                         upstream_retry_backoff_seconds=0.05))
    server = asyncio.create_task(_serve_later(port, 0.2))
    route = ModelRoute("*", f"http://127.0.0.1:{port}/v1")
    try:
        async with http.request("POST", route.base_url + "/ping", route, b"{}") as reply:
            assert reply.status == 200 and await reply.json() == {"ok": True}
    finally:
        await http.close()
        await (await server).cleanup()


async def test_without_retries_a_refused_connection_is_a_502_at_once() -> None:
    port = _free_port()
    http = UpstreamHttp(UpstreamSettings(upstream_retries=0))
    route = ModelRoute("*", f"http://127.0.0.1:{port}/v1")
    try:
        with pytest.raises(UpstreamUnavailable) as raised:
            async with http.request("POST", route.base_url + "/ping", route, b"{}"):
                pass
        assert raised.value.http_status == 502 and raised.value.code == "upstream_unreachable"
    finally:
        await http.close()


def test_the_router_reads_the_inline_table_and_the_default(monkeypatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-1")
    settings = UpstreamSettings(
        AGENTIC_UPSTREAM_URL="http://default:8000/v1/",
        AGENTIC_UPSTREAM_API="chat",
        AGENTIC_MODELS='[{"match": "big-*", "base_url": "http://big:8000/v1", "api_key_env": "MY_KEY"}]',
    )
    router = build_router(settings)
    assert router.route("big-one").api_key == "sk-1"
    default = router.route("other")
    assert default.base_url == "http://default:8000/v1" and default.api == "chat"


def test_the_router_reads_a_yaml_file(tmp_path) -> None:
    table = tmp_path / "models.yaml"
    table.write_text("models:\n  - match: tiny\n    base_url: http://tiny:8000/v1\n    api: chat\n")
    router = build_router(UpstreamSettings(AGENTIC_MODELS_FILE=str(table)))
    assert router.route("tiny").api == "chat"
