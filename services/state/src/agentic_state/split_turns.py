"""Turns persisted by llm-d (split execution): one atomic insert, idempotent for an identical retry.

The response row and its items are written by one statement, exactly like an
executor turn; the row also keeps the digest of the relayed model response.
A second persist of the id reads that digest back: equal means the same turn
delivered twice (the stored response is returned), different means a conflict.
"""

from __future__ import annotations

import asyncpg
from agentic_core.errors import Conflict

from agentic_state.records import TurnRecord

_PERSIST_SPLIT_TURN_SQL = """
WITH inserted AS (
    INSERT INTO responses (tenant, id, previous_response_id, model, status, body, persist_digest)
    VALUES ($1, $2, $3, $4, $5, $6, $11)
    ON CONFLICT DO NOTHING
    RETURNING 1
), items AS (
    INSERT INTO response_items (tenant, response_id, position, kind, item_id, item)
    SELECT $1, $2, t.position, t.kind, t.item_id, t.item
      FROM unnest($7::integer[], $8::text[], $9::text[], $10::json[]) AS t (position, kind, item_id, item)
     WHERE EXISTS (SELECT 1 FROM inserted)
)
SELECT count(*) FROM inserted
"""


def already_stored(response_id: str) -> Conflict:
    return Conflict(f"conflict: a turn is already stored under '{response_id}'", param="response_id",
                    code="response_already_stored")


class SplitTurnStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def persist(self, turn: TurnRecord, digest: str) -> str | None:
        """None when stored now; the stored response JSON when an identical persist stored it before."""
        items = [("input", item_id, item) for item_id, item in turn.input_items]
        items += [("output", item_id, item) for item_id, item in turn.output_items]
        inserted = await self.pool.fetchval(
            _PERSIST_SPLIT_TURN_SQL,
            turn.tenant, turn.response_id, turn.previous_response_id, turn.model, turn.status, turn.response,
            list(range(len(items))), [kind for kind, _, _ in items], [item_id for _, item_id, _ in items],
            [item for _, _, item in items], digest,
        )
        if inserted:
            return None
        # The insert waited for any concurrent writer of this id to commit, so this read sees its row.
        row = await self.pool.fetchrow(
            "SELECT body, persist_digest FROM responses WHERE tenant = $1 AND id = $2 AND deleted_at IS NULL",
            turn.tenant, turn.response_id,
        )
        if row is not None and row["persist_digest"] == digest and row["body"] is not None:
            return row["body"]
        raise already_stored(turn.response_id)
