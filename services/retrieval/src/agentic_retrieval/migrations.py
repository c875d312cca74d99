"""Migrations of the `retrieval` schema: numbered SQL files applied once each, in order, under an advisory lock.

A file whose first line is `-- requires: <extension>` waits until PostgreSQL offers that extension
(`pg_available_extensions`): the service runs without it (pgvector: keyword search only) and applies the file at
the first start that finds it. A later file that builds on such a file names the same extension.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import resources

import asyncpg

log = logging.getLogger(__name__)

SCHEMA = "retrieval"
# Not state's key: the two services migrate their own schemas independently.
_MIGRATION_LOCK_KEY = 0x7265_7472_6965_76
_REQUIRES = "-- requires:"


@dataclass(frozen=True)
class Migration:
    version: str
    sql: str
    requires: str | None  # an extension


def available_migrations() -> list[Migration]:
    folder = resources.files("agentic_retrieval") / "migrations"
    files = sorted((entry for entry in folder.iterdir() if entry.name.endswith(".sql")), key=lambda entry: entry.name)
    migrations = []
    for entry in files:
        sql = entry.read_text()
        first = sql.partition("\n")[0]
        requires = first.removeprefix(_REQUIRES).strip() if first.startswith(_REQUIRES) else None
        migrations.append(Migration(entry.name.removesuffix(".sql"), sql, requires))
    return migrations


async def apply_migrations(connection: asyncpg.Connection) -> list[str]:
    """Apply what is missing (and possible); returns the versions applied now. Safe to run concurrently."""
    applied_now: list[str] = []
    await connection.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK_KEY)
    try:
        await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        await connection.execute(
            f"CREATE TABLE IF NOT EXISTS {SCHEMA}.schema_migrations ("
            " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {row["version"] for row in await connection.fetch(f"SELECT version FROM {SCHEMA}.schema_migrations")}
        available = {row["name"] for row in await connection.fetch("SELECT name FROM pg_available_extensions")}
        for migration in available_migrations():
            if migration.version in done:
                continue
            if migration.requires is not None and migration.requires not in available:
                log.warning("migration %s waits for the PostgreSQL extension %r, which this server lacks",
                            migration.version, migration.requires)
                continue  # a later migration that builds on it says `requires` too
            async with connection.transaction():
                await connection.execute(migration.sql)
                await connection.execute(f"INSERT INTO {SCHEMA}.schema_migrations (version) VALUES ($1)",
                                         migration.version)
            log.info("applied migration %s", migration.version)
            applied_now.append(migration.version)
    finally:
        await connection.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK_KEY)
    return applied_now


async def migrate(database_url: str) -> list[str]:
    connection = await asyncpg.connect(database_url)
    try:
        return await apply_migrations(connection)
    finally:
        await connection.close()


async def has_vectors(connection: asyncpg.Connection | asyncpg.Pool) -> bool:
    """Whether chunks have an embedding column (pgvector installed and its migration applied)."""
    return bool(await connection.fetchval(
        "SELECT EXISTS (SELECT 1 FROM information_schema.columns"
        " WHERE table_schema = $1 AND table_name = 'chunks' AND column_name = 'embedding')", SCHEMA))
