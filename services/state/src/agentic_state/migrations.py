"""Schema migrations: numbered SQL files applied once each, in order, under an advisory lock."""

from __future__ import annotations

import logging
from importlib import resources

import asyncpg

log = logging.getLogger(__name__)

# Any constant works; it only has to be the same for every replica and the migration Job.
_MIGRATION_LOCK_KEY = 0x616E74_6963


def available_migrations() -> list[tuple[str, str]]:
    folder = resources.files("agentic_state") / "migrations"
    files = sorted((entry for entry in folder.iterdir() if entry.name.endswith(".sql")), key=lambda entry: entry.name)
    return [(entry.name.removesuffix(".sql"), entry.read_text()) for entry in files]


async def apply_migrations(connection: asyncpg.Connection) -> list[str]:
    """Apply what is missing; returns the versions applied now. Safe to run concurrently."""
    applied_now: list[str] = []
    await connection.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK_KEY)
    try:
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {row["version"] for row in await connection.fetch("SELECT version FROM schema_migrations")}
        for version, sql in available_migrations():
            if version in done:
                continue
            async with connection.transaction():
                await connection.execute(sql)
                await connection.execute("INSERT INTO schema_migrations (version) VALUES ($1)", version)
            log.info("applied migration %s", version)
            applied_now.append(version)
    finally:
        await connection.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK_KEY)
    return applied_now


async def migrate(database_url: str) -> list[str]:
    connection = await asyncpg.connect(database_url)
    try:
        return await apply_migrations(connection)
    finally:
        await connection.close()
