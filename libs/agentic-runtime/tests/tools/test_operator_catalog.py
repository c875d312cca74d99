"""The executor's view of the operator tools the tool runners published, over a real NATS KV bucket (one of
each test's own, so the running stack's tools are left alone)."""

from __future__ import annotations

import secrets

import orjson
import pytest
from agentic_runtime.nats import broker
from agentic_runtime.tls import transport_security
from agentic_runtime.tools.operator_tools import OperatorToolCatalog


def _definition(name: str) -> bytes:
    return orjson.dumps({"type": "function", "name": name, "description": name, "parameters": {"type": "object"}})


@pytest.fixture()
async def client(infra):
    connection = await broker.connect(infra["nats_url"], "test-operator-catalog", transport_security({}))
    yield connection
    await connection.drain()


@pytest.fixture()
async def bucket(client):
    name = f"TOOLS_{secrets.token_hex(4).upper()}"
    kv = await broker.ensure_key_value(client, name, in_memory=True)
    yield name, kv
    await client.jetstream().delete_key_value(name)


async def test_a_fresh_client_sees_every_published_tool_at_once(client, bucket) -> None:
    name, kv = bucket
    for tool in ("rotate_key", "slow", "lookup"):
        await kv.put(tool, _definition(tool))
    await kv.delete("lookup")  # a runner withdrew it: its delete marker keeps the key's subject
    for _ in range(20):  # each a new executor's first turn: the catalog is read straight after connecting
        connection = await broker.connect(client.connected_url.geturl(), "test-operator-catalog-fresh", transport_security({}))
        try:
            assert sorted(await OperatorToolCatalog(connection, name).definitions()) == ["rotate_key", "slow"]
        finally:
            await connection.close()


async def test_a_tool_published_after_the_cache_filled_is_found_when_asked_for(client, bucket) -> None:
    name, kv = bucket
    await kv.put("slow", _definition("slow"))
    catalog = OperatorToolCatalog(client, name)
    assert list(await catalog.definitions()) == ["slow"]
    await kv.put("rotate_key", _definition("rotate_key"))
    assert list(await catalog.definitions()) == ["slow"]  # within the cache's seconds, nothing asked for it
    assert sorted(await catalog.definitions({"rotate_key"})) == ["rotate_key", "slow"]


async def test_a_missing_bucket_means_no_operator_tools(client) -> None:
    assert await OperatorToolCatalog(client, f"TOOLS_{secrets.token_hex(4).upper()}").definitions() == {}
