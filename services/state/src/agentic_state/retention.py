"""Retention: rows older than their time to live are deleted in small batches, each its own short statement
(so no lock is held for long), by one state replica at a time (a PostgreSQL advisory lock)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg

from agentic_state.conversations import Connection

log = logging.getLogger(__name__)

# Any constant works; it only has to be the same for every replica (and differ from the migrations' key).
_PURGE_LOCK_KEY = 0x616E74_7075

def _counted(statement: str) -> str:
    """A DELETE ... RETURNING 1 as a statement answering how many rows it deleted."""
    return f"WITH batch AS ({statement}) SELECT count(*) FROM batch"


# An expired response is deleted as DELETE /v1/responses/{id} deletes it (StateStore.delete_response, for a
# batch): the row stays without its body, so that later turns of its chain keep their history.
_EXPIRE_RESPONSES_SQL = """
WITH expired AS (
    UPDATE responses SET deleted_at = now(), body = NULL
     WHERE (tenant, id) IN (SELECT tenant, id FROM responses WHERE created_at < $1 AND deleted_at IS NULL LIMIT $2)
    RETURNING tenant, id
), background AS (
    DELETE FROM background_responses b USING expired e WHERE b.tenant = e.tenant AND b.id = e.id
)
SELECT count(*) FROM expired
"""

# A deleted response that no response continues from is no one's history any more: its row and items go.
# (Its continuation going makes it such a row, so a dead chain is removed from its end over passes.)
_REMOVE_DELETED_RESPONSES_SQL = _counted("""
DELETE FROM responses WHERE (tenant, id) IN (
    SELECT r.tenant, r.id FROM responses r
     WHERE r.deleted_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.tenant = r.tenant AND c.previous_response_id = r.id)
     LIMIT $1)
RETURNING 1
""")

# Background rows of turns never stored (cancelled, failed) or forgotten.
_EXPIRE_BACKGROUND_SQL = _counted("""
DELETE FROM background_responses WHERE (tenant, id) IN (
    SELECT tenant, id FROM background_responses WHERE created_at < $1 LIMIT $2)
RETURNING 1
""")

# A conversation expires once idle for its time to live (no item added since), unless a turn holds it; a
# deleted one goes at once. Its items go with it (ON DELETE CASCADE).
_EXPIRE_CONVERSATIONS_SQL = _counted("""
DELETE FROM conversations WHERE (tenant, id) IN (
    SELECT c.tenant, c.id FROM conversations c
     WHERE (c.deleted_at IS NOT NULL
            OR (c.created_at < $1
                AND NOT EXISTS (SELECT 1 FROM conversation_items i
                                 WHERE i.tenant = c.tenant AND i.conversation_id = c.id AND i.created_at >= $1)))
       AND (c.lease_expires_at IS NULL OR c.lease_expires_at < now())
     LIMIT $2)
RETURNING 1
""")

_EXPIRE_AUDIT_SQL = _counted("DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE effective_at < $1 LIMIT $2) RETURNING 1")
_EXPIRE_USAGE_SQL = _counted("DELETE FROM usage WHERE ctid IN (SELECT ctid FROM usage WHERE minute < $1 LIMIT $2) RETURNING 1")


@dataclass(frozen=True, slots=True)
class Retention:
    """Days each kind of row is kept; None keeps it forever."""

    response_days: float | None = None
    conversation_days: float | None = None
    audit_days: float | None = None
    usage_days: float | None = None
    batch_size: int = 500


async def _in_batches(connection: Connection, sql: str, *arguments: object, batch_size: int, drain: bool = False) -> int:
    """Runs one batch statement (which returns how many rows it deleted) until it finds fewer rows than a batch,
    or (`drain`) none; each runs in its own transaction."""
    total = 0
    while True:
        done = int(await connection.fetchval(sql, *arguments) or 0)
        total += done
        if done == 0 or (done < batch_size and not drain):
            return total
        await asyncio.sleep(0)  # let other work on this replica run between batches


async def purge(pool: asyncpg.Pool, retention: Retention, now: datetime | None = None) -> dict[str, int] | None:
    """One pass; the rows deleted by kind, or None when another replica holds the purge."""
    now = now or datetime.now(UTC)
    size = retention.batch_size

    def cutoff(days: float) -> datetime:
        return now - timedelta(days=days)

    async with pool.acquire() as connection:
        if not await connection.fetchval("SELECT pg_try_advisory_lock($1)", _PURGE_LOCK_KEY):
            return None
        try:
            deleted: dict[str, int] = {}
            if retention.response_days is not None:
                old = cutoff(retention.response_days)
                deleted["responses"] = await _in_batches(connection, _EXPIRE_RESPONSES_SQL, old, size, batch_size=size)
                deleted["background_responses"] = await _in_batches(connection, _EXPIRE_BACKGROUND_SQL, old, size, batch_size=size)
                deleted["response_rows"] = await _in_batches(connection, _REMOVE_DELETED_RESPONSES_SQL, size, batch_size=size,
                                                               drain=True)
            if retention.conversation_days is not None:
                deleted["conversations"] = await _in_batches(
                    connection, _EXPIRE_CONVERSATIONS_SQL, cutoff(retention.conversation_days), size, batch_size=size)
            if retention.audit_days is not None:
                deleted["audit_log"] = await _in_batches(connection, _EXPIRE_AUDIT_SQL, cutoff(retention.audit_days), size,
                                                        batch_size=size)
            if retention.usage_days is not None:
                deleted["usage"] = await _in_batches(connection, _EXPIRE_USAGE_SQL, cutoff(retention.usage_days), size, batch_size=size)
            return deleted
        finally:
            try:
                await connection.execute("SELECT pg_advisory_unlock($1)", _PURGE_LOCK_KEY)
            except BaseException:
                connection.terminate()  # never back into the pool holding the lock (the pool does not reset it)
                raise


async def purge_periodically(pool: asyncpg.Pool, retention: Retention, interval_seconds: float) -> None:
    """Runs until cancelled; a failed pass is logged and tried again at the next interval."""
    if all(days is None for days in (retention.response_days, retention.conversation_days, retention.audit_days,
                                     retention.usage_days)):
        return
    while True:
        try:
            deleted = await purge(pool, retention)
            if deleted:
                log.info("retention purge deleted %s", deleted)
        except (asyncpg.PostgresError, OSError) as exc:
            log.warning("retention purge failed, retrying in %.0f s: %r", interval_seconds, exc)
        await asyncio.sleep(interval_seconds)
