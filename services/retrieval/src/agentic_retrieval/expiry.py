"""Expired files and vector stores deleted for good, and uploads that never completed, a batch at a time.

Expiry already hides them (`expires_at`, `status: expired`); this takes their bytes, chunks and rows out of the
database, in short transactions, on every replica's sweep (deletes of the same rows by two replicas are harmless).
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

# A file whose upload never completed (the client or the gateway died mid-way) holds parts nobody can read.
ABANDONED_UPLOAD_SECONDS = 86_400


@dataclass(frozen=True, slots=True)
class Purged:
    files: int = 0
    stores: int = 0


async def purge_expired(pool: asyncpg.Pool, batch: int = 500) -> Purged:
    """Deletes until nothing expired is left (each batch its own transaction); returns how many went."""
    files = stores = 0
    while (deleted := await _purge_files(pool, batch)) > 0:
        files += deleted
        if deleted < batch:
            break
    while (deleted := await _purge_stores(pool, batch)) > 0:
        stores += deleted
        if deleted < batch:
            break
    return Purged(files, stores)


async def _purge_files(pool: asyncpg.Pool, batch: int) -> int:
    async with pool.acquire() as connection, connection.transaction():
        rows = await connection.fetch(
            "DELETE FROM retrieval.files WHERE (tenant, id) IN ("
            "  SELECT tenant, id FROM retrieval.files"
            "   WHERE expires_at <= now()"
            "      OR (NOT complete AND created_at < now() - make_interval(secs => $2))"
            "   LIMIT $1 FOR UPDATE SKIP LOCKED)"
            " RETURNING tenant, id", batch, float(ABANDONED_UPLOAD_SECONDS))
        if rows:  # the store files and chunks go by their foreign keys; the parts have none
            await connection.execute(
                "DELETE FROM retrieval.file_parts p USING unnest($1::text[], $2::text[]) AS gone (tenant, id)"
                " WHERE p.tenant = gone.tenant AND p.file_id = gone.id",
                [row["tenant"] for row in rows], [row["id"] for row in rows])
        return len(rows)


async def _purge_stores(pool: asyncpg.Pool, batch: int) -> int:
    result: str = await pool.execute(
        "DELETE FROM retrieval.vector_stores WHERE (tenant, id) IN ("
        "  SELECT tenant, id FROM retrieval.vector_stores"
        "   WHERE expires_after IS NOT NULL"
        "     AND last_active_at + make_interval(days => (expires_after->>'days')::int) <= now()"
        "   LIMIT $1 FOR UPDATE SKIP LOCKED)", batch)
    return int(result.rsplit(" ", 1)[-1])
