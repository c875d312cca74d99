"""Background responses: the row a queued or running turn is seen through, and its transitions.

Each transition is one conditional UPDATE, so two executors (or an executor and
a cancel) never both win: the row's status says who did.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
from agentic_core.errors import Conflict, NotFound

ENDED = ("completed", "incomplete", "failed", "cancelled")


@dataclass(frozen=True, slots=True)
class BackgroundRow:
    status: str
    previous_status: str
    body: str
    cancel_requested: bool


def _not_found(response_id: str) -> NotFound:
    return NotFound(f"No background response found with id '{response_id}'.", param="response_id",
                    code="response_not_found")


# Each statement returns the row after it and the status before it. A claim of a response already
# running means the executor running it was lost (its queue message came back): the response fails.
_CLAIM_SQL = """
WITH before AS (
    SELECT status FROM background_responses WHERE tenant = $1 AND id = $2 FOR UPDATE
)
UPDATE background_responses AS b
   SET status = CASE WHEN before.status = 'queued' THEN 'in_progress' ELSE 'failed' END,
       body = CASE WHEN before.status = 'queued' THEN (b.body::jsonb || '{"status": "in_progress"}')::json
                   ELSE (b.body::jsonb || jsonb_build_object('status', 'failed', 'error', jsonb_build_object(
                         'code', 'executor_lost',
                         'message', 'The executor running this response stopped before it finished.')))::json END,
       updated_at = now()
  FROM before
 WHERE b.tenant = $1 AND b.id = $2 AND before.status IN ('queued', 'in_progress')
RETURNING b.status, before.status AS previous_status, b.body, b.cancel_requested
"""
_FINISH_SQL = """
WITH before AS (
    SELECT status FROM background_responses WHERE tenant = $1 AND id = $2 FOR UPDATE
)
UPDATE background_responses AS b SET status = $3, body = $4::json, updated_at = now()
  FROM before
 WHERE b.tenant = $1 AND b.id = $2 AND before.status NOT IN ('completed', 'incomplete', 'failed', 'cancelled')
RETURNING b.status, before.status AS previous_status, b.body, b.cancel_requested
"""
_CANCEL_SQL = """
WITH before AS (
    SELECT status FROM background_responses WHERE tenant = $1 AND id = $2 FOR UPDATE
)
UPDATE background_responses AS b
   SET status = CASE WHEN before.status = 'queued' THEN 'cancelled' ELSE before.status END,
       body = CASE WHEN before.status = 'queued' THEN (b.body::jsonb || '{"status": "cancelled"}')::json ELSE b.body END,
       cancel_requested = true, updated_at = now()
  FROM before
 WHERE b.tenant = $1 AND b.id = $2 AND before.status IN ('queued', 'in_progress')
RETURNING b.status, before.status AS previous_status, b.body, b.cancel_requested
"""


class BackgroundStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def create(self, tenant: str, response_id: str, body: str) -> BackgroundRow:
        inserted = await self.pool.execute(
            "INSERT INTO background_responses (tenant, id, status, body) VALUES ($1, $2, 'queued', $3::json)"
            " ON CONFLICT DO NOTHING", tenant, response_id, body)
        if inserted == "INSERT 0 0":
            raise Conflict(f"Response '{response_id}' already exists.", param="response_id", code="response_already_stored")
        return BackgroundRow("queued", "", body, False)

    async def claim(self, tenant: str, response_id: str) -> BackgroundRow:
        return await self._transition(_CLAIM_SQL, tenant, response_id)

    async def finish(self, tenant: str, response_id: str, status: str, body: str) -> BackgroundRow:
        return await self._transition(_FINISH_SQL, tenant, response_id, status, body)

    async def cancel(self, tenant: str, response_id: str) -> BackgroundRow:
        return await self._transition(_CANCEL_SQL, tenant, response_id)

    async def get(self, tenant: str, response_id: str) -> BackgroundRow:
        row = await self.pool.fetchrow(
            "SELECT status, body, cancel_requested FROM background_responses WHERE tenant = $1 AND id = $2",
            tenant, response_id)
        if row is None:
            raise _not_found(response_id)
        return BackgroundRow(row["status"], row["status"], row["body"], row["cancel_requested"])

    async def _transition(self, sql: str, tenant: str, response_id: str, *arguments: str) -> BackgroundRow:
        row = await self.pool.fetchrow(sql, tenant, response_id, *arguments)
        if row is None:  # no such row, or it had already ended: say what it is now
            return await self.get(tenant, response_id)
        return BackgroundRow(row["status"], row["previous_status"], row["body"], row["cancel_requested"])
