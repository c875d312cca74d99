"""The executor's unit tests talk to the fake model server (the root conftest's `upstream`) through the executor's
own client, with no retries, routed by one catch-all route."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from agentic_core.routing import ModelRoute
from agentic_executor.settings import ExecutorSettings
from agentic_executor.upstream import UpstreamClient

from tests.support.fake_upstream import FakeUpstream


@pytest.fixture()
async def client() -> AsyncIterator[UpstreamClient]:
    upstream = UpstreamClient(ExecutorSettings(upstream_retries=0))
    yield upstream
    await upstream.close()


@pytest.fixture()
def route(upstream: FakeUpstream) -> ModelRoute:
    return ModelRoute("*", upstream.base_url)
