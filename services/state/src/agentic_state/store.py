"""Tenant-scoped queries over responses and their items. Nothing else touches the database."""

from __future__ import annotations

import asyncpg
from agentic_core.errors import Conflict, InvalidRequest, NotFound

from agentic_state.background import BackgroundStore
from agentic_state.conversations import Connection, raise_missing_or_locked
from agentic_state.records import ItemPage, StoredItems, TurnRecord


def _already_stored(response_id: str) -> Conflict:
    return Conflict(f"Response '{response_id}' is already stored.", param="response_id", code="response_already_stored")


def turn_arguments(turn: TurnRecord) -> tuple[object, ...]:
    """$1–$11 of both persist statements: the response row, then its items as parallel arrays."""
    items = [("input", item_id, item) for item_id, item in turn.input_items]
    items += [("output", item_id, item) for item_id, item in turn.output_items]
    return (
        turn.tenant, turn.response_id, turn.previous_response_id, turn.model, turn.status, turn.response,
        list(range(len(items))), [kind for kind, _, _ in items], [item_id for _, item_id, _ in items],
        [item for _, _, item in items], _views(turn.model_views, len(items)),
    )


def _views(model_views: list[str | None], count: int) -> list[str | None]:
    """One model view per item (None where the writer stored none)."""
    return model_views if len(model_views) == count else [None] * count


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
SELECT c.depth, c.previous_response_id, i.item, i.model_view
  FROM chain c LEFT JOIN response_items i ON i.tenant = $1 AND i.response_id = c.id
 ORDER BY c.depth DESC, i.position
"""

# $1–$11 (see `turn_arguments`): the response's items go in only when its row did.
_RESPONSE_ITEMS_CTE = """
    INSERT INTO response_items (tenant, response_id, position, kind, item_id, item, model_view)
    SELECT $1, $2, t.position, t.kind, t.item_id, t.item, t.model_view
      FROM unnest($7::integer[], $8::text[], $9::text[], $10::json[], $11::text[])
           AS t (position, kind, item_id, item, model_view)
     WHERE EXISTS (SELECT 1 FROM inserted)
"""

# A single statement is atomic: the items are written only when the response row was.
PERSIST_TURN_SQL = """
WITH inserted AS (
    INSERT INTO responses (tenant, id, previous_response_id, model, status, body, conversation_id, persist_digest)
    VALUES ($1, $2, $3, $4, $5, $6, $12, $13)
    ON CONFLICT DO NOTHING
    RETURNING 1
), items AS (""" + _RESPONSE_ITEMS_CTE + """)
SELECT count(*) FROM inserted
"""


# Whether this exact turn (response and items, byte for byte) is the one stored under its id.
_SAME_TURN_SQL = """
SELECT r.body::text = $3 AND coalesce((SELECT array_agg(i.item::text ORDER BY i.position) FROM response_items i
                                        WHERE i.tenant = $1 AND i.response_id = $2), '{}') = $4::text[]
  FROM responses r WHERE r.tenant = $1 AND r.id = $2
