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
from agentic_state.store import PERSIST_TURN_SQL, turn_arguments


def already_stored(response_id: str) -> Conflict:
    return Conflict(f"conflict: a turn is already stored under '{response_id}'", param="response_id",
                    code="response_already_stored")


class SplitTurnStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def persist(self, turn: TurnRecord, digest: str) -> str | None:
        """None when stored now; the stored response JSON when an identical persist stored it before."""
        inserted = await self.pool.fetchval(PERSIST_TURN_SQL, *turn_arguments(turn), None, digest)
        if inserted:
            return None
        # The insert waited for any concurrent writer of this id to commit, so this read sees its row.
        row = await self.pool.fetchrow(
            "SELECT body, persist_digest FROM responses WHERE tenant = $1 AND id = $2 AND deleted_at IS NULL",
            turn.tenant, turn.response_id,
        )
        if row is not None and row["persist_digest"] == digest and row["body"] is not None:
            body: str = row["body"]
            return body
        raise already_stored(turn.response_id)
