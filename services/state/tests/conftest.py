"""The state service's tests share one pool on the test PostgreSQL, migrated once."""

from __future__ import annotations

import asyncpg
import pytest
from agentic_state.migrations import apply_migrations


@pytest.fixture(scope="session")
async def pool(infra):
    pool = await asyncpg.create_pool(infra["database_url"], min_size=1, max_size=4)
    async with pool.acquire() as connection:
        await apply_migrations(connection)
    yield pool
    await pool.close()