"""


# A turn on a conversation: the conversation takes the items (releasing the turn's lease) and, when
# the response is stored, the response row takes them too — one statement inside one transaction.
_PERSIST_CONVERSATION_TURN_SQL = """
WITH conversation AS (
    UPDATE conversations
       SET next_position = next_position + cardinality($15::text[]), revision = revision + 1,
           lease_token = NULL, lease_expires_at = NULL
     WHERE tenant = $1 AND id = $12 AND deleted_at IS NULL AND lease_token = $13
    RETURNING next_position - cardinality($15::text[]) AS start
), conversation_items_added AS (
    INSERT INTO conversation_items (tenant, conversation_id, position, item_id, item, response_id, visibility,
                                    linked_item_id, model_view)
    SELECT $1, $12, conversation.start + t.ordinality - 1, t.item_id, t.item, CASE WHEN $14 THEN $2 END, t.visibility,
           NULLIF(t.linked, ''), t.model_view
      FROM conversation, unnest($15::text[], $16::json[], $17::text[], $18::text[], $19::text[]) WITH ORDINALITY
           AS t (item_id, item, visibility, linked, model_view, ordinality)
), inserted AS (
    INSERT INTO responses (tenant, id, previous_response_id, model, status, body, conversation_id)
    SELECT $1, $2, $3, $4, $5, $6, $12 WHERE $14 AND EXISTS (SELECT 1 FROM conversation)
    ON CONFLICT DO NOTHING
    RETURNING 1
), items AS (""" + _RESPONSE_ITEMS_CTE + """)
SELECT EXISTS (SELECT 1 FROM conversation) AS appended, EXISTS (SELECT 1 FROM inserted) AS stored
"""


class StateStore:
    def __init__(self, pool: asyncpg.Pool, max_chain_depth: int) -> None:
        self.pool = pool
        self.max_chain_depth = max_chain_depth

    async def get_response(self, tenant: str, response_id: str, background: BackgroundStore | None = None) -> str:
        """The stored response; else, for a background response not stored (yet), its background row."""
        body: str | None = await self.pool.fetchval(
            "SELECT body FROM responses WHERE tenant = $1 AND id = $2 AND deleted_at IS NULL", tenant, response_id
        )
        if body is None and background is not None:
            try:
                return (await background.get(tenant, response_id)).body
            except NotFound:
                pass
        if body is None:
            raise _response_not_found(response_id)
        return body

    async def delete_response(self, tenant: str, response_id: str) -> None:
        # The row stays (without its body) so that later turns of the chain keep their history. A background
        # response's row goes with it, so the response cannot reappear through it.
        row = await self.pool.fetchrow(
            "WITH stored AS ("
            "  UPDATE responses SET deleted_at = now(), body = NULL"
            "   WHERE tenant = $1 AND id = $2 AND deleted_at IS NULL RETURNING 1"
            "), background AS (DELETE FROM background_responses WHERE tenant = $1 AND id = $2 RETURNING 1)"
            " SELECT EXISTS (SELECT 1 FROM stored), EXISTS (SELECT 1 FROM background)",
            tenant,
            response_id,
        )
        assert row is not None  # the SELECT always returns its one row
        if not row[0] and not row[1]:
            raise _response_not_found(response_id)

    async def rehydrate(self, tenant: str, previous_response_id: str) -> StoredItems:
        rows = await self.pool.fetch(_REHYDRATE_SQL, tenant, previous_response_id, self.max_chain_depth)
        if not rows:
            raise NotFound(f"Previous response with id '{previous_response_id}' not found.",
                           param="previous_response_id", code="previous_response_not_found")
        oldest = rows[0]
        if oldest["depth"] >= self.max_chain_depth and oldest["previous_response_id"] is not None:
            # Refused rather than cut: a silently shortened history would change what the model sees.
            raise InvalidRequest(
                f"This previous_response_id chain is longer than {self.max_chain_depth + 1} responses; "
                "continue from a conversation or start a new chain.",
                param="previous_response_id", code="chain_too_long",
            )
        stored = [row for row in rows if row["item"] is not None]
        return StoredItems([row["item"] for row in stored], [row["model_view"] for row in stored])

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
        connection: Connection, tenant: str, response_id: str, item_id: str | None, param: str
    ) -> int | None:
        if not item_id:
            return None
        position: int | None = await connection.fetchval(
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
        conversation_items = turn.conversation_items
        conversation_views = turn.conversation_model_views
        if conversation_items is None:
            conversation_items = [(item_id, item, "both", "") for item_id, item in turn.input_items + turn.output_items]
            conversation_views = turn.model_views
        async with self.pool.acquire() as connection, connection.transaction():
            row = await connection.fetchrow(
                _PERSIST_CONVERSATION_TURN_SQL, *turn_arguments(turn), turn.conversation_id, turn.lease_token,
                turn.store_response, [item_id for item_id, _, _, _ in conversation_items],
                [item for _, item, _, _ in conversation_items],
                [visibility or "both" for _, _, visibility, _ in conversation_items],
                [linked or "" for _, _, _, linked in conversation_items],
                _views(conversation_views, len(conversation_items)),
            )
            assert row is not None  # the SELECT always returns its one row
            if not row["appended"]:
                if turn.store_response and await self._stored_already(connection, turn):
                    return  # a retry of a persist that committed: the lease went with it
                await raise_missing_or_locked(connection, turn.tenant, turn.conversation_id)
            if turn.store_response and not row["stored"]:
                raise _already_stored(turn.response_id)  # rolls the conversation's new items back too

    @staticmethod
    async def _insert_response(connection: asyncpg.Pool | asyncpg.Connection, turn: TurnRecord) -> None:
        # One statement, so the fast path (no conversation) is one round trip. $12: llm-d's persist digest.
        inserted = await connection.fetchval(PERSIST_TURN_SQL, *turn_arguments(turn), turn.conversation_id, None)
        if not inserted and not await StateStore._stored_already(connection, turn):
            raise _already_stored(turn.response_id)

    @staticmethod
    async def _stored_already(connection: asyncpg.Pool | Connection, turn: TurnRecord) -> bool:
        """This very turn is stored: a retry whose first attempt committed after its caller gave up waiting.
        (`json` keeps the text it was given, so the same turn compares equal byte for byte.)"""
        items = [item for _, item in turn.input_items + turn.output_items]
        same: bool | None = await connection.fetchval(_SAME_TURN_SQL, turn.tenant, turn.response_id, turn.response, items)
        return bool(same)
