"""The model servers' listings, kept briefly: asked once within the setting's time, shared by askers at the
same time, asked again once stale, never kept when they failed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from agentic_core.routing import ModelRoute
from agentic_gateway.relay.model_lists import ModelLists
from agentic_runtime.http.upstream import UpstreamHttp
from agentic_runtime.settings import UpstreamSettings
from aiohttp import web

SMOL = {"id": "smollm2", "object": "model", "max_model_len": 4096}


@dataclass
class ModelServer:
    """A model server's `GET /v1/models`: answers `statuses` in turn (then 200), after `delay` seconds."""

    url: str = ""
    asked: int = 0
    delay: float = 0.0
    statuses: list[int] = field(default_factory=list)

    async def models(self, request: web.Request) -> web.Response:
        self.asked += 1
        await asyncio.sleep(self.delay)
        status = self.statuses.pop(0) if self.statuses else 200
        return web.json_response({"object": "list", "data": [SMOL, {"no": "id"}]}, status=status)


@pytest.fixture()
async def server() -> AsyncIterator[ModelServer]:
    model_server = ModelServer()
    app = web.Application()
    app.router.add_get("/v1/models", model_server.models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    model_server.url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    yield model_server
    await runner.cleanup()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
async def upstream() -> AsyncIterator[UpstreamHttp]:
    http = UpstreamHttp(UpstreamSettings(upstream_retries=0))
    yield http
    await http.close()


def _route(server: ModelServer) -> ModelRoute:
    return ModelRoute(match="*", base_url=server.url)


async def test_a_listing_is_asked_for_once_within_the_kept_time(server: ModelServer, upstream: UpstreamHttp) -> None:
    clock = Clock()
    lists = ModelLists(upstream, 30.0, clock)

    assert await lists.entries(_route(server)) == [SMOL]  # entries without an `id` are left out
    clock.now += 29
    assert await lists.entries(_route(server)) == [SMOL]
    assert server.asked == 1

    clock.now += 2
    assert await lists.entries(_route(server)) == [SMOL]
    assert server.asked == 2


async def test_askers_at_the_same_time_share_one_request(server: ModelServer, upstream: UpstreamHttp) -> None:
    server.delay = 0.2
    lists = ModelLists(upstream, 30.0)
    listings = await asyncio.gather(*(lists.entries(_route(server)) for _ in range(5)))
    assert listings == [[SMOL]] * 5 and server.asked == 1


async def test_with_no_kept_time_every_listing_asks(server: ModelServer, upstream: UpstreamHttp) -> None:
    lists = ModelLists(upstream, 0.0, Clock())
    for _ in range(3):
        assert await lists.entries(_route(server)) == [SMOL]
    assert server.asked == 3


async def test_a_failed_listing_is_not_kept(server: ModelServer, upstream: UpstreamHttp) -> None:
    server.statuses = [503]
    lists = ModelLists(upstream, 30.0, Clock())
    assert await lists.entries(_route(server)) is None
    assert await lists.entries(_route(server)) == [SMOL]
    assert server.asked == 2


async def test_a_server_that_does_not_answer_lists_nothing(upstream: UpstreamHttp) -> None:
    lists = ModelLists(upstream, 30.0)
    assert await lists.entries(ModelRoute(match="*", base_url="http://127.0.0.1:9/v1")) is None
