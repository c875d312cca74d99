"""The state service's tests share one pool on the test PostgreSQL, built as the service builds it, migrated once."""

from __future__ import annotations

import pytest
from agentic_state.migrations import apply_migrations
from agentic_state.server import create_pool
from agentic_state.settings import StateSettings


@pytest.fixture(scope="session")
async def pool(infra):
    pool = await create_pool(StateSettings(AGENTIC_DATABASE_URL=infra["database_url"], pool_min_size=1, pool_max_size=4))
    async with pool.acquire() as connection:
        await apply_migrations(connection)
    yield pool
    await pool.close()
