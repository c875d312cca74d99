"""The state service's pool hands a connection back without asyncpg's reset statement: a release costs the database
nothing. What the service relies on still holds: an open transaction is ended, and nothing of a session survives."""

from __future__ import annotations

import asyncio

import asyncpg


async def _activity_of(infra: dict[str, str], backend: int) -> asyncpg.Record:
    """What PostgreSQL says a backend last ran, and its state, seen from a connection of its own."""
    watcher = await asyncpg.connect(infra["database_url"])
    try:
        await asyncio.sleep(0.05)  # the release's work, if any, reaches the server
        row = await watcher.fetchrow("SELECT query, state FROM pg_stat_activity WHERE pid = $1", backend)
        assert row is not None
        return row
    finally:
        await watcher.close()


async def test_a_released_connection_is_not_sent_a_reset(pool: asyncpg.Pool, infra: dict[str, str]) -> None:
    async with pool.acquire() as connection:
        backend = await connection.fetchval("SELECT pg_backend_pid() /* the last statement */")
    assert (await _activity_of(infra, backend))["query"].endswith("/* the last statement */")


async def test_a_transaction_left_open_is_still_ended_on_release(pool: asyncpg.Pool, infra: dict[str, str]) -> None:
    async with pool.acquire() as connection:
        backend = await connection.fetchval("SELECT pg_backend_pid()")
        await connection.transaction().start()
        await connection.execute("SELECT 1")
    assert (await _activity_of(infra, backend))["state"] == "idle"
