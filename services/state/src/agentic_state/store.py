"""Tenant-scoped queries over responses and their items. Nothing else touches the database."""

from __future__ import annotations

import asyncpg
from agentic_core.errors import Conflict, InvalidRequest, NotFound

from agentic_state.conversations import append_items_locked
from agentic_state.records import ItemPage, TurnRecord


def _response_not_found(response_id: str, param: str = "response_id") -> NotFound:
    return NotFound(f"No response found with id '{response_id}'.", param=param, code="response_not_found")


_REHYDRATE_SQL = """
WITH RECURSIVE chain (id, previous_response_id, depth) AS (
    SELECT id, previous_response_id, 0 FROM responses
     WHERE tenant = $1 AND id = $2 AND deleted_at IS NULL
    UNION ALL
    SELECT r.id, r.previous_response_id, c.depth + 1
      FROM responses r JOIN chain c ON r.tenant = $1 AND r.id = c.previous_response_id
     WHERE c.depth < $3
)
SELECT c.depth, i.item
  FROM chain c LEFT JOIN response_items i ON i.tenant = $1 AND i.response_id = c.id
 ORDER BY c.depth DESC, i.position
"""

# A single statement is atomic: the items are written only when the response row was.
_PERSIST_TURN_SQL = """
WITH inserted AS (
    INSERT INTO responses (tenant, id, previous_response_id, model, status, body, conversation_id)
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


class StateStore:
    def __init__(self, pool: asyncpg.Pool, max_chain_depth: int) -> None:
        self.pool = pool
        self.max_chain_depth = max_chain_depth

    async def ping(self) -> None:
        await self.pool.fetchval("SELECT 1")

    async def get_response(self, tenant: str, response_id: str) -> str:
        body = await self.pool.fetchval(
            "SELECT body FROM responses WHERE tenant = $1 AND id = $2 AND deleted_at IS NULL", tenant, response_id
        )
        if body is None:
            raise _response_not_found(response_id)
        return body

    async def delete_response(self, tenant: str, response_id: str) -> None:
        # The row stays (without its body) so that later turns of the chain keep their history.
        status = await self.pool.execute(
            "UPDATE responses SET deleted_at = now(), body = NULL"
            " WHERE tenant = $1 AND id = $2 AND deleted_at IS NULL",
            tenant,
            response_id,
        )
        if status == "UPDATE 0":
            raise _response_not_found(response_id)

    async def rehydrate(self, tenant: str, previous_response_id: str) -> list[str]:
        rows = await self.pool.fetch(_REHYDRATE_SQL, tenant, previous_response_id, self.max_chain_depth)
        if not rows:
            raise _response_not_found(previous_response_id, param="previous_response_id")
        return [row["item"] for row in rows if row["item"] is not None]

    async def list_input_items(
        self, tenant: str, response_id: str, *, limit: int, after: str | None, before: str | None, ascending: bool
    ) -> ItemPage:
        async with self.pool.acquire() as connection:
            exists = await connection.fetchval(
                "SELECT 1 FROM responses WHERE tenant = $1 AND id = $2 AND deleted_at IS NULL", tenant, response_id
            )
            if exists is None:
                raise _response_not_found(response_id)
            after_position = await self._cursor_position(connection, tenant, response_id, after, "after")
            before_position = await self._cursor_position(connection, tenant, response_id, before, "before")
            # In descending order, "after" a cursor means an earlier position.
            lower, upper = (after_position, before_position) if ascending else (before_position, after_position)
            direction = "ASC" if ascending else "DESC"
            rows = await connection.fetch(
                "SELECT item_id, item FROM response_items"
                " WHERE tenant = $1 AND response_id = $2 AND kind = 'input'"
                "   AND ($3::integer IS NULL OR position > $3) AND ($4::integer IS NULL OR position < $4)"
                f" ORDER BY position {direction} LIMIT $5",
                tenant,
                response_id,
                lower,
                upper,
                limit + 1,
            )
        items = [(row["item_id"], row["item"]) for row in rows]
        return ItemPage(items=items[:limit], has_more=len(items) > limit)

    @staticmethod
    async def _cursor_position(
        connection: asyncpg.Connection, tenant: str, response_id: str, item_id: str | None, param: str
    ) -> int | None:
        if not item_id:
            return None
        position = await connection.fetchval(
            "SELECT min(position) FROM response_items"
            " WHERE tenant = $1 AND response_id = $2 AND kind = 'input' AND item_id = $3",
            tenant,
            response_id,
            item_id,
        )
        if position is None:
            raise InvalidRequest(f"No input item with id '{item_id}' in this response.", param=param, code="invalid_cursor")
        return position

    async def persist_turn(self, turn: TurnRecord) -> None:
        """The response row, its items and its conversation's new items: all, or nothing."""
        if turn.conversation_id is None:
            await self._insert_response(self.pool, turn)
            return
        async with self.pool.acquire() as connection, connection.transaction():
            await append_items_locked(
                connection, turn.tenant, turn.conversation_id, turn.input_items + turn.output_items,
                turn.response_id if turn.store_response else None, turn.lease_token,
            )
            if turn.store_response:
                await self._insert_response(connection, turn)

    @staticmethod
    async def _insert_response(connection: asyncpg.Pool | asyncpg.Connection, turn: TurnRecord) -> None:
        # One statement, so the fast path (no conversation) is one round trip.
        items = [("input", item_id, item) for item_id, item in turn.input_items]
        items += [("output", item_id, item) for item_id, item in turn.output_items]
        inserted = await connection.fetchval(
            _PERSIST_TURN_SQL,
            turn.tenant,
            turn.response_id,
            turn.previous_response_id,
            turn.model,
            turn.status,
            turn.response,
            list(range(len(items))),
            [kind for kind, _, _ in items],
            [item_id for _, item_id, _ in items],
            [item for _, _, item in items],
            turn.conversation_id,
        )
        if not inserted:
            raise Conflict(
                f"Response '{turn.response_id}' is already stored.", param="response_id", code="response_already_stored"
            )
